"""Indonesian lexical analysis for BM25: lower-casing, an Indonesian stopword list, the Snowball
Indonesian stemmer (PyStemmer), and tokens that keep figures and reference numbers whole
("871.667.219.294", "11/2006", "2023", "18a"). OCR slips inside numbers ("2O2O", "Rpl.963") are repaired
so the noisy and the clean spelling meet on one token."""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

# Function words, question words and drafting boilerplate. Content words of the legal domain (pasal,
# ayat, daerah, anggaran ...) stay: BM25's idf already discounts them, and queries name them on purpose.
STOPWORDS = frozenset(
    """
ada adalah adanya agak agar akan akankah akan akhirnya aku amat amatlah anda andalah antar antara
antaranya apa apaan apabila apakah apalagi atas atau ataukah ataupun bagai bagaimana bagaimanakah
bagaimanapun bagi bahkan bahwa bahwasanya banyak beberapa begini beginilah begitu begitupun belum
belumlah berapa berapakah berapapun bila bilamana bisa boleh bukan bukankah bukanlah dahulu dalam
dan dapat dari daripada demi demikian dengan di dia dialah dijelaskan dimana dimanakah diri dirinya
engkau hal hampir hanya hanyalah harus haruslah hingga ia ialah ini inilah itu itukah itulah jadi
jangan jika jikalau juga justru kalau kami kamilah kamu kamulah kan kapan kapankah karena karenanya
ke kecuali kemudian kenapa kepada kepadanya ketika kini kita kitalah lagi lah lain lainnya maka
manakah mana masih maupun melainkan melalui menjadi mengapa mereka merekalah merupakan meski
meskipun mungkin namun nanti nya oleh olehnya pada padahal padanya para pernah pula pun saat saja
saling sambil sampai sana sangat saya se sebab sebagai sebagaimana sebelum sebelumnya sebuah
secara sedang sedangkan sehingga sejak selagi selain selama seluruh semua sementara sendiri
seolah seperti sepertinya serta sesuatu setelah setiap siapa siapakah sini situ suatu sudah
sudahlah supaya tadi tanpa tapi telah tentang tentu terhadap termasuk tersebut tetapi tiap tidak
tidakkah untuk waktu yaitu yakni yang yg dgn tsb dll dsb
""".split()
)

_RAW_TOKEN = re.compile(r"[^\W_]+(?:[.,/][^\W_]+)*")
_RUPIAH_OCR = re.compile(r"(?i)\brp[ .]?(?=[lIOoS][\d.,])")
_OCR_NUMBER = re.compile(r"^[\dOolIS.,/]*\d[\dOolIS.,/]*$")
_NUMBER = re.compile(r"^\d[\d.,/]*$")
_HAS_DIGIT = re.compile(r"\d")
_OCR_TABLE = str.maketrans({"O": "0", "o": "0", "l": "1", "I": "1", "S": "5"})
TOKENIZER_VERSION = 2


class IndonesianAnalyzer:
    """Text in, BM25 terms out. One instance per thread (PyStemmer stemmers are not thread-safe)."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("indonesian")

    def __call__(self, text: str) -> list[str]:
        """Terms in text order (the reranker's proximity features rely on the order)."""
        text = _RUPIAH_OCR.sub("rp ", text)
        items: list[str | tuple[str, ...]] = []  # a word to stem, or the finished terms of a number
        for raw in _RAW_TOKEN.findall(text):
            if _HAS_DIGIT.search(raw):
                items.append(_number_terms(raw))
            elif "." in raw or "," in raw or "/" in raw:
                items.extend(p for p in re.split(r"[.,/]", raw.lower()) if len(p) > 1 and p not in STOPWORDS)
            else:
                low = raw.lower()
                if len(low) > 1 and low not in STOPWORDS:
                    items.append(low)
        stems = iter(self._stemmer.stemWords([item for item in items if isinstance(item, str)]))
        out: list[str] = []
        for item in items:
            if isinstance(item, str):
                stem = next(stems)
                if stem not in STOPWORDS:
                    out.append(stem)
            else:
                out.extend(item)
        return out


@lru_cache(maxsize=65536)
def _number_terms(raw: str) -> tuple[str, ...]:
    token = raw.lower() if not _OCR_NUMBER.match(raw) else raw.translate(_OCR_TABLE)
    token = token.lower().strip(".,/")
    if not token:
        return ()
    if token.startswith("rp") and len(token) > 2 and token[2].isdigit():
        token = token[2:]
    terms = [token]
    if _NUMBER.match(token):
        # "2.021.223.677.000.000,00" also as "2.021.223.677.000.000": amounts are quoted both ways
        if token.endswith((",00", ",0")):
            terms.append(token.rsplit(",", 1)[0])
    return tuple(terms)
