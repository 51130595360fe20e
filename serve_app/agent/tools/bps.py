"""``bps``: live reads of the BPS WebAPI (``/v1/api/list/model/var`` finds the variable, ``/model/data``
gives its values), registered only when ``sources.bps`` is set. The key comes from the environment
variable the config names; without it the tool answers ``bps_disabled``. Every request goes through the
egress policy; refused, slow or broken, it gives a status and an honest note, never a figure.
"""

from __future__ import annotations

import asyncio

import httpx

from serve_app.agent.text import content_terms, years
from serve_app.agent.tools.base import Evidence, ToolArgs, ToolContext, ToolResult
from serve_app.agent.tools.egress import EgressPolicy
from serve_app.agent.tools.live_read import LiveReadTool, cell, now, overlap, read_json

ACEH_DOMAIN = "1100"  # the BPS domain of the Aceh province, the default when the config names none


class BpsTool(LiveReadTool):
    name = "bps"

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        egress: EgressPolicy,
        domain: str | None = None,
        timeout_s: float = 5.0,
        max_records: int = 8,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(egress=egress, max_records=max_records, transport=transport)
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.domain = domain or ACEH_DOMAIN
        self.timeout_s = timeout_s

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        if not self.api_key:
            return ToolResult("disabled", note="bps_disabled")
        if not self.egress.allows(self.base_url):
            return ToolResult("not_allowed", note="egress_denied")
        query = str(args.get("query") or ctx.query)
        try:
            async with self.egress.client(timeout_s=self.timeout_s, transport=self.transport) as client:
                evidence = await asyncio.wait_for(self._read(client, query), self.timeout_s)
        except (TimeoutError, httpx.HTTPError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return ToolResult("unavailable", note="bps_unavailable")
        return ToolResult("ok" if evidence else "empty", evidence)

    async def _read(self, client: httpx.AsyncClient, query: str) -> list[Evidence]:
        terms = [t for t in content_terms(query) if not t[0].isdigit()]
        asked_years = set(years(query))
        api = f"{self.base_url}/v1/api/list/model"
        keyword = " ".join(terms[:3])
        listing = await read_json(
            client, f"{api}/var/domain/{self.domain}/key/{self.api_key}/", {"keyword": keyword}
        )
        if listing.get("status") != "OK":
            raise ValueError("BPS answered an error")
        if listing.get("data-availability") != "available":
            return []
        variables = sorted(listing["data"][1], key=lambda v: -overlap(str(v.get("title", "")), terms))[:2]
        evidence: list[Evidence] = []
        for var in variables:
            var_id = var["var_id"]
            path = f"{api}/data/domain/{self.domain}/var/{var_id}/key/{self.api_key}/"
            data = await read_json(client, path, {})
            if data.get("status") != "OK":
                raise ValueError("BPS answered an error")
            if data.get("data-availability") != "available":
                continue
            unit = (data.get("var") or [{}])[0].get("unit") or var.get("unit") or ""
            turvar = (data.get("turvar") or [{"val": 0}])[0]["val"]
            turtahun = (data.get("turtahun") or [{"val": 0}])[0]["val"]
            content = data.get("datacontent", {})
            for tahun in data.get("tahun", []):
                if asked_years and str(tahun["label"]) not in asked_years:
                    continue
                for vervar in data.get("vervar", []):
                    key = f"{vervar['val']}{var_id}{turvar}{tahun['val']}{turtahun}"
                    if key not in content:
                        continue
                    where = f"{vervar['label']}, tahun {tahun['label']}"
                    line = f"{var['title']} — {where}: {cell('nilai', content[key])} {unit}".strip()
                    identity = {
                        "dataset": var["title"],
                        "source": f"BPS WebAPI (domain {self.domain})",
                        "period": str(tahun["label"]),
                        # the call with its arguments; the key is a credential and is never shown
                        "call": f"list/model/data domain={self.domain} var={var_id} keyword={keyword}",
                        "retrieved_at": now(),
                    }
                    evidence.append(Evidence(text=line, kind="tool", identity=identity))
        evidence.sort(key=lambda e: -overlap(e.text, terms))
        return evidence[: self.max_records]
