"""What a question asks: its content words (stemmed, weighted), the periods and article it names, the
document it names, and the kind of figure it wants. The planner and the embedded writer both read it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from language.bilingual import english_to_indonesian
from language.lexicon import ACRONYMS, BILINGUAL
from serve_app.agent.english_words import ENGLISH_FRAME, GENERAL_ENGLISH
from serve_app.agent.text import REGULATION_ID, content_terms, stem, words, years
from serve_app.agent.tools.table import detect_operation

QUESTION_WORDS = frozenset(
    "berapa berapakah apa apakah siapa siapakah kapan dimana mana bagaimana mengapa kenapa jelaskan sebutkan "
    "tunjukkan berikan uraikan ringkas ringkasan rangkum rangkuman isi mengenai terkait soal menurut saja "
    "uu undang pp perpu perppu perpres permen qanun perda pergub nomor pasal ayat huruf "
    "jumlah besar besaran nilai banyaknya sebesar "
    "was were is are be been the a an of in on at to for with by from as this that these those it its "
    "which who whom whose what when where how much many does do did under according there "
    # English function words and modals: they frame the question and no Indonesian statement holds them
    "must should shall may might go goes going after before long into onto than also only any all their its "
    "they them get gets got".split()
)
# Asking what a term means: these words frame the question ("Apa definisi X?", "what is meant by X"); no
# statement uses them, and counted as asked words they kept every definition below the writer's threshold.
DEFINITION_WORDS = frozenset(
    "definisi pengertian arti artinya definition definitions meaning define defined mean means meant".split()
)
# Words of a conversational frame around the question ("Kami ingin tahu …", "Could you tell me …"): they
# say nothing of what is asked.
FRAME_WORDS = frozenset(
    "ingin tahu mengetahui bertanya tanya please tell know want like would could can me you my".split()
)
# "… nilainya berapa?": the figure of what was just named, not a word to look for.
_BACK_REFERENCE = re.compile(r"(?i)\b(?:angka|besar|jumlah|nilai|total)nya\b")
WEAK_WORDS = frozenset("minimal maksimal paling batas tinggi rendah sedikit banyak lambat wajib".split())
SHARE_WORDS = frozenset("persen persentase proporsi porsi percent percentage share".split())
CHANGE_WORDS = frozenset(
    "naik turun kenaikan penurunan dibandingkan bertambah berkurang meningkat menurun selisih".split()
)
_ASKS_CHANGE = CHANGE_WORDS | frozenset(
    "perubahan berubah sebelum sesudah increase decrease change changed growth rise fall".split()
)
SUPERLATIVES = frozenset(
    "tertinggi terendah terbesar terkecil terbanyak tersedikit highest lowest largest smallest".split()
)
_ASKS_LIST = frozenset("sebutkan daftar meliputi terdiri macam berupa list".split())
_NAME_PREFIXES = frozenset("provinsi kabupaten kota kecamatan gampong desa kelurahan pt cv".split())
_GENERIC_NAMES = frozenset("aceh indonesia provinsi pemerintah besar tahun anggaran nomor tentang".split())
_DOC_WORDS = frozenset(
    "qanun pergub perda perpres permen pp uu undang peraturan gubernur keputusan laporan statistik aceh "
    "nomor tahun the of".split()
)
# General words the lexicons lack: English units of time and share words, and Indonesian budget synonyms
# (a budget table's ceiling column is its "pagu"). English terms of public finance and law come from the
# bilingual lexicon (language.bilingual), never from the words of a particular table.
_ENGLISH: dict[str, tuple[str, ...]] = {
    "daily": ("hari",),
    "day": ("hari",),
    "days": ("hari",),
    "month": ("bulan",),
    "months": ("bulan",),
    "year": ("tahun",),
    "years": ("tahun",),
    "rate": ("tingkat", "angka", "laju"),
    "percentage": ("persentase", "persen"),
    "anggaran": ("pagu",),
    "target": ("sasaran", "direncanakan"),  # a budget law states its targets as what is "direncanakan"
    "pagu": ("anggaran",),
    "persentase": ("persen",),
    "persen": ("persentase",),
}
_PASAL_ASKED = re.compile(r"(?i)\bPasal\s+(\d+[A-Z]?)\b")
_AYAT_ASKED = re.compile(r"(?i)\bayat\s*\((\d+[a-z]?)\)")
_REF_PARTS = re.compile(r"(?i)(?:Nomor|No\.?)\s*(\w+)\s+Tahun\s+(\d{4})|(\d+)\s*/\s*(\d{4})")
# "menurut Qanun …", and "dalam APBA 2023" (a budget law named by its acronym; "dalam Qanun X" is often
# only the rule an answer is measured against).
_NAMED_AFTER = re.compile(
    r"(?i)\b(?:menurut|berdasarkan|sesuai(?:\s+dengan)?|under|according\s+to|dalam(?=\s+(?:APB[A-Z]|lampiran)\b))"
    r"\s+([^,;?]+)"  # up to the comma ending the clause: "Under the Employment Qanun (Qanun 6/2029), how …"
)
FIGURES: dict[str, re.Pattern[str]] = {
    "percent": re.compile(
        r"\d[\d.,]*\s?(?:\([^)]*\)\s*)?(?:%|persen|per\s?seratus|perseratus)|\(%\)", re.IGNORECASE
    ),
    "duration": re.compile(r"\d+\s*(?:\([^)]*\)\s*)?(?:tahun|bulan|hari|minggu)\b", re.IGNORECASE),
    "times": re.compile(r"\d+\s*(?:\([^)]*\)\s*)?kali\b", re.IGNORECASE),
    "people": re.compile(r"\d[\d.]*\s*(?:\([^)]*\)\s*)?(?:orang|anggota|jiwa)\b", re.IGNORECASE),
    "money": re.compile(r"Rp\.?\s?\d", re.IGNORECASE),
    "rate": re.compile(r"Rp\.?\s?\d|\d[\d.,]*\s?(?:\([^)]*\)\s*)?(?:%|persen)", re.IGNORECASE),
    "number": re.compile(r"\d"),
}


@dataclass(frozen=True, slots=True)
class Term:
    """One asked word; ``alts`` are other ways to say it (each a tuple of words that must all appear)."""

    raw: str
    stem: str
    weight: float = 1.0
    alts: tuple[tuple[str, ...], ...] = ()
    acronym: bool = False  # written in capitals ("SMK"): may match the initials of the words it stands for


@dataclass(frozen=True, slots=True)
class Query:
    terms: list[Term]
    years: list[str]  # asked periods, never a regulation's own year
    figure: str | None  # the kind of figure asked for (FIGURES key)
    pasal: str | None = None
    ayat: str | None = None
    named_words: list[Term] = field(default_factory=list)  # "menurut Qanun Penyelenggaraan Pendidikan"
    # Asked words that only name the document ("menurut Qanun Pelestarian Rumah Adat" → pelestarian): a
    # statement of that document need not repeat its title.
    named_only: frozenset[str] = frozenset()
    named_ref: tuple[str, int] | None = None  # (number, year) of a regulation the question names
    names: list[Term] = field(default_factory=list)  # "Kabupaten Simeulue" → simeulue
    places: frozenset[str] = frozenset()  # words of a place named after "di"/"in" ("in Banda Aceh")
    asks_list: bool = False
    asks_change: bool = False
    asks_share: bool = False
    asks_extreme: bool = False  # the highest or lowest of something
    asks_definition: bool = False  # what a term means ("Apa definisi X?"): the sentence defining it answers


def _term(raw: str, weight: float = 1.0, acronym: bool = False) -> Term:
    words_for = BILINGUAL.get(raw, ()) + _ENGLISH.get(raw, ()) + GENERAL_ENGLISH.get(raw, ())
    alts: list[tuple[str, ...]] = [(w,) for w in dict.fromkeys(words_for)]
    alts += [tuple(p.split()) for p in english_to_indonesian(raw) if (p,) not in alts]
    if raw in ACRONYMS:
        alts.append(ACRONYMS[raw])
    return Term(raw, stem(raw), weight, tuple(alts), acronym and 2 <= len(raw) <= 5)


_ENGLISH_MARKERS = frozenset("the what which how is are was were of in for does do much many".split())


def search_query(query: str) -> str:
    """The query the search tool runs: an English question gets the Indonesian words of its terms added
    (the documents are Indonesian), so ``capital expenditure`` also looks for ``belanja modal``."""
    tokens = words(query)
    if sum(t in _ENGLISH_MARKERS for t in tokens) < 2:
        return query
    added = [w for t in analyse(query).terms for alt in t.alts for w in alt if w not in tokens]
    return " ".join([query, *dict.fromkeys(added)])


# How the documents state a figure of each kind: "direncanakan sebesar Rp…", "paling sedikit 30% (tiga puluh
# persen)". A search for the asked thing with these words finds the provision that states its amount.
_STATING_WORDS: dict[str, tuple[str, ...]] = {
    "money": ("sebesar",),
    "rate": ("sebesar",),
    "percent": ("persen",),
}


def statement_query(query: str) -> str | None:
    """A search for the sentence that states the asked figure: the question's content words (in Indonesian:
    an English word is replaced by the lexicon's Indonesian words), the regulation it names, the asked
    years and the words a figure of the asked kind is stated with; None when no figure is asked.

    The question itself ranks the provisions that repeat its words ("anggaran … ditetapkan dalam APBN") above
    the one that states the amount, since every article of a budget law speaks of the budget."""
    q = analyse(query)
    if q.figure is None or not q.terms:
        return None
    english = sum(t in _ENGLISH_MARKERS for t in words(query)) >= 2
    parts = [m.group(0) for m in REGULATION_ID.finditer(query)]
    for t in q.terms:
        parts += list(t.alts[0]) if english and t.alts else [t.raw]
    parts += q.years
    parts += _STATING_WORDS.get(q.figure, ())
    return " ".join(dict.fromkeys(parts))


def expected_figure(query: str) -> str | None:
    tokens = words(query)
    text = " ".join(tokens)
    if any(t in SHARE_WORDS or t == "bobot" for t in tokens) or "%" in query:
        return "percent"
    if "tarif" in tokens:
        return "rate"
    if "berapa lama" in text or any(t in ("umur", "usia", "jangka", "masa") for t in tokens):
        return "duration"
    if "berapa kali" in text:
        return "times"
    if "berapa orang" in text or "jumlah anggota" in text or "berapa anggota" in text:
        return "people"
    money_words = frozenset(
        "anggaran dana alokasi pagu penerimaan belanja pendapatan biaya rp defisit surplus realisasi modal "
        "subsidi pajak perpajakan cukai retribusi hibah transfer pembiayaan gaji upah tunjangan honorarium "
        "fee budget cost revenue spending expenditure tax subsidy fund funds allocation money rupiah".split()
    )
    if any(t in money_words for t in tokens) and any(
        t in ("berapa", "jumlah", "besar", "nilai", "target", "how", "total") for t in tokens
    ):
        return "money"
    if any(t in ("berapa", "jumlah", "besaran") for t in tokens) or "how much" in text or "how many" in text:
        return "number"
    return None


def _names(query: str) -> list[Term]:
    found: list[Term] = []
    tokens = re.findall(r"[A-Za-z][\w-]*", query)
    for i, token in enumerate(tokens[:-1]):
        if token.lower() not in _NAME_PREFIXES or not token[0].isupper():
            continue
        for word in tokens[i + 1 : i + 4]:
            if not word[0].isupper():
                break
            if word.lower() not in _GENERIC_NAMES and word.lower() not in _NAME_PREFIXES:
                found.append(_term(word.lower()))
    return list({t.raw: t for t in found}.values())


_PLACE = re.compile(r"\b(?:di|in|at)\s+((?:[A-Z][a-z]+\s*){1,3})")


def _places(query: str) -> frozenset[str]:
    """Words of the places the question names after a preposition ("di Banda Aceh", "in Banda Aceh"): where
    the asked thing is, never the thing itself."""
    return frozenset(w for m in _PLACE.finditer(query) for w in words(m.group(1)))


def _named_document(m: re.Match[str] | None) -> list[Term]:
    """The words of the document named after "menurut"/"under" (``m``: ``_NAMED_AFTER``'s match)."""
    if m is None:
        return []
    out: list[Term] = []
    for word in words(_PASAL_ASKED.sub(" ", REGULATION_ID.sub(" ", m.group(1)))):
        if word in _DOC_WORDS or word in QUESTION_WORDS or word[0].isdigit():
            continue
        out.append(_term(word))
        if len(out) == 4:
            break
    return out


def analyse(query: str) -> Query:
    """What ``query`` asks: its words (without question words, the regulation it names, what to compute),
    its periods, the article and the document it names, names of places or companies, the kind of figure."""
    from serve_app.agent.tools.table import OPERATION_WORDS  # a late import keeps the two modules independent

    operation_terms = {w for ws in OPERATION_WORDS.values() for w in ws}
    topic = _BACK_REFERENCE.sub(" ", REGULATION_ID.sub(" ", query))
    tokens = words(query)
    asks_definition = any(t in DEFINITION_WORDS for t in tokens) or "what is meant" in " ".join(tokens)
    asked_years = years(topic)
    pasal = _PASAL_ASKED.search(query)
    ayat = _AYAT_ASKED.search(query)
    numbers = {g for g in (pasal and pasal.group(1), ayat and ayat.group(1)) if g}
    capitals = {w.lower() for w in re.findall(r"\b[A-Z]{2,5}\b", topic)}
    terms = [
        _term(raw, 0.3 if raw in WEAK_WORDS else 1.0, raw in capitals)
        for raw in content_terms(topic)
        if raw not in QUESTION_WORDS and raw not in FRAME_WORDS and raw not in ENGLISH_FRAME
        and raw not in operation_terms
        and raw not in asked_years and raw.lower() not in {n.lower() for n in numbers}
        and not (asks_definition and raw in DEFINITION_WORDS)
    ]
    named_at = _NAMED_AFTER.search(query)
    named_words = _named_document(named_at)
    before_named = set(content_terms(query[: named_at.start(1)])) if named_at else set()
    ref = _REF_PARTS.search(query)
    named_ref = None
    if ref is not None:
        number, year = (ref.group(1), ref.group(2)) if ref.group(1) else (ref.group(3), ref.group(4))
        named_ref = (number, int(year))
    return Query(
        terms=terms,
        years=asked_years,
        figure=expected_figure(query),
        pasal=pasal.group(1) if pasal else None,
        ayat=ayat.group(1) if ayat else None,
        named_words=named_words,
        named_only=frozenset(t.raw for t in named_words if t.raw not in before_named),
        named_ref=named_ref,
        names=_names(query),
        places=_places(query),
        asks_list=any(t in _ASKS_LIST for t in tokens) or "apa saja" in " ".join(tokens)
        or "what are" in " ".join(tokens),
        asks_change=any(t in _ASKS_CHANGE for t in tokens),
        asks_share=any(t in SHARE_WORDS for t in tokens) or "%" in query,
        asks_extreme=detect_operation(query) in ("top", "bottom") or any(t in SUPERLATIVES for t in tokens),
        asks_definition=asks_definition,
    )


def query_terms(query: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(raw word, stem) of the words that say what is asked, and the asked years (not a regulation's)."""
    q = analyse(query)
    return [(t.raw, t.stem) for t in q.terms], q.years
