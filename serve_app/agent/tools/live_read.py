"""What the live HTTP sources (CKAN, BPS) share: one JSON read through the egress-checked client, the time
a record was read, and cells written the way the judge reads figures."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx

from judge.aggregate import format_id
from serve_app.agent.text import term_matches, words
from serve_app.agent.tools.base import Tool
from serve_app.agent.tools.egress import EgressPolicy

_YEARISH = ("tahun", "year", "periode", "_id", "kode")


class LiveReadTool(Tool):
    """A tool over live HTTP sources: every request through ``egress``, at most ``max_records`` records
    back, over ``transport`` (tests pass a mock; None is the network)."""

    def __init__(
        self, *, egress: EgressPolicy, max_records: int, transport: httpx.AsyncBaseTransport | None
    ) -> None:
        self.egress = egress
        self.max_records = max_records
        self.transport = transport


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def overlap(text: str, terms: list[str]) -> int:
    ws = words(text)
    return sum(any(term_matches(t, w) for w in ws) for t in terms)


def cell(field: str, value: Any) -> str:
    """A JSON number in Indonesian digits (14.45 → 14,45; 86310 → 86.310), so no reader takes a decimal
    point for a thousands separator; years, codes and text as given."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if any(h in field.lower() for h in _YEARISH):
            return str(value)
        return format_id(Decimal(str(value)))
    return str(value)


async def read_json(client: httpx.AsyncClient, url: str, params: dict[str, Any]) -> Any:
    response = await client.get(url, params=params)
    response.raise_for_status()
    return response.json()
