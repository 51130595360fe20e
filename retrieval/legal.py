"""Indonesian legal references: regulation names, numbers, years and article pointers.

Recognises the common written forms ("Undang-Undang Nomor 11 Tahun 2006", "UU No. 11/2006",
"Qanun Aceh Nomor 1 Tahun 2023", "Pasal 183 ayat (1) huruf b") and the OCR noise of the real corpus
(letter O for zero and l/I for one inside numbers and years: "2O2O", "l963"; "Undang- Undang" split by a
line wrap). Used for document identity, chunk citations and queries that name an article.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Canonical type code -> long Indonesian name used when formatting a reference.
TYPE_NAMES: dict[str, str] = {
    "UUD": "Undang-Undang Dasar",
    "UU": "Undang-Undang",
    "Perppu": "Peraturan Pemerintah Pengganti Undang-Undang",
    "PP": "Peraturan Pemerintah",
    "Perpres": "Peraturan Presiden",
    "Keppres": "Keputusan Presiden",
    "Inpres": "Instruksi Presiden",
    "Permen": "Peraturan Menteri",
    "Qanun": "Qanun",
    "Perda": "Peraturan Daerah",
    "Pergub": "Peraturan Gubernur",
    "Kepgub": "Keputusan Gubernur",
    "Perbup": "Peraturan Bupati",
    "Perwal": "Peraturan Wali Kota",
}

_HY = r"[\s\-‐‑–]*"  # "Undang-Undang", "Undang Undang", "Undang- Undang" (line wrap)
_STOP = r"(?!(?:Nomor|No|Nr|Tahun|Tentang|Republik)\b)"
_PLACE = rf"(?:{_STOP}[A-Z][\w'’]*(?:\s+{_STOP}[A-Z][\w'’]*){{0,3}})"
# Order matters: longer names first so "Peraturan Pemerintah Pengganti" wins over "Peraturan Pemerintah".
_TYPE_PATTERNS: list[tuple[str, str]] = [
    ("UUD", rf"Undang{_HY}Undang\s+Dasar(?:\s+Negara)?(?:\s+Republik\s+Indonesia)?"),
    ("Perppu", rf"Peraturan\s+Pemerintah\s+Pengganti\s+Undang{_HY}Undang|(?-i:Perppu|PERPPU|Perpu)"),
    ("UU", rf"Undang{_HY}Undang|(?-i:UU)"),
    ("PP", r"Peraturan\s+Pemerintah|(?-i:PP)"),
    ("Perpres", r"Peraturan\s+Presiden|(?-i:Perpres)"),
    ("Keppres", r"Keputusan\s+Presiden|(?-i:Keppres)"),
    ("Inpres", r"Instruksi\s+Presiden|(?-i:Inpres)"),
    ("Permen", rf"(?:Peraturan\s+Menteri|(?-i:Permen))(?P<ministry>\s+{_PLACE})?|(?-i:Permen\w+|PMK)"),
    (
        "Qanun",
        rf"Qanun(?P<qanun_place>\s+(?:Aceh|Provinsi\s+{_PLACE}|Kabupaten\s+{_PLACE}|Kota\s+{_PLACE}))?",
    ),
    (
        "Perda",
        rf"(?:Peraturan\s+Daerah|(?-i:Perda))(?P<perda_place>\s+(?:Provinsi|Kabupaten|Kota)\s+{_PLACE})?",
    ),
    ("Pergub", rf"(?:Peraturan\s+Gubernur|(?-i:Pergub))(?P<pergub_place>\s+{_PLACE})?"),
    ("Kepgub", rf"(?:Keputusan\s+Gubernur|(?-i:Kepgub))(?P<kepgub_place>\s+{_PLACE})?"),
    ("Perbup", rf"(?:Peraturan\s+Bupati|(?-i:Perbup))(?P<perbup_place>\s+{_PLACE})?"),
    ("Perwal", rf"(?:Peraturan\s+Wali\s*kota|(?-i:Perwal))(?P<perwal_place>\s+{_PLACE})?"),
]
_NUM = r"(?:\d|[lI](?=\d))[\dOoIl]*[A-Z]?"  # OCR: O for 0, l/I for 1 ("l2", "2O2O")
_YEAR = r"[\dOoIl]{4}"
_NUMBER_PART = (
    rf"(?:\s+(?:Republik\s+Indonesia|RI))?"
    rf"(?:\s*(?:Nomor|No|Nr)\s*[.:]?\s*(?P<number>{_NUM}(?:/[A-Z][\w.\-]*)*)(?:\s+(?-i:Prp|PRP))?"
    rf"(?:\s*,?\s*Tahun\s+(?P<year>{_YEAR})|\s*/\s*(?P<year_slash>{_YEAR}))?"
    rf"|\s+(?P<bare_number>\d+)\s*/\s*(?P<bare_year>{_YEAR})"
    rf"|\s+Tahun\s+(?P<only_year>{_YEAR}))"
)
_DOC_RE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(f"(?P<t_{code}>{pat})" for code, pat in _TYPE_PATTERNS)
    + ")"
    + _NUMBER_PART
    + r"(?![\w/])",
    re.IGNORECASE,
)
_PASAL_RE = re.compile(
    r"(?<![\w-])Pasal\s+(?P<pasal>\d+[A-Z]?)\b"
    r"(?:\s+ayat\s*\(?\s*(?P<ayat>\d+[a-z]?)\s*\)?)?"
    r"(?:\s+huruf\s+(?P<huruf>[a-z])\b)?",
    re.IGNORECASE,
)
# What may stand between "Pasal N ayat (x)" and the regulation it belongs to, or after the regulation.
_PASAL_THEN_DOC_GAP = re.compile(r"\s*,?\s*(?:(?:dari|dalam|pada|atas)\s+)?", re.IGNORECASE)
_DOC_THEN_PASAL_GAP = re.compile(r"\s*,?\s*")


@dataclass(frozen=True)
class LegalRef:
    """One reference found in text: a regulation (type, number, year), an article, or both.

    ``start``/``end`` are character offsets of the whole mention in the searched text."""

    doc_type: str | None
    number: str | None
    year: int | None
    pasal: str | None
    ayat: str | None
    huruf: str | None
    start: int
    end: int
    issuer: str | None = None  # "Aceh" for "Qanun Aceh", the ministry for "Peraturan Menteri Keuangan"

    @property
    def names_document(self) -> bool:
        return self.doc_type is not None and (self.number is not None or self.year is not None)

    def same_document(self, doc_type: str | None, number: str | None, year: int | None) -> bool:
        return (
            self.doc_type is not None
            and doc_type is not None
            and self.doc_type.casefold() == doc_type.casefold()
            and normalise_number(self.number) == normalise_number(number)
            and self.year == year
        )


_OCR_DIGITS = str.maketrans("OoIl", "0011")  # letters OCR reads for 0 and 1


def _ocr_digits(value: str) -> str:
    return value.translate(_OCR_DIGITS)


@functools.lru_cache(maxsize=8192)
def normalise_number(number: str | None) -> str | None:
    """Comparable form of a regulation number: OCR digits fixed, case and spaces folded. Cached: a named
    regulation is looked up by comparing it with every indexed document's number (5 ms a lookup uncached on
    the full corpus)."""
    if number is None:
        return None
    head, _, tail = number.partition("/")
    fixed = _ocr_digits(head).lstrip("0") or "0"
    return (fixed + ("/" + tail if tail else "")).replace(" ", "").upper()


def _year(value: str | None) -> int | None:
    if not value:
        return None
    digits = _ocr_digits(value)
    if not digits.isdigit() or sum(ch.isdigit() for ch in value) < 2:
        return None
    year = int(digits)
    return year if 1800 <= year <= 2100 else None


def normalise_issuer(place: str | None) -> str | None:
    if not place:
        return None
    place = " ".join(place.split())
    folded = place.casefold()
    if folded in {"aceh", "provinsi aceh", "provinsi nanggroe aceh darussalam", "nanggroe aceh darussalam"}:
        return "Aceh"
    return place


def _doc_match_fields(m: re.Match[str]) -> tuple[str, str | None, int | None, str | None]:
    code = next(c for c, _ in _TYPE_PATTERNS if m.group(f"t_{c}"))
    number = m.group("number") or m.group("bare_number")
    if number:
        head, sep, tail = number.partition("/")
        number = normalise_number(head) + (sep + tail if sep else "")  # type: ignore[operator]
    year = _year(m.group("year") or m.group("year_slash") or m.group("bare_year") or m.group("only_year"))
    issuer: str | None = None
    if code in ("UU", "Perppu", "PP", "Perpres", "Keppres", "Inpres", "UUD"):
        issuer = "Republik Indonesia"
    else:
        for group in (
            "ministry",
            "qanun_place",
            "perda_place",
            "pergub_place",
            "kepgub_place",
            "perbup_place",
            "perwal_place",
        ):
            value = m.groupdict().get(group)
            if value:
                issuer = normalise_issuer(value)
                break
        if code == "Permen" and issuer is None and m.group(0).upper().startswith("PMK"):
            issuer = "Keuangan"
    return code, number, year, issuer


def find_references(text: str) -> list[LegalRef]:
    """Every legal reference in ``text``, in order. An article followed (or preceded) by the regulation it
    belongs to ("Pasal 183 ayat (1) Undang-Undang Nomor 11 Tahun 2006", "UU 11/2006 Pasal 183") is one
    reference; a bare "Pasal 12" has no document fields; a regulation name without number or year is
    ignored (except the 1945 Constitution, which has only a year)."""
    docs: list[tuple[int, int, str, str | None, int | None, str | None]] = []
    for m in _DOC_RE.finditer(text):
        code, number, year, issuer = _doc_match_fields(m)
        if number is None and year is None:
            continue
        if number is None and code != "UUD" and m.group("only_year") is not None:
            continue  # "Undang-Undang Tahun 2006" is not a precise reference
        docs.append((m.start(), m.end(), code, number, year, issuer))
    pasals = [
        (m.start(), m.end(), m.group("pasal").upper(), m.group("ayat"), m.group("huruf"))
        for m in _PASAL_RE.finditer(text)
    ]

    refs: list[LegalRef] = []
    used_docs: set[int] = set()
    for p_start, p_end, pasal, ayat, huruf in pasals:
        attached = None
        for i, (d_start, d_end, *_rest) in enumerate(docs):
            if i in used_docs:
                continue
            if d_start >= p_end and _PASAL_THEN_DOC_GAP.fullmatch(text, p_end, d_start):
                attached = i
                break
            if d_end <= p_start and _DOC_THEN_PASAL_GAP.fullmatch(text, d_end, p_start):
                attached = i
                break
        if attached is None:
            refs.append(LegalRef(None, None, None, pasal, ayat, huruf, p_start, p_end))
            continue
        used_docs.add(attached)
        d_start, d_end, code, number, year, issuer = docs[attached]
        refs.append(
            LegalRef(code, number, year, pasal, ayat, huruf, min(p_start, d_start), max(p_end, d_end), issuer)
        )
    for i, (d_start, d_end, code, number, year, issuer) in enumerate(docs):
        if i not in used_docs:
            refs.append(LegalRef(code, number, year, None, None, None, d_start, d_end, issuer))
    refs.sort(key=lambda r: (r.start, r.end))
    return refs


def format_reference(
    doc_type: str | None,
    number: str | None = None,
    year: int | None = None,
    *,
    issuer: str | None = None,
    pasal: str | None = None,
    ayat: str | None = None,
    huruf: str | None = None,
    title: str | None = None,
) -> str | None:
    """Citation text, e.g. ``"Qanun Aceh Nomor 1 Tahun 2023, Pasal 12 ayat (3)"``. ``pasal`` may be a
    pre-formatted article part ("Penjelasan Pasal 5"); without a type the ``title`` names the document."""
    if doc_type:
        name = TYPE_NAMES.get(doc_type, doc_type)
        if issuer and doc_type not in ("UU", "Perppu", "PP", "Perpres", "Keppres", "Inpres", "UUD"):
            name = f"{name} {issuer}"
        if number:
            name += f" Nomor {number}"
        if year:
            name += f" Tahun {year}"
    else:
        name = title or ""
    article = format_article(pasal, ayat, huruf)
    if not name and not article:
        return None
    return ", ".join(part for part in (name, article) if part)


def format_article(pasal: str | None, ayat: str | None = None, huruf: str | None = None) -> str:
    if not pasal:
        return ""
    text = pasal if not pasal[:1].isdigit() else f"Pasal {pasal}"
    if ayat:
        text += f" ayat ({ayat})"
    if huruf:
        text += f" huruf {huruf}"
    return text


def format_ref(ref: LegalRef) -> str | None:
    return format_reference(
        ref.doc_type, ref.number, ref.year, issuer=ref.issuer, pasal=ref.pasal, ayat=ref.ayat, huruf=ref.huruf
    )


# Relation of a citing text to the regulation it names. Checked in this order; the first that applies wins.
RELATIONS = ("revokes", "amends", "as_amended", "legal_basis", "considers", "cites")
_REVOKE_BEFORE = re.compile(r"\bmencabut\b|\bpencabutan\b", re.IGNORECASE)
_REVOKE_AFTER = re.compile(r"\bdicabut\b|\bdinyatakan\s+tidak\s+berlaku\b", re.IGNORECASE)
_AS_AMENDED_BEFORE = re.compile(
    r"sebagaimana\s+telah\s+(?:beberapa\s+kali\s+)?diubah(?:\s+terakhir)?"
    r"(?:\s+dengan)?\s*$",
    re.IGNORECASE,
)
_AMEND_BEFORE = re.compile(r"\bmengubah\b|\bperubahan\s+(?:\w+\s+)?atas\b", re.IGNORECASE)
_AMEND_AFTER = re.compile(r"^[^.;]{0,160}?\bdiubah\s+sebagai\s+berikut", re.IGNORECASE)


def relation_of(text: str, ref: LegalRef, section: str | None = None) -> str:
    """How ``text`` relates to the regulation ``ref`` names: ``revokes`` ("mencabut", "... dicabut dan
    dinyatakan tidak berlaku"), ``amends`` ("mengubah", "Perubahan atas ..."), ``as_amended`` (named after
    "sebagaimana telah diubah dengan"), ``legal_basis`` (in the "Mengingat" part), ``considers`` (in
    "Menimbang") or ``cites``. ``section`` is the chunk's top section label."""
    clause_start = max(text.rfind(sep, 0, ref.start) for sep in (".", ";", "\n"))
    before = text[clause_start + 1 : ref.start]
    after_end = min(
        (i for i in (text.find(sep, ref.end) for sep in (";", "\n")) if i != -1), default=len(text)
    )
    after = text[ref.end : min(after_end, ref.end + 200)]
    if _REVOKE_BEFORE.search(before[-120:]) or _REVOKE_AFTER.search(after):
        return "revokes"
    if _AS_AMENDED_BEFORE.search(before):
        return "as_amended"
    if _AMEND_BEFORE.search(before[-80:]) or _AMEND_AFTER.search(after):
        return "amends"
    if section:
        folded = section.casefold()
        if folded.startswith("mengingat"):
            return "legal_basis"
        if folded.startswith("menimbang"):
            return "considers"
    return "cites"


_TITLE_SUBJECT = re.compile(r"\bTENTANG\b\s*(?P<subject>.+)", re.IGNORECASE | re.DOTALL)


def identity_from_title(title: str) -> tuple[str | None, str | None, int | None, str | None]:
    """(type, number, year, issuer) of the first regulation named in a title line, or all None."""
    for ref in find_references(title):
        if ref.doc_type and ref.doc_type != "UUD" and ref.number:
            return ref.doc_type, ref.number, ref.year, ref.issuer
    return None, None, None, None


def title_subject(title: str) -> str | None:
    m = _TITLE_SUBJECT.search(title)
    return " ".join(m.group("subject").split()) if m else None


# A corpus laid out as TYPE/YEAR/NUMBER.ext ("uu/2016/18.md", "pp/2019/12.md"): the path names the regulation.
_PATH_IDENTITY = re.compile(r"(?:^|/)(?P<type>[A-Za-z]+)/(?P<year>\d{4})/(?P<number>\d+[A-Za-z]?)\.\w+$")
_TYPE_CODES = {code.casefold(): code for code in TYPE_NAMES}


def identity_from_path(source: str) -> tuple[str, str, int] | None:
    """(type, number, year) a source path of the form TYPE/YEAR/NUMBER.ext names, or None. OCR breaks the
    number or year of a statute's title often enough ("NOMOR 1 8 TAHUN 2016") that such a path is the
    surer witness of which regulation a file holds."""
    m = _PATH_IDENTITY.search(source.replace("\\", "/"))
    if not m:
        return None
    code = _TYPE_CODES.get(m.group("type").casefold())
    year = int(m.group("year"))
    if code is None or not 1800 <= year <= 2100:
        return None
    return code, normalise_number(m.group("number")) or m.group("number"), year
