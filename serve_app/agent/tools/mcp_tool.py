"""MCP tools as agent tools: one agent tool per allowed tool of each configured MCP server, named
``mcp:<server>:<tool>``.

The planner is deterministic (no model picks tool arguments), so a call's arguments come from the question
and the tool's listed input schema: a text property named like a query (``query``, ``q``, ``keyword``,
``kata_kunci`` …) gets the question, a year property (``tahun``, ``year``, ``periode``) the year the question
asks about. A tool requiring anything else is not called for the question (``empty``): nothing is guessed.

A result becomes ``tool`` passages with the identity the judge sees: ``dataset`` (the result's own, else the
tool's title), ``source`` (the server), ``period`` (when the result or record gives one), ``call`` (the tool
with its arguments) and ``retrieved_at``. Structured content is read record by record (one passage each);
text content block by block. A server error, a failure or a timeout is a status with an honest note
(``mcp_unavailable``), never a figure: the error's text is not shown.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as McpToolInfo

from serve_app.agent.text import years
from serve_app.agent.tools.base import MCP_TOOL_PREFIX, Evidence, Tool, ToolArgs, ToolContext, ToolResult
from serve_app.agent.tools.mcp_client import (
    EgressCheck,
    McpNotAllowed,
    McpServerSpec,
    McpSource,
    McpTimeout,
    McpUnavailable,
)
from serve_app.config import ConfigError

log = logging.getLogger(__name__)

_QUERY_KEYS = frozenset(
    (
        "query q keyword keywords kata_kunci katakunci search cari pencarian pertanyaan question kueri text "
        "teks"
    ).split()
)
_YEAR_KEYS = frozenset("tahun year periode period".split())
_DATASET_KEYS = ("dataset", "nama_dataset", "judul", "title")
_PERIOD_KEYS = ("periode", "period", "tahun", "year")
_RECORD_KEYS = ("records", "rows", "data", "results", "result", "items", "hasil", "observations")
_UNIT_KEYS = ("satuan", "unit", "units")
_VALUE_KEYS = ("nilai", "value", "angka", "obs_value")
_MAX_TEXT = 2000  # characters of one text block shown as a passage


def _json_types(prop: Mapping[str, Any]) -> set[str]:
    kinds: set[str] = set()
    declared = prop.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(str(k) for k in declared)
    for alternative in prop.get("anyOf") or prop.get("oneOf") or ():
        if isinstance(alternative, Mapping):
            kinds |= _json_types(alternative)
    return kinds


def choose_arguments(schema: Mapping[str, Any], question: str) -> dict[str, Any] | None:
    """The arguments the question gives for a tool with input ``schema``; None when a required one is not
    given (the tool is then not called)."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    asked_years = years(question)
    arguments: dict[str, Any] = {}
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        key, kinds = str(name).lower(), _json_types(prop)
        if key in _QUERY_KEYS and "string" in kinds:
            arguments[name] = question
        elif key in _YEAR_KEYS and asked_years:
            if kinds & {"integer", "number"}:
                arguments[name] = int(asked_years[0])
            elif "string" in kinds:
                arguments[name] = asked_years[0]
    return None if required - arguments.keys() else arguments


def describe_call(tool: str, arguments: Mapping[str, Any]) -> str:
    """``cari_statistik(query="…", tahun=2024)``: the call as the judge and the reader see it."""
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{tool}({shown})"


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _first(data: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = data.get(key)
        if _scalar(value) and value not in (None, ""):
            return str(value)
    return None


def _fields(data: Mapping[str, Any], skip: Sequence[str] = ()) -> str:
    return "; ".join(
        f"{k}: {v}" for k, v in data.items() if k not in skip and _scalar(v) and v not in (None, "")
    )


def _record_text(record: Mapping[str, Any]) -> str:
    """A record's plain fields, its figure written with its unit (``nilai: 152340 jiwa``) as a reader and the
    judge read a figure: the unit comes after the value, not in a field of its own."""
    unit = _first(record, _UNIT_KEYS)
    numbers = [
        k
        for k, v in record.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and k.lower() not in _PERIOD_KEYS
    ]
    value = next((k for k in record if k.lower() in _VALUE_KEYS), numbers[0] if len(numbers) == 1 else None)
    if unit is None or value is None:
        return _fields(record)
    parts = []
    for k, v in record.items():
        if k.lower() in _UNIT_KEYS or not _scalar(v) or v in (None, ""):
            continue
        parts.append(f"{k}: {v} {unit}" if k == value else f"{k}: {v}")
    return "; ".join(parts)


def _structured(result: CallToolResult) -> dict[str, Any] | None:
    """The result's structured content, or a JSON object its only text block holds (servers of older SDKs)."""
    if isinstance(result.structured_content, dict):
        return result.structured_content
    texts = [b.text for b in result.content if isinstance(b, TextContent)]
    if len(texts) == 1:
        try:
            parsed = json.loads(texts[0])
        except ValueError:
            return None
        if isinstance(parsed, dict):
            return parsed
    return None


def result_evidence(
    server: str, info: McpToolInfo, arguments: Mapping[str, Any], result: CallToolResult, *, max_records: int
) -> list[Evidence]:
    """The passages of one successful call, each with its identity (see the module docstring)."""
    identity: dict[str, Any] = {
        "dataset": info.title or info.name,
        "source": f"MCP {server}",
        "period": None,
        "call": describe_call(info.name, arguments),
        "retrieved_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }
    data = _structured(result)
    if data is None:
        blocks = [b.text.strip()[:_MAX_TEXT] for b in result.content if isinstance(b, TextContent)]
        return [Evidence(text=t, kind="tool", identity=dict(identity)) for t in blocks if t][:max_records]
    identity["dataset"] = _first(data, _DATASET_KEYS) or identity["dataset"]
    identity["period"] = _first(data, _PERIOD_KEYS)
    # The result's other plain fields (a note such as "data fiktif", a unit, a source remark) go with every
    # record, so a passage never loses what the server said about all of them.
    shared = _fields(data, (*_DATASET_KEYS, *_PERIOD_KEYS))
    records = next((data[k] for k in _RECORD_KEYS if isinstance(data.get(k), list) and data[k]), None)
    if records is None:
        text = _fields(data, _DATASET_KEYS)
        line = f"{identity['dataset']}: {text}"
        return [Evidence(text=line, kind="tool", identity=identity)] if text else []
    evidence = []
    for record in records:
        if not isinstance(record, Mapping):
            continue
        text = _record_text(record)
        if not text:
            continue
        own = dict(identity, period=_first(record, _PERIOD_KEYS) or identity["period"])
        line = f"{identity['dataset']}: {text}" + (f" ({shared})" if shared else "")
        evidence.append(Evidence(text=line, kind="tool", identity=own))
        if len(evidence) == max_records:
            break
    return evidence


class McpTool(Tool):
    """One allowed tool of one MCP server (``mcp:<server>:<tool>``)."""

    live_source = True
    failure_note = "mcp_unavailable"

    def __init__(self, source: McpSource, tool: str, *, max_records: int = 8) -> None:
        self.source = source
        self.tool = tool
        self.name = f"{MCP_TOOL_PREFIX}{source.name}:{tool}"
        self.max_records = max_records
        # The source's own timeout bounds the call; the runner's limit sits just above it, so the source's
        # timeout (with its note) is what a hanging server gives.
        self.time_limit_s = source.timeout_s + 0.5

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        question = str(args.get("query") or ctx.query)
        try:
            called = await self.source.call(
                self.tool, lambda info: choose_arguments(info.input_schema, question)
            )
        except McpNotAllowed as exc:
            log.warning("%s", exc)
            return ToolResult("not_allowed", note="egress_denied")
        except McpTimeout:
            return ToolResult("timeout", note="mcp_unavailable")
        except McpUnavailable:
            return ToolResult("unavailable", note="mcp_unavailable")
        if called is None:
            return ToolResult("empty")
        info, arguments, result = called
        if result.is_error:
            log.warning("MCP server %s: tool %s answered with an error", self.source.name, self.tool)
            return ToolResult("unavailable", note="mcp_unavailable")
        evidence = result_evidence(self.source.name, info, arguments, result, max_records=self.max_records)
        return ToolResult("ok" if evidence else "empty", evidence)


def build_mcp_tools(specs: Sequence[McpServerSpec], egress: EgressCheck) -> list[Tool]:
    """The agent tools of the configured MCP servers: one per allowed tool. Nothing connects here; each call
    lists the server's tools and calls only an allowed one that the server lists."""
    tools: list[Tool] = []
    for spec in specs:
        try:
            source = McpSource(spec, egress=egress)
        except ValueError as exc:
            raise ConfigError(str(exc).rstrip(".") + ".") from None
        tools.extend(McpTool(source, name) for name in dict.fromkeys(spec.allowed_tools))
    return tools
