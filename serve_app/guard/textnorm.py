"""Text normalisation for the Policy Guard: undoes the tricks people use to slip words past filters.

Two views of one text are produced:

* ``plain``: Unicode NFKC, zero-width and other invisible characters removed, look-alike letters from
  Cyrillic, Greek and other scripts mapped to Latin, spaces collapsed (one line break kept per run),
  case folded. Regular-expression
  rules run on this view (``cased`` keeps the case for the few rules that need it, such as "DAN").
* ``folded``: ``plain`` with leetspeak undone and spelled-out words joined (see below) but punctuation
  gone; regex rules run on it too whenever it differs, so ``4b41k4n 1nstruks1`` meets the same rules.
  This view and ``tokens`` also undo escapes left by scraping or copying (a literal backslash-n, ``\\xf0``
  byte escapes, ``&amp;``), which would otherwise glue letters onto words.
* ``tokens``: ``plain`` with leetspeak undone inside words (``k4f1r`` -> ``kafir``), punctuation turned into
  spaces, letter-by-letter spelling joined (``b u n u h``, ``b.u.n.u.h`` -> ``bunuh``), every run of a
  repeated letter squeezed to one (``bunuuuh`` -> ``bunuh``) and slang mapped to standard words. Lexicon
  terms go through the same :func:`fold_term`, so both sides agree (``allah`` -> ``alah`` on both).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

# Invisible characters that split words without showing: zero-width space/joiners, word joiner, BOM,
# soft hyphen, bidi marks and the Mongolian vowel separator.
_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
     0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x034F]
)

# Letters that look Latin but are not (NFKC leaves them alone). Lower and upper case.
_HOMOGLYPHS = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ɡ": "g", "һ": "h",
    "ԛ": "q", "ԝ": "w", "ь": "b", "п": "n", "г": "r",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y", "ω": "w",
    "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X", "Ζ": "Z",
    # Latin look-alikes outside ASCII
    "ı": "i", "ɑ": "a", "ɩ": "i", "ʟ": "l", "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɢ": "g",
    "ʜ": "h", "ᴊ": "j", "ᴋ": "k", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ᴛ": "t", "ᴜ": "u",
    "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z", "ꜱ": "s",
}
_HOMOGLYPH_TABLE = str.maketrans(_HOMOGLYPHS)

DEFAULT_LEET: dict[str, str] = {
    "0": "o", "1": "i", "2": "z", "3": "e", "4": "a", "5": "s", "6": "g", "7": "t", "8": "b", "9": "g",
    "@": "a", "$": "s", "!": "i", "|": "l", "€": "e", "+": "t",
}

_SPACES = re.compile(r"[^\S\n]+")
_NEWLINES = re.compile(r" ?\n\s*")
# A "word" that mixes letters with digits or leet symbols: only these are de-leeted, so plain numbers
# (years, article numbers, amounts) stay numbers.
_MIXED_WORD = re.compile(r"(?<![\w@$!|€+])[\w@$!|€+]*[a-z][\w@$!|€+]*(?![\w@$!|€+])")
_HAS_LEET = re.compile(r"[0-9@$!|€+]")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_REPEATS = re.compile(r"([a-z])\1+")
_LONG_REPEATS = re.compile(r"([a-z])\1{2,}")
# Indonesian writes a reduplicated plural with a 2 ("orang2", "kafir2"): that 2 is not leetspeak.
_REDUPLICATION = re.compile(r"\b([a-z]{2,})2\b")


# Text that went through an escaping layer (scraped posts, JSON or HTML copied as is) shows its line
# breaks as a literal backslash and n, its emoji as "\xf0\x9f..." and "&" as "&amp;": for the word views a
# backslash-n between two words must split them, not glue an "n" to the second one.
_BYTE_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2})+")
_CHAR_ESCAPES = re.compile(r"\\[nr]")
_HTML_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")


def _unescape(text: str) -> str:
    if "\\" in text:
        text = _BYTE_ESCAPES.sub(
            lambda m: bytes.fromhex(m.group(0).replace("\\x", "")).decode("utf-8", "replace"), text
        )
        text = _CHAR_ESCAPES.sub("\n", text)
    if "&" in text and _HTML_ENTITY.search(text):
        text = html.unescape(text)
    return text


def clean(text: str) -> str:
    """NFKC, invisible characters dropped, homoglyphs mapped, whitespace collapsed (case kept)."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_HOMOGLYPH_TABLE)
    # Combining marks stacked on letters ("b̶u̶n̶u̶h̶") survive NFKC: drop them after decomposition.
    if any(unicodedata.combining(ch) for ch in text):
        text = "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))
    # Line breaks are kept (one per run): they separate a pasted document from the question around it.
    return _NEWLINES.sub("\n", _SPACES.sub(" ", text)).strip()


def _deleet_word(match: re.Match[str], table: dict[int, str]) -> str:
    word = match.group(0)
    if not _HAS_LEET.search(word):
        return word
    stripped = word.strip("!|+")  # "anjing!" is punctuation, not leet
    if not _HAS_LEET.search(stripped) or stripped.isdigit():
        return word
    core = stripped.translate(table)
    return word.replace(stripped, core, 1)


def _join_spelled(tokens: list[str]) -> list[str]:
    """Join three or more single-character tokens in a row: ``b u n u h`` -> ``bunuh``."""
    out: list[str] = []
    run: list[str] = []
    for tok in tokens:
        if len(tok) == 1:
            run.append(tok)
            continue
        if run:
            out.extend(["".join(run)] if len(run) >= 3 else run)
            run = []
        out.append(tok)
    if run:
        out.extend(["".join(run)] if len(run) >= 3 else run)
    return out


@dataclass(frozen=True, slots=True)
class Folder:
    """Turns ``plain`` text into lexicon tokens; ``slang`` and ``leet`` come from the policy file."""

    leet: Mapping[str, str]
    slang: Mapping[str, str]

    def _leet_table(self) -> dict[int, str]:
        return {ord(k): v for k, v in self.leet.items() if len(k) == 1}

    def fold(self, plain: str) -> tuple[str, list[str]]:
        """(``folded``, ``tokens``): the de-leeted, re-joined text for regex rules (runs of three or
        more equal letters squeezed, so English "all" survives) and the fully folded lexicon tokens."""
        table = self._leet_table()
        text = _REDUPLICATION.sub(r"\1 \1", plain)
        # Most words are plain letters or plain numbers: only the rest go through the leet regex.
        words = [
            w if w.isalpha() or w.isdigit() else _MIXED_WORD.sub(lambda m: _deleet_word(m, table), w)
            for w in text.split()
        ]
        joined = _join_spelled(_NON_ALNUM.sub(" ", " ".join(words)).split())
        folded = " ".join(_LONG_REPEATS.sub(r"\1", tok) for tok in joined)
        out: list[str] = []
        for tok in joined:
            tok = _REPEATS.sub(r"\1", tok)
            mapped = self.slang.get(tok)
            if mapped is not None:
                out.extend(mapped.split())
            else:
                out.append(tok)
        return folded, out

    def tokens(self, plain: str) -> list[str]:
        return self.fold(plain)[1]

    def fold_term(self, term: str) -> tuple[str, ...]:
        """A lexicon term in the same form as :meth:`tokens` produces (slang is not applied to terms)."""
        raw = _NON_ALNUM.sub(" ", clean(term).casefold()).split()
        return tuple(_REPEATS.sub(r"\1", tok) for tok in raw)


@dataclass(frozen=True, slots=True)
class NormalizedText:
    cased: str
    plain: str
    tokens: tuple[str, ...]
    folded: str = ""  # empty when folding changed nothing beyond punctuation (no second regex pass needed)

    @property
    def token_text(self) -> str:
        """Tokens joined by single spaces, padded so ``" term "`` finds whole-word phrases."""
        return " " + " ".join(self.tokens) + " "


def normalize(text: str, folder: Folder) -> NormalizedText:
    cased = clean(text)
    plain = cased.casefold().translate(_HOMOGLYPH_TABLE)  # upper-case look-alikes fold to mapped ones
    # Escapes are undone for the word views only: the line structure of ``cased`` (what is the ask and
    # what is pasted) stays as the sender wrote it.
    unescaped = _unescape(plain)
    source = plain if unescaped == plain else clean(unescaped).casefold().translate(_HOMOGLYPH_TABLE)
    folded, tokens = folder.fold(source)
    if folded == " ".join(_NON_ALNUM.sub(" ", plain).split()):
        folded = ""
    return NormalizedText(cased=cased, plain=plain, tokens=tuple(tokens), folded=folded)
