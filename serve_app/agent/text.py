"""Small Indonesian text helpers shared by the planner, the tools and the embedded writer: word tokens,
stopwords, years, and reading and writing numbers in Indonesian notation (``5.000.000,00``)."""

from __future__ import annotations

import functools
import re
from decimal import ROUND_HALF_UP, Decimal

import Stemmer

WORD = re.compile(r"[0-9A-Za-zÀ-ÖØ-öø-ÿ]+(?:[.,][0-9]+)*")
YEAR = re.compile(r"(?<![\d.,])(?:19|20)\d{2}(?![\d.,]*\d)")
# "Nomor 11 Tahun 2006", "UU 11/2006": a regulation's own year, never a period a text speaks of.
REGULATION_ID = re.compile(
    r"(?i)\b(?:(?:UU|PP|Perpu|Perppu|Perpres|Permen\w*|Qanun(?:\s+Aceh)?|Perda|Pergub|Undang-Undang)\s*)?"
    r"(?:(?:Nomor|No\.?)\s*[\w./-]+\s+Tahun\s+\d{4}|\d+\s*/\s*\d{4})"
)
AMOUNT = re.compile(
    r"(?:Rp\.?\s?\d|\d[\d.,]*\s?(?:ribu|juta|miliar|milyar|triliun|persen|%)|\d{1,3}(?:\.\d{3}){2,})",
    re.IGNORECASE,
)

STOPWORDS = frozenset(
    """
    ada adalah agar akan aku anda apa apakah atas atau bagaimana bagi bahwa baik banyak beberapa begitu belum
    berapa berapakah berikan bisa boleh cara coba dalam dan dapat dari demikian dengan di dia ditetapkan
    diatur dokumen harus hal hanya ini itu jadi jelaskan jika juga kah kalau kami kamu kan karena ke kepada
    ketika lagi lain maka mana masih maupun mau melalui memang menjadi menurut mereka misalnya mohon nya
    oleh pada para per perlu pun saat saja sampai sangat saya se sebagai sebagaimana sebuah secara sedang
    seperti serta sesuai setelah setiap siapa sebutkan sudah supaya tadi tahun tanpa tentang terhadap tersebut
    tertentu tolong untuk yaitu yakni yang dimaksud bagaimanakah apa saja disebutkan tercantum isi
    the of and what is how
    """.split()
)

_SUFFIXES = ("nya", "lah", "kah")
_STEMMER = Stemmer.Stemmer("indonesian")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (numbers keep their separators: ``5.000,00`` is one token)."""
    return [w.lower() for w in WORD.findall(text)]


def content_terms(text: str) -> list[str]:
    """Words that carry meaning: no stopwords, no particles, at least two characters, in order, unique."""
    seen: dict[str, None] = {}
    for w in words(text):
        for suffix in _SUFFIXES:
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        if len(w) >= 2 and w not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)


def years(text: str) -> list[str]:
    return list(dict.fromkeys(YEAR.findall(text)))


def period_years(text: str) -> list[str]:
    """The years a text speaks of as periods, never a regulation's own (``Nomor 1 Tahun 2023``)."""
    return list(_period_years(text))


@functools.lru_cache(maxsize=65536)
def _period_years(text: str) -> tuple[str, ...]:
    # The writer asks this of every line of every passage shown, and the same passages come back often.
    return tuple(years(REGULATION_ID.sub(" ", text)))


_ACRONYM_SKIP = frozenset({"dan", "atau", "serta", "dalam", "di", "ke", "dari", "untuk", "and", "of", "the"})


def title_acronyms(title: str) -> list[str]:
    """Acronyms a title's capitalised word runs make (``Anggaran Pendapatan dan Belanja Aceh`` → ``apba``),
    so a question that says APBA finds the document that spells it out."""
    out: list[str] = []
    run: list[str] = []
    for word in [*re.findall(r"[A-Za-z][A-Za-z/-]*", title), "."]:
        if word[0].isupper():
            run.append(word[0].lower())
            continue
        if word.lower() in _ACRONYM_SKIP and run:
            continue
        for i in range(len(run)):
            for j in range(i + 3, min(len(run), i + 6) + 1):
                out.append("".join(run[i:j]))
        run = []
    return list(dict.fromkeys(out))


def has_amount(text: str) -> bool:
    return AMOUNT.search(text) is not None


def term_matches(term: str, word: str) -> bool:
    """A term matches a word exactly, or as a prefix for longer terms (``pendidik`` ~ ``pendidikan``)."""
    if term == word:
        return True
    return len(term) >= 5 and len(word) >= 5 and (word.startswith(term) or term.startswith(word))


def parse_number(cell: str) -> float | None:
    """A number written the Indonesian way (``Rp5.000.000,00``, ``12,5%``) or the machine way
    (``2859122172935.0``); None when the cell is not one number."""
    s = cell.strip().replace("Rp", "").replace("rp", "").replace("%", "").replace(" ", "").strip(".")
    if not s or not re.fullmatch(r"[-+]?[\d.,]+", s) or not any(ch.isdigit() for ch in s):
        return None
    if "," in s and "." in s:
        if s.rfind(",") > s.rfind("."):  # 5.000.000,00
            s = s.replace(".", "").replace(",", ".")
        else:  # 5,000,000.00
            s = s.replace(",", "")
    elif "," in s:
        # one comma is the Indonesian decimal mark (12,5); several are English grouping (1,234,567)
        s = s.replace(",", ".") if s.count(",") == 1 else s.replace(",", "")
    elif s.count(".") > 1 or (s.count(".") == 1 and len(s.split(".")[1]) == 3 and s.split(".")[0] != "0"):
        s = s.replace(".", "")  # 5.000 and 1.234.567 are Indonesian digit grouping
    try:
        return float(s)
    except ValueError:
        return None


def _half_up(value: float, decimals: int) -> Decimal:
    # Half up, as the judge rounds (language/figure.py): Python's round() and f-strings round 87,395 to 87,39.
    return Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def format_number(value: float, decimals: int = 2) -> str:
    """Indonesian notation: ``1234567.5`` → ``1.234.567,5``; whole numbers without decimals."""
    negative = value < 0
    value = abs(value)
    if abs(value - round(value)) < 1e-9:
        text = f"{round(value):,}".replace(",", ".")
    else:
        whole, _, frac = f"{_half_up(value, decimals):,}".partition(".")
        text = whole.replace(",", ".") + ("," + frac.rstrip("0") if frac.rstrip("0") else "")
    return ("-" if negative else "") + text


_SCALES = ((1e12, "triliun"), (1e9, "miliar"), (1e6, "juta"), (1e3, "ribu"))


def format_scaled(value: float) -> str | None:
    """``2859122172935`` → ``2,86 triliun``; None below one thousand."""
    for size, word in _SCALES:
        if abs(value) >= size:
            return f"{format_number(float(_half_up(value / size, 2)))} {word}"
    return None


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball Indonesian stem (``mengubah``, ``diubah``, ``perubahan`` → ``ubah``); numbers stay as is."""
    if not word or word[0].isdigit():
        return word
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> list[str]:
    return [stem(w) for w in words(text)]


# An amount whose integer part is still open ("Rp1.234.567." before an OCR space and "890.000,00"), and the
# digit group that continues it: no sentence ends between the two (a cut there states a figure a million
# times too small).
_OPEN_AMOUNT = re.compile(r"(?<![\d,])\d{1,3}(?:\s?\.\s?\d{3})*\s?\.$")
_AMOUNT_GOES_ON = re.compile(r"\d{1,3}(?:\s?[.,]\s?\d|\s\d{1,3}[.,]\d)")


def amount_goes_on(before: str, line: str, pos: int) -> bool:
    """Whether the text ``before`` a sentence boundary ends inside an amount that ``line`` continues at
    ``pos`` (the boundary is an OCR space inside the amount's digit groups, not the end of a sentence)."""
    return bool(_OPEN_AMOUNT.search(before)) and _AMOUNT_GOES_ON.match(line, pos) is not None
