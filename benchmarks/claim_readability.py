"""What a reader sees in supported claims: page furniture left by PDF extraction, and claim length.

Furniture is text of the page, not of the law: running heads and stamps ("jdih.kemenkeu.go.id", "SK No
123456 A"), a split "PRES I DEN" header, page numbers ("- 12 -", "Halaman 3 dari 9") and the runs of ayat
numbers column extraction leaves ("(2) (3) (4)"). A supported claim holding any of it is counted; the
benchmark reports those claims (none is the goal) and the median supported claim length in characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from benchmarks.harness import percentile

FURNITURE = re.compile(
    r"jdih\.|\bwww\.|\.go\.id\b"  # a portal's running head or stamp
    r"|\bSK\s+No\.?\s*\d{3,}"  # the stamp of the scanned copy
    r"|\bPRES\s+I\s*DEN\b|\bPRESI\s+DEN\b"  # the letterhead split by OCR
    r"|[a-z,;]\s+PRESIDEN\s+REPUBLIK\s+INDONESIA\s+[a-z(]"  # the letterhead inside a sentence
    r"|(?:^|\s)-\s?\d{1,3}\s?-(?:\s|$)|\bHalaman\s+\d+\s+dari\s+\d+"  # a page number
    r"|\(\d{1,2}\)\s*\(\d{1,2}\)",  # a run of bare ayat numbers: table column numbers
    re.IGNORECASE,
)


def furniture_in(text: str) -> list[str]:
    """The furniture ``text`` holds (empty when none)."""
    return [m.group(0).strip() for m in FURNITURE.finditer(text)]


def readability(claims_by_question: Iterable[tuple[str, Sequence[str]]]) -> dict[str, object]:
    """Over (question id, supported claim texts): how many claims carry furniture (with a few examples) and
    the median claim length in characters."""
    lengths: list[int] = []
    flagged: list[dict[str, object]] = []
    total = 0
    for qid, claims in claims_by_question:
        for text in claims:
            total += 1
            lengths.append(len(text))
            found = furniture_in(text)
            if found:
                flagged.append({"id": qid, "furniture": found, "claim": text[:300]})
    return {
        "supported_claims": total,
        "supported_claims_with_furniture": len(flagged),
        "supported_claim_chars_median": percentile(lengths, 0.5) if lengths else None,
        "supported_claims_over_400_chars": sum(n > 400 for n in lengths),
        "furniture_examples": flagged[:20],
    }
