"""Shared helpers of the rule-judge development set builders."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


def split_of(document: str) -> str:
    """Fixed split by document: a fifth of the documents are held out and never inspected."""
    return "heldout" if hashlib.sha1(document.encode()).digest()[0] % 5 == 0 else "dev"


@dataclass(frozen=True)
class Group:
    """The claims made from one passage: each item gets the group's fields (``base``: group, source,
    document, split, passages) and a running id, and is appended to the set being built (``items``)."""

    items: list[dict[str, Any]]
    base: dict[str, Any]

    def add(
        self, claim: str, label: str, perturbation: str, *, context: str = "", notation: str = ""
    ) -> None:
        self.items.append(
            {
                **self.base,
                "id": f"{self.base['group']}:{len(self.items)}",
                "claim": claim,
                "label": label,
                "perturbation": perturbation,
                "notation": notation,
                "context": context,
            }
        )
