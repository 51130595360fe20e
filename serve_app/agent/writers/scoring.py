"""Scoring of the units against the question (see :mod:`serve_app.agent.writers.units` for the rules): the
question's words weighted by rarity, where each is found, the asked period, article, named document and
kind of figure."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence

from retrieval.querying import is_english
from serve_app.agent.query import CHANGE_WORDS, FIGURES, SUPERLATIVES, Query, Term, analyse
from serve_app.agent.text import STOPWORDS, stem, title_acronyms, words
from serve_app.agent.writers.units import CELL_STOPWORDS, VERB_LIKE, Bag, Unit


def _period_factor(u: Unit, asked: list[str]) -> tuple[float, float] | None:
    """(score factor, coverage factor) for the asked years; None when the unit speaks of another period."""
    levels = [lvl for lvl in u.periods if lvl]
    if not levels:
        return 0.6, 1.0  # no period anywhere: it may hold for any year (a regulation in force)
    if not any(y in levels[0] for y in asked):
        if any(y in lvl for lvl in levels[1:] for y in asked):
            return 0.75, 1.0  # "selesai pada Januari 2024" in the 2023 report: another year in passing
        return None
    level = next(i for i, lvl in enumerate(u.periods) if lvl)
    deeper = [lvl for lvl in u.periods[level + 1 :] if lvl]
    if level <= 1 and deeper and not any(y in lvl for lvl in deeper for y in asked):
        return 0.7, 1.0  # "dibandingkan dengan Tahun Anggaran 2023" in the 2024 budget
    # the year multiplies what matched, never stands alone
    return (1.5, 1.25) if level <= 1 else (1.4, 1.2)


# A statement that defines a term: "1. Data X adalah …", "Yang dimaksud dengan X adalah …", "X means …";
# ``head`` is the defined term.
_DEFINES = re.compile(
    r"^\s*(?:(?:\d{1,3}|[a-z])[.)]\s*|\(\d{1,3}\)\s*)?(?:yang\s+dimaksud\s+dengan\s+)?"
    r"[\"'“]?(?P<head>[^.,;:()\"”]{2,80}?)[\"'”]?\s+(?:adalah|ialah|yaitu|yakni|merupakan|means|is)\b",
    re.IGNORECASE,
)


def _definition_factor(u: Unit, q: Query) -> float:
    """How well the unit defines what the question asks to define: 2.5 when its defined term is exactly the
    asked one ("Rumah Adat adalah …" for "definisi Rumah Adat"), 1.3 when it is a longer term holding
    it ("Pelestarian Rumah Adat adalah …"), else 1 (the words naming the document are not the term)."""
    m = _DEFINES.match(u.own_text)
    if m is None or len(m.group("head").split()) > 6:
        return 1.0
    asked = [t for t in q.terms if t.raw not in q.named_only] or q.terms
    head = Bag.of(m.group("head"))
    if not all(head.has_term(t) for t in asked):
        return 1.0
    head_words = [w for w in words(m.group("head")) if w not in STOPWORDS]
    exact = all(any(Bag.of(w).has_term(t) for t in asked) for w in head_words)
    return 2.5 if exact else 1.3


def _names_document(u: Unit, q: Query) -> bool:
    if q.named_ref is not None and u.document_ref[0] is not None:
        number, year = q.named_ref
        return str(u.document_ref[0]) == number and u.document_ref[1] == year
    if not q.named_words:
        return False
    bag = Bag.of(u.document, title_acronyms(u.document))
    return all(bag.has_term(t) for t in q.named_words)


def score_units(query: str, units: list[Unit]) -> Query:
    """Score every unit against ``query`` (``unit.score``, ``unit.coverage``); returns what was asked."""
    q = analyse(query)
    terms = q.terms
    n = len(units) or 1
    # Rarity among the statements themselves: a word of the documents' titles ("Anggaran Pendapatan dan
    # Belanja Negara") is found around every unit of a budget law, and counting it there made it weigh
    # nothing, so a statement that says "Pendapatan Negara … sebesar Rp…" lost to one that only repeats
    # another asked word. A word no statement uses is counted where it is found (title, section).
    stated = Counter(t.raw for u in units for t in terms if u.own.has_term(t) or u.lead_bag.has_term(t))
    anywhere = Counter(t.raw for u in units for t in terms if u.around.has_term(t))
    df = {t.raw: stated[t.raw] or anywhere[t.raw] for t in terms}
    idf = {t.raw: math.log((n + 1) / (df[t.raw] + 0.5)) + 0.1 for t in terms}
    # A word no unit uses weighs like the rarest word some unit uses: it still lowers coverage (the asked
    # entity may be missing) without drowning every other word.
    cap = max((idf[t.raw] for t in terms if df[t.raw]), default=1.0)
    weight = {t.raw: min(idf[t.raw], cap) * t.weight for t in terms}
    english = is_english(query)
    for t in terms:
        if not df[t.raw]:
            # A noun no passage uses is the asked thing itself missing ("inflation"): it weighs double;
            # a verb the passages phrase otherwise ("memenuhi") weighs half. A lowercase English word no
            # lexicon translates is how the question phrases it, not a missing thing: it weighs a quarter
            # (a name the question capitalises, "Kartu X", still weighs double).
            if english and not t.alts and not _capitalised(t.raw, query):
                weight[t.raw] *= 0.25
            else:
                weight[t.raw] *= 0.5 if VERB_LIKE.match(t.raw) else 2.0
    article = (max(weight.values(), default=1.0) * 1.5) if q.pasal else 0.0
    total = (sum(weight.values()) + article) or 1.0
    named_docs = {u.document for u in units if _names_document(u, q)}
    title_bags = {d: Bag.of(d, title_acronyms(d)) for d in named_docs}
    # The asked thing as the question names it, word after word ("subsidi listrik", "pendapatan negara"): a
    # statement that names it so beats one where the same words only occur apart.
    # The pairs come from the question's own word order too: its terms are deduplicated, so in "Pajak
    # Daerah dan Retribusi Daerah" the terms alone would pair "retribusi" with the next new word and miss
    # the second line.
    phrases = {(a.stem, b.stem) for a, b in zip(terms, terms[1:])} | _stem_pairs(query)
    for u in units:
        matched = 0.0
        topic = False  # the unit names something asked besides the place ("Ditetapkan di Banda Aceh …")
        # In the document the question names, what its title says is said by every statement of it
        # ("target pendapatan retribusi pada APBK 2031 (Qanun …)": the budget qanun need not repeat "APBK").
        title = title_bags[u.document] if u.document in named_docs else None
        for t in terms:
            if u.own.has_term(t) or u.lead_bag.has_term(t):
                topic = topic or t.raw not in q.places
            if u.own.has_term(t) or (title is not None and (t.raw in q.named_only or title.has_term(t))):
                matched += weight[t.raw]
            elif u.lead_bag.has_term(t):
                matched += 0.8 * weight[t.raw]
            elif u.around.has_term(t):
                matched += 0.5 * weight[t.raw]
            elif u.before.has_term(t):
                matched += 0.25 * weight[t.raw]
        if q.pasal and u.pasal == q.pasal:
            matched += article * (0.4 if q.ayat and u.ayat and u.ayat != q.ayat else 1.0)
        if not topic and q.places and not (q.pasal and u.pasal == q.pasal):
            matched = 0.0
        score = matched
        u.coverage = matched / total if (terms or q.pasal) else 0.0
        for name in q.names:
            if not any(bag.has_term(name) for bag in (u.own, u.lead_bag, u.around, u.before)):
                u.coverage *= 0.5  # "Kabupaten Simeulue": a unit that does not name it answers another entity
        states_figure = q.figure is None or bool(FIGURES[q.figure].search(u.own_text))
        if q.years:
            period = _period_factor(u, q.years)
            undated = not any(u.periods)
            # An amount in a dated regulation that no year dates is a standing rate, no year's budget; in the
            # document the question names, or one whose own number and year cannot be read (OCR), it may be.
            dated_document = u.document_ref[1] is not None
            standing = undated and q.figure == "money" and dated_document and u.document not in named_docs
            if period is None or (undated and not states_figure) or standing:
                # another period; or no period and not the figure asked for: "anggaran 2021" is not
                # answered by a rule on budgets that states no amount
                u.score, u.coverage = 0.0, 0.0
                continue
            factor, cover = period
            score *= factor
            u.coverage = min(1.0, u.coverage * cover)
        if u.document in named_docs:
            score *= 1.4
        if q.figure is not None:
            if states_figure:
                score *= 1.5
            elif FIGURES["number"].search(u.own_text):
                score *= 0.7
            else:
                score *= 0.5
        if u.kind == "row":
            u.label_match = _label_match(u, terms)
            score *= 0.4 + 0.6 * u.label_match
        if q.asks_definition:
            score *= _definition_factor(u, q)  # "X adalah …" answers "what is X"; provisions using X do not
        if q.asks_extreme and any(w in SUPERLATIVES for w in u.own.words):
            score *= 1.5  # "paling rendah": the sentence that names the lowest beats the rows to compare
        if not q.asks_change and any(w in CHANGE_WORDS for w in u.own.words):
            score *= 0.75  # "naik sebesar Rp62 miliar" answers how much it grew, not how much it is
        named = len(phrases & _stem_pairs(u.own_text))
        if named:
            score *= 1.0 + 0.3 * min(named, 2)
        if len(u.text) > 500:
            score *= 0.8
        u.score = score
    return q


def _capitalised(raw: str, query: str) -> bool:
    """``raw`` is written with a capital in ``query`` (a name, an acronym)."""
    return any(w[:1].isupper() for w in re.findall(r"[\w-]+", query) if w.lower() == raw)


@functools.lru_cache(maxsize=65536)
def _stem_pairs(text: str) -> frozenset[tuple[str, str]]:
    """Neighbouring content words of a text, stemmed (function words skipped: "Transfer ke Daerah")."""
    stems = [stem(w) for w in words(text) if w not in STOPWORDS and not w[0].isdigit()]
    return frozenset(zip(stems, stems[1:]))


def _label_match(u: Unit, terms: Sequence[Term]) -> float:
    """How exactly the question names this row: the share of its best-named cell's words that are asked
    ("Perawat" for "jumlah perawat": 1; "Kota Banda Aceh" for "di Aceh": 1/3)."""
    best = 0.0
    for cell in u.text.split("|"):
        cell_words = [w for w in words(cell) if not w[0].isdigit() and w not in CELL_STOPWORDS]
        if not cell_words:
            continue
        bag = Bag.of(cell)
        named = sum(any(Bag.of(w).has_term(t) for t in terms) for w in cell_words)
        if named and any(bag.has_term(t) for t in terms):
            best = max(best, named / len(cell_words))
    return best


def missing_names(q: Query, units: Sequence[Unit]) -> list[str]:
    """Names the question asks about that no passage mentions at all (``Simeulue``)."""
    return [
        t.raw
        for t in q.names
        if not any(bag.has_term(t) for u in units for bag in (u.own, u.lead_bag, u.around))
    ]
