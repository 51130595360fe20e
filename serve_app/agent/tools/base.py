"""What every agent tool shares: the async retriever port, tool results, and the runner that times each
tool call, records it for ``tool_call_audit`` and emits ``tool.started`` / ``tool.finished``.

The retriever may live in this process or behind a Ray handle, so tools only see
:class:`retrieval.port.RetrieverPort` (async methods), the one retriever interface of the service.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypedDict

from models.json_types import JSON, JSONObject, JSONValue
from retrieval.port import RetrieverPort
from retrieval.types import Chunk
from serve_app import errors
from serve_app.answer.segments import Aggregate

log = logging.getLogger(__name__)

# The agent tools of MCP servers are named ``mcp:<server>:<tool>`` (serve_app/agent/tools/mcp_tool.py); the
# planner finds them by this prefix without importing the MCP SDK.
MCP_TOOL_PREFIX = "mcp:"


class ToolEvent(TypedDict):
    """One ``tool.started`` / ``tool.finished`` event: its SSE name and its data."""

    event: str
    data: JSON


EventSink = Callable[[ToolEvent], Awaitable[None]]
# A tool's planned arguments: JSON values, and for legal_check the parsed reference (retrieval.legal.LegalRef)
ToolArgs = Mapping[str, object]
ToolStatus = Literal[
    "ok",  # readable evidence
    "empty",  # ran, found nothing
    "error",  # failed
    "timeout",  # stopped at the tool deadline
    "unavailable",  # an external source did not answer
    "disabled",  # not enabled on this server
    "not_allowed",  # the egress allowlist refused the address
    "out_of_scope",  # found only documents outside the request's scope
    "scope_unavailable",  # the scope's documents cannot be read any more
]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One thing a tool found: an indexed chunk, or a tool result with its own identity (dataset, source,
    period, the call that produced it). The agent turns shown evidence into keyed passages."""

    text: str
    kind: Literal["chunk", "tool"] = "chunk"
    chunk: Chunk | None = None
    identity: JSON = field(default_factory=dict)
    score: float = 0.0
    aggregate: Aggregate | None = None  # a computed figure's rows (the judge recomputes it from them)

    @property
    def dedupe_key(self) -> str:
        if self.chunk is not None:
            return "chunk:" + self.chunk.chunk_id
        return "tool:" + hashlib.sha1(self.text.encode("utf-8")).hexdigest()

    @classmethod
    def of_chunk(cls, chunk: Chunk, score: float = 0.0) -> Evidence:
        return cls(text=chunk.text, kind="chunk", chunk=chunk, score=score)


@dataclass(slots=True)
class ToolResult:
    status: ToolStatus
    evidence: list[Evidence] = field(default_factory=list)
    note: str | None = None  # a TOOL_NOTICES key: an honest "off / unreachable" note

    @property
    def readable(self) -> bool:
        return bool(self.evidence)


@dataclass(slots=True)
class ToolContext:
    """What a tool may use: the retriever, the request's scope and the room left in the context."""

    retriever: RetrieverPort
    query: str
    document_ids: frozenset[str] | None  # None: the whole corpus
    preferred_document_ids: tuple[str, ...] = ()
    top_k: int = 8
    token_room: int = 8000  # context tokens left for passages

    def in_scope(self, document_id: str) -> bool:
        return self.document_ids is None or document_id in self.document_ids


class Tool(ABC):
    """One agent tool. ``run`` raises nothing on a normal miss: it returns a status instead."""

    name: str = "tool"
    # Reads a live source outside the index (SQL, a portal, BPS, an MCP server): when it fails and nothing
    # else answers the question, the answer is the ``mcp_source_unavailable`` refusal, never another figure.
    live_source: bool = False
    # The tool's own per-call limit (its configured source's timeout) in place of the runner's default.
    time_limit_s: float | None = None
    # The TOOL_NOTICES key of the honest note when the runner stops the tool or catches its failure.
    failure_note: str | None = None

    @abstractmethod
    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult: ...


def text_arg(args: ToolArgs, name: str) -> str:
    """A planned argument that must be text; anything else fails the call, as using it would."""
    value = args[name]
    if not isinstance(value, str):
        raise TypeError(f"tool argument {name!r} is {type(value).__name__}, not text")
    return value


def as_int(value: object) -> int:
    """A planned count or year, as ``int()`` reads it; anything else fails the call, as ``int()`` would."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"tool argument {value!r} is no number")


def jsonable(value: object) -> JSONValue:
    """Tool arguments as JSON for events and the audit (sets sorted, dataclasses as dicts)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        # a set's members are one kind of scalar (ids, names, numbers), sorted as themselves for a stable
        # audit; anything else sorts by its text
        return sorted((jsonable(v) for v in value), key=lambda m: m if isinstance(m, str | float) else str(m))
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: jsonable(getattr(value, name)) for name in fields}
    return str(value)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ToolRunner:
    """Runs tools under a deadline; every run lands in ``audit`` and emits its two events. A failing tool is
    a status, except when the role behind it is gone (:class:`~serve_app.errors.NotReady`, or a timeout
    while the retriever does not answer its probe): that ends the request, after the audit and
    ``tool.finished``."""

    def __init__(self, *, on_event: EventSink | None = None, timeout_s: float = 8.0) -> None:
        self.on_event = on_event
        self.timeout_s = timeout_s
        self.audit: list[JSONObject] = []

    async def _emit(self, name: str, data: JSON) -> None:
        if self.on_event is not None:
            await self.on_event({"event": name, "data": data})

    async def call(self, tool: Tool, args: ToolArgs, ctx: ToolContext, *, deadline: float) -> ToolResult:
        call_id = uuid.uuid4().hex[:16]
        started = time.time()
        t0 = time.perf_counter()
        shown_args = jsonable(args)
        await self._emit("tool.started", {"call_id": call_id, "tool": tool.name, "arguments": shown_args})
        limit = tool.time_limit_s if tool.time_limit_s is not None else self.timeout_s
        timeout = min(limit, deadline - started)
        lost: errors.NotReady | None = None
        if timeout <= 0:
            result = ToolResult("timeout", note=tool.failure_note)
        else:
            try:
                result = await asyncio.wait_for(tool.run(args, ctx), timeout=timeout)
            except TimeoutError:
                result = ToolResult("timeout", note=tool.failure_note)
                if not await ctx.retriever.reachable():  # waited on a retriever that is not there
                    lost = errors.NotReady()
            except errors.NotReady as exc:  # the role behind the tool is gone: raised below, after the audit
                lost, result = exc, ToolResult("error", note=tool.failure_note)
            except Exception as exc:  # a failing tool is a status, never a crash of the request
                log.warning("tool %s failed: %r", tool.name, exc)
                result = ToolResult("error", note=tool.failure_note)
        duration_ms = round((time.perf_counter() - t0) * 1000, 3)
        self.audit.append(
            {
                "call_id": call_id,
                "tool": tool.name,
                "arguments": shown_args,
                "started_at": _iso(started),
                "duration_ms": duration_ms,
                "status": result.status,
                "result_count": len(result.evidence),
            }
        )
        await self._emit(
            "tool.finished",
            {
                "call_id": call_id,
                "tool": tool.name,
                "status": result.status,
                "result_count": len(result.evidence),
                "duration_ms": duration_ms,
            },
        )
        if lost is not None:
            raise lost
        return result
