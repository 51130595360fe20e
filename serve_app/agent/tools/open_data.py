"""Live reads of published figures: a CKAN portal (OpenData / SatuData: ``package_search`` then
``datastore_search``) and the BPS WebAPI. Both are off by default and reach only hosts on the egress
allowlist. Off, refused or unreachable, they return a status and an honest note (``TOOL_NOTICES``), never a
figure. Each record read becomes a ``tool`` passage with identity ``{dataset, source, period, call,
retrieved_at}``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from serve_app.agent.text import content_terms, term_matches, words, years
from serve_app.agent.tools.base import Evidence, Tool, ToolContext, ToolResult
from serve_app.agent.tools.egress import EgressPolicy


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _overlap(text: str, terms: list[str]) -> int:
    ws = words(text)
    return sum(any(term_matches(t, w) for w in ws) for t in terms)


class _HttpTool(Tool):
    disabled_note = "open_data_disabled"
    unavailable_note = "open_data_unavailable"

    def __init__(
        self,
        base_url: str | None,
        *,
        egress: EgressPolicy,
        enabled: bool = False,
        timeout_s: float = 5.0,
        max_records: int = 8,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/") if base_url else None
        self.egress = egress
        self.enabled = enabled
        self.timeout_s = timeout_s
        self.max_records = max_records
        self.transport = transport

    @property
    def active(self) -> bool:
        return self.enabled and self.base_url is not None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not self.active:
            return ToolResult("disabled", note=self.disabled_note)
        assert self.base_url is not None
        if not self.egress.allows(self.base_url):
            return ToolResult("not_allowed", note="egress_denied")
        try:
            async with self.egress.client(timeout_s=self.timeout_s, transport=self.transport) as client:
                evidence = await self._read(client, str(args.get("query") or ctx.query))
        except (httpx.HTTPError, ValueError, KeyError, TypeError, IndexError):
            return ToolResult("unavailable", note=self.unavailable_note)
        return ToolResult("ok" if evidence else "empty", evidence)

    async def _get(self, client: httpx.AsyncClient, url: str, params: dict[str, Any]) -> Any:
        response = await client.get(url, params=params)
        response.raise_for_status()
        return response.json()

    async def _read(self, client: httpx.AsyncClient, query: str) -> list[Evidence]:
        raise NotImplementedError


class OpenDataTool(_HttpTool):
    """A CKAN portal: the packages matching the question, then datastore records of their active
    resources, ranked by how many question words they contain."""

    name = "open_data"

    def __init__(self, base_url: str | None, *, portal_name: str = "Open Data", **kwargs: Any) -> None:
        super().__init__(base_url, **kwargs)
        self.portal_name = portal_name

    async def _read(self, client: httpx.AsyncClient, query: str) -> list[Evidence]:
        terms = [t for t in content_terms(query) if not t[0].isdigit()]
        asked_years = years(query)
        base = f"{self.base_url}/api/3/action"
        found = await self._get(client, f"{base}/package_search", {"q": " ".join(terms), "rows": 3})
        if not found.get("success"):
            raise ValueError("package_search failed")
        scored: list[tuple[int, Evidence]] = []
        for package in found["result"]["results"]:
            for resource in package.get("resources", []):
                if not resource.get("datastore_active"):
                    continue
                params: dict[str, Any] = {"resource_id": resource["id"], "limit": 100}
                if asked_years:
                    params["q"] = " ".join(asked_years)
                data = await self._get(client, f"{base}/datastore_search", params)
                if not data.get("success"):
                    raise ValueError("datastore_search failed")
                fields = [f["id"] for f in data["result"].get("fields", []) if not f["id"].startswith("_")]
                call = f"datastore_search resource_id={resource['id']}" + (
                    f" q={params['q']}" if "q" in params else ""
                )
                for record in data["result"].get("records", []):
                    text = "; ".join(
                        f"{f}: {record.get(f)}" for f in fields if record.get(f) not in (None, "")
                    )
                    line = f"{package.get('title', '')} — {resource.get('name', '')}: {text}"
                    period = next(
                        (str(record[f]) for f in fields if "tahun" in f.lower() and record.get(f)), None
                    )
                    identity = {
                        "dataset": package.get("title"),
                        "source": f"{self.portal_name} ({urlsplit(self.base_url or '').hostname})",
                        "period": period or package.get("metadata_modified"),
                        "call": call,
                        "retrieved_at": _now(),
                    }
                    scored.append(
                        (_overlap(line, terms), Evidence(text=line, kind="tool", identity=identity))
                    )
        scored.sort(key=lambda t: -t[0])
        return [e for s, e in scored if s > 0][: self.max_records]


class BpsTool(_HttpTool):
    """BPS WebAPI (``/v1/api/list/model/var`` to find the variable, ``/model/data`` for its values).
    Needs an API key; without one it is disabled."""

    name = "bps"
    disabled_note = "bps_disabled"
    unavailable_note = "bps_unavailable"

    def __init__(
        self, base_url: str | None, *, api_key: str | None = None, domain: str = "1100", **kwargs: Any
    ):
        super().__init__(base_url, **kwargs)
        self.api_key = api_key
        self.domain = domain

    @property
    def active(self) -> bool:
        return super().active and bool(self.api_key)

    async def _read(self, client: httpx.AsyncClient, query: str) -> list[Evidence]:
        terms = [t for t in content_terms(query) if not t[0].isdigit()]
        asked_years = set(years(query))
        api = f"{self.base_url}/v1/api/list/model"
        listing = await self._get(
            client, f"{api}/var/domain/{self.domain}/key/{self.api_key}/", {"keyword": " ".join(terms[:3])}
        )
        if listing.get("data-availability") != "available":
            return []
        variables = sorted(listing["data"][1], key=lambda v: -_overlap(str(v.get("title", "")), terms))[:2]
        evidence: list[Evidence] = []
        for var in variables:
            var_id = var["var_id"]
            data = await self._get(
                client, f"{api}/data/domain/{self.domain}/var/{var_id}/key/{self.api_key}/", {}
            )
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
                    line = f"{var['title']} — {where}: {content[key]} {unit}".strip()
                    identity = {
                        "dataset": var["title"],
                        "source": f"BPS WebAPI (domain {self.domain})",
                        "period": str(tahun["label"]),
                        "call": f"data var={var_id} domain={self.domain}",
                        "retrieved_at": _now(),
                    }
                    evidence.append(Evidence(text=line, kind="tool", identity=identity))
        evidence.sort(key=lambda e: -_overlap(e.text, terms))
        return evidence[: self.max_records]
