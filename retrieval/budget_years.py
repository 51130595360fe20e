"""Which state-budget law a question asks for: fiscal year and kind, matched by document identity.

The APBN law of fiscal year Y is enacted in year Y-1 and its title names the APBN of "Tahun Anggaran Y"; the
revision ("Perubahan atas ...", APBN-P) of the same fiscal year is enacted in Y, and the accountability law
("Pertanggungjawaban atas Pelaksanaan ...") in Y+1. A question that says "APBN 2031", "APBN-P 2031", "Tahun
Anggaran 2031 sesudah APBN direvisi", "the revised 2031 budget" or "the 2031 budget as it was first passed"
names one of these laws by its title year and kind, not by the year in its number or its file path, so text
match alone returns the laws of neighbouring years (each repeats the same words).

:class:`BudgetLaws` reads every indexed title once and answers, for a question, the documents of the asked
fiscal year: tier 2 for the asked kind, tier 1 for the other kinds of that year. A question that names a
regional budget (APBA, APBD, a province's budget) or no fiscal year asks for none of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

ORIGINAL = "original"
REVISED = "revised"
ACCOUNTABILITY = "accountability"

_YEAR = r"[12][\dOoIl]{3}"  # OCR reads O for 0 and l/I for 1 in the scanned titles ("2O16")
_OCR = str.maketrans("OoIl", "0011")
_APBN_TITLE = re.compile(
    r"(?:ANGGARAN\s+(?:DAN\s+)?PENDAPATAN\s+(?:DAN\s+)?BELANJA\s+NEGARA|PERHITUNGAN\s+ANGGARAN\s+NEGARA)"
    rf"\s+(?:UNTUK\s+)?TAHUN\s+(?:ANGGARAN\s+)?(?P<year>{_YEAR})"
    # the gazette's heading: "No.189, 2031 KEUANGAN. APBN. Tahun 2030. Pertanggungjawaban."
    rf"|\bKEUANGAN(?:\s+NEGARA)?\.(?:\s+\w+\.){{0,2}}\s+APBN\.\s+(?:Tahun\s+)?(?P<gazette_year>{_YEAR})\b",
    re.IGNORECASE,
)
_TITLE_ACCOUNTABILITY = re.compile(r"PERTANGGUNG\s*JAWABAN|PERHITUNGAN\s+ANGGARAN", re.IGNORECASE)
_TITLE_REVISED = re.compile(r"\b(?:PERUBAHAN|PEROBAHAN|TAMBAHAN)\b", re.IGNORECASE)

# A question about the national budget: its names in Indonesian and English.
_NATIONAL = re.compile(
    r"\bAPBN(?:-?P)?\b|Anggaran\s+Pendapatan\s+dan\s+Belanja\s+Negara|\b(?:state|national)\s+budget",
    re.IGNORECASE,
)
# A budget word without "national": the fiscal year alone ("Tahun Anggaran 2006", "the 2015 budget").
_BUDGET = re.compile(r"\btahun\s+anggaran\b|\bbudget\b|\banggaran\b", re.IGNORECASE)
# A regional budget is another document family (the APBA table, provincial APBD): never the APBN law.
_REGIONAL = re.compile(
    r"\bAPB[AD]\b|\bAPBD-?P\b|\b(?:provincial|regional|district|city)\s+budget|\banggaran\s+pendapatan\s+"
    r"dan\s+belanja\s+(?:daerah|aceh)\b|\bQanun\b",
    re.IGNORECASE,
)
# The fiscal year written next to a budget word: "APBN 2011", "APBN-P 2015", "APBN Perubahan Tahun 2014",
# "Tahun Anggaran 2009", "anggaran 2016"; in English "the 2016 state budget", "revised 2014 budget".
_YEAR_AFTER = re.compile(
    r"(?:\bAPBN(?:-?P)?|Belanja\s+Negara|\banggaran|\bbudget)(?:\s+(?:perubahan|revisi|induk|murni|tahun|"
    r"anggaran|for|of|year|fiscal|the))*\s+(?P<year>(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
_YEAR_BEFORE = re.compile(
    r"\b(?P<year>(?:19|20)\d{2})(?:\s+(?:state|national|revised|amended|original|initial|fiscal|budget))*"
    r"\s+(?:budget|APBN)\b",
    re.IGNORECASE,
)
_ANY_YEAR = re.compile(r"(?<![\d/.,])(?P<year>(?:19|20)\d{2})(?![\d/.,])")
# Which law of the year: its revision, its accountability law, or the budget as first enacted.
_ASK_ACCOUNTABILITY = re.compile(
    r"pertanggung\s*jawaban|\brealisasi\b|\baccountability\b|\brealis(?:ed|ation)\b|\bactual\b", re.IGNORECASE
)
_ASK_REVISED = re.compile(
    r"\bAPBN-?P\b|\bAPBN\s+Perubahan\b|\bperubahan\b|\bdiubah\b|\bdirevisi\b|\brevisi\b|\brevised?\b|"
    r"\bamended\b|\bamendment\b|\brevision\b",
    re.IGNORECASE,
)
_ASK_ORIGINAL = re.compile(
    r"first\s+enacted|\boriginal\b|\binitial\b|\binduk\b|\bmurni\b"
    r"|\bsebelum\s+(?:ada\s+)?(?:perubahan|revisi|direvisi|diubah)\b"  # "APBN 2031 sebelum perubahan"
    r"|\bbefore\s+(?:the\s+|it\s+was\s+|its\s+)?(?:revision|amendment|revised|amended)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class BudgetLaw:
    """A state-budget law's identity: the fiscal year its title names and which law of that year it is."""

    fiscal_year: int
    kind: str


@dataclass(frozen=True)
class BudgetAsk:
    fiscal_year: int
    kind: str


def law_of_title(title: str) -> BudgetLaw | None:
    """The APBN law a title names, or None. The fiscal year is the one the APBN phrase carries (an amending
    law's title also holds the number and enactment year of the law it amends: "... Nomor 14 Tahun 2015
    tentang APBN Tahun Anggaran 2016" is fiscal year 2016)."""
    m = _APBN_TITLE.search(title)
    if m is None:
        return None
    year = int((m.group("year") or m.group("gazette_year")).translate(_OCR))
    head = title[: m.start()]
    if _TITLE_ACCOUNTABILITY.search(title):
        kind = ACCOUNTABILITY
    elif _TITLE_REVISED.search(title if m.group("gazette_year") else head):
        kind = REVISED
    else:
        kind = ORIGINAL
    return BudgetLaw(year, kind)


def _fiscal_year(question: str) -> int | None:
    for pattern in (_YEAR_AFTER, _YEAR_BEFORE):
        years = {int(m.group("year")) for m in pattern.finditer(question)}
        if len(years) == 1:
            return years.pop()
        if years:
            return None  # two budget years asked together: no single law is the answer
    years = {int(m.group("year")) for m in _ANY_YEAR.finditer(question)}
    return years.pop() if len(years) == 1 else None


def names_national_budget(question: str) -> bool:
    """The question names the state budget itself ("APBN", "state budget"), not only a fiscal year."""
    return _NATIONAL.search(question) is not None


def budget_ask(question: str) -> BudgetAsk | None:
    """The state-budget law ``question`` asks for, or None when it asks for none (no budget word, a regional
    budget, no single fiscal year). The caller leaves out questions that name a regulation by its number."""
    national = names_national_budget(question)
    if not national and (_REGIONAL.search(question) or not _BUDGET.search(question)):
        return None
    if not national and re.search(r"\bAceh\b", question, re.IGNORECASE):
        return None  # "Aceh's 2025 budget" is the APBA, not a national law
    year = _fiscal_year(question)
    if year is None:
        return None
    if _ASK_ACCOUNTABILITY.search(question):
        kind = ACCOUNTABILITY
    elif _ASK_REVISED.search(question) and not _ASK_ORIGINAL.search(question):
        kind = REVISED
    else:
        kind = ORIGINAL
    return BudgetAsk(year, kind)


class BudgetLaws:
    """The state-budget laws of an index, by document id, read from their titles."""

    def __init__(self, titles: Mapping[str, str]) -> None:
        self._laws = {doc: law for doc, title in titles.items() if (law := law_of_title(title)) is not None}

    def __len__(self) -> int:
        return len(self._laws)

    def law(self, document_id: str) -> BudgetLaw | None:
        return self._laws.get(document_id)

    def tiers(self, question: str) -> dict[str, int]:
        """Document id -> 2 (the asked fiscal year and kind) or 1 (that year, another kind); empty when the
        question asks for no state-budget law or the index holds none of that year."""
        ask = budget_ask(question)
        if ask is None:
            return {}
        return {
            doc: 2 if law.kind == ask.kind else 1
            for doc, law in self._laws.items()
            if law.fiscal_year == ask.fiscal_year
        }
