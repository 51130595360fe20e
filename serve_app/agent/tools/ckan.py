"""``open_data``: live reads of the configured CKAN portals (OpenData, SatuData): ``package_search`` (limited
to the portal's organisation when one is set), then ``datastore_search`` on the matching datasets' active
resources. Registered only when ``sources.ckan`` lists a portal; every request goes through the egress
policy. A portal that is refused, slow or broken gives a status and an honest note, never a figure. Each
record read is a ``tool`` passage with identity ``{dataset, source, period, call, retrieved_at}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from serve_app.agent.text import content_terms, years
from serve_app.agent.tools.base import Evidence, ToolArgs, ToolContext, ToolResult
from serve_app.agent.tools.egress import EgressPolicy
from serve_app.agent.tools.live_read import LiveReadTool, cell, now, overlap, read_json
from serve_app.config import CkanPortalConfig


@dataclass(frozen=True, slots=True)
class CkanPortal:
    name: str
    base_url: str
    organization: str | None = None
    timeout_s: float = 5.0

    @classmethod
    def from_config(cls, cfg: CkanPortalConfig) -> CkanPortal:
        return cls(cfg.name, cfg.base_url.rstrip("/"), cfg.organization, cfg.timeout_s)


class OpenDataTool(LiveReadTool):
    """Every configured portal, read side by side; records ranked by how many question words they hold."""

    name = "open_data"

    def __init__(
        self,
        portals: Sequence[CkanPortal],
        *,
        egress: EgressPolicy,
        max_records: int = 8,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(egress=egress, max_records=max_records, transport=transport)
        self.portals = list(portals)

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        if not self.portals:
            return ToolResult("disabled", note="open_data_disabled")
        query = str(args.get("query") or ctx.query)
        results = await asyncio.gather(*(self._portal(p, query) for p in self.portals))
        scored = sorted((item for r in results if isinstance(r, list) for item in r), key=lambda t: -t[0])
        evidence = [e for s, e in scored if s > 0][: self.max_records]
        if evidence:
            return ToolResult("ok", evidence)
        if all(r == "not_allowed" for r in results):
            return ToolResult("not_allowed", note="egress_denied")
        if any(r == "unavailable" for r in results):
            return ToolResult("unavailable", note="open_data_unavailable")
        return ToolResult("empty")

    async def _portal(self, portal: CkanPortal, query: str) -> list[tuple[int, Evidence]] | str:
        if not self.egress.allows(portal.base_url):
            return "not_allowed"
        try:
            async with self.egress.client(timeout_s=portal.timeout_s, transport=self.transport) as client:
                # the whole read, slow bodies included, stays within the portal's time
                return await asyncio.wait_for(self._read(client, portal, query), portal.timeout_s)
        except (TimeoutError, httpx.HTTPError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return "unavailable"

    async def _read(
        self, client: httpx.AsyncClient, portal: CkanPortal, query: str
    ) -> list[tuple[int, Evidence]]:
        terms = [t for t in content_terms(query) if not t[0].isdigit()]
        asked_years = years(query)
        base = f"{portal.base_url}/api/3/action"
        search: dict[str, Any] = {"q": " ".join(terms), "rows": 3}
        if portal.organization:
            search["fq"] = f"organization:{portal.organization}"
        found = await read_json(client, f"{base}/package_search", search)
        if found.get("success") is not True:
            raise ValueError("package_search failed")
        host = urlsplit(portal.base_url).hostname
        scored: list[tuple[int, Evidence]] = []
        for package in found["result"]["results"]:
            for resource in package.get("resources", []):
                if not resource.get("datastore_active"):
                    continue
                params: dict[str, Any] = {"resource_id": resource["id"], "limit": 100}
                if asked_years:
                    params["q"] = " ".join(asked_years)
                data = await read_json(client, f"{base}/datastore_search", params)
                if data.get("success") is not True:
                    raise ValueError("datastore_search failed")
                fields = [f["id"] for f in data["result"].get("fields", []) if not f["id"].startswith("_")]
                call = "datastore_search " + " ".join(f"{k}={v}" for k, v in params.items())
                for record in data["result"].get("records", []):
                    text = "; ".join(
                        f"{f}: {cell(f, record.get(f))}" for f in fields if record.get(f) not in (None, "")
                    )
                    line = f"{package.get('title', '')} — {resource.get('name', '')}: {text}"
                    period = next(
                        (str(record[f]) for f in fields if "tahun" in f.lower() and record.get(f)), None
                    )
                    identity = {
                        "dataset": package.get("title"),
                        "source": f"{portal.name} ({host})",
                        "period": period or package.get("metadata_modified"),
                        "call": call,
                        "retrieved_at": now(),
                    }
                    scored.append((overlap(line, terms), Evidence(text=line, kind="tool", identity=identity)))
        return scored
