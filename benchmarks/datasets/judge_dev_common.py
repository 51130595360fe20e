"""Shared helpers of the rule-judge development set builders."""

from __future__ import annotations

import hashlib
from typing import Any


def split_of(document: str) -> str:
    """Fixed split by document: a fifth of the documents are held out and never inspected."""
    return "heldout" if hashlib.sha1(document.encode()).digest()[0] % 5 == 0 else "dev"


def add_item(
    items: list[dict[str, Any]],
    base: dict[str, Any],
    claim: str,
    label: str,
    perturbation: str,
    *,
    context: str = "",
    notation: str = "",
) -> None:
    items.append(
        {
            **base,
            "id": f"{base['group']}:{len(items)}",
            "claim": claim,
            "label": label,
            "perturbation": perturbation,
            "notation": notation,
            "context": context,
        }
    )
