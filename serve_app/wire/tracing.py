"""Request ids and W3C trace context on every request and on every log line it causes.

The ASGI middleware accepts the client's ``X-Request-ID`` when it is a bounded token (else a fresh id) and
the trace id of a valid W3C ``traceparent`` (else a fresh one), keeps both in a contextvar for the request's
lifetime (tasks and threads started under it copy it) and returns ``X-Request-ID`` on every response.

In the Ray Serve graph, Ray's proxy already echoes the request's ``X-Request-ID`` (or the id it made up) on
every response, so the middleware adds the header only when it replaced the client's id; and it writes
``trace_id:request_id`` into Ray's request context, which Ray carries to every deployment the request
reaches, so the log lines of a replica of another deployment carry the same ids (:class:`TraceFilter`)."""

from __future__ import annotations

import contextvars
import dataclasses
import json
import logging
import re
import secrets
import sys
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serve_app.config.redact import redact_urls

REQUEST_ID_HEADER = "x-request-id"
MAX_REQUEST_ID = 128
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}")  # at most MAX_REQUEST_ID characters
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")


@dataclass(frozen=True)
class Trace:
    request_id: str
    trace_id: str  # 32 lowercase hex digits, W3C trace-id


access = logging.getLogger("aceh_rag.access")
_current: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("aceh_trace", default=None)


def current() -> Trace | None:
    return _current.get()


def valid_request_id(value: str | None) -> str | None:
    return value if value is not None and _REQUEST_ID.fullmatch(value) else None


def trace_id_from(traceparent: str | None) -> str | None:
    """The trace id of a valid W3C traceparent (version 00 exactly; later versions may add fields)."""
    if traceparent is None:
        return None
    m = _TRACEPARENT.fullmatch(traceparent.strip())
    if m is None:
        return None
    version, trace_id, parent_id, _flags, rest = m.groups()
    if version == "ff" or (version == "00" and rest) or set(trace_id) == {"0"} or set(parent_id) == {"0"}:
        return None
    return trace_id


def new_trace(request_id: str | None, traceparent: str | None) -> tuple[Trace, bool]:
    """The request's trace, and whether the client's request id was replaced (missing or invalid)."""
    accepted = valid_request_id(request_id)
    trace = Trace(accepted or uuid.uuid4().hex, trace_id_from(traceparent) or secrets.token_hex(16))
    return trace, accepted is None


SERVED_BY_HEADER = "X-Served-By-Node"


class HttpMiddleware(ABC):
    """Pure ASGI (no buffering, streams stay streams): other scopes (lifespan, websocket) pass straight
    through to ``app``; each HTTP request goes to ``http``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    @abstractmethod
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request: the middleware's own work around ``self.app``."""


class ServedByMiddleware(HttpMiddleware):
    """Names the Ray node whose replica answered (``X-Served-By-Node`` on every response) and counts the
    response for that node: on a cluster it tells an operator where a request ran and how the proxy spreads
    the load."""

    def __init__(self, app: ASGIApp, *, node_id: str, on_response: Callable[[], None]) -> None:
        super().__init__(app)
        self.node_id = node_id
        self.on_response = on_response

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_node(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[SERVED_BY_HEADER] = self.node_id
                self.on_response()
            await send(message)

        await self.app(scope, receive, send_with_node)


class TraceMiddleware(HttpMiddleware):
    """``behind_ray_proxy``: Ray's proxy sets the header."""

    def __init__(self, app: ASGIApp, *, behind_ray_proxy: bool = False) -> None:
        super().__init__(app)
        self.behind_ray_proxy = behind_ray_proxy

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = MutableHeaders(scope=scope)
        trace, replaced = new_trace(headers.get(REQUEST_ID_HEADER), headers.get("traceparent"))
        headers[REQUEST_ID_HEADER] = trace.request_id
        token = _current.set(trace)
        if self.behind_ray_proxy:
            _into_ray_context(trace)
        echo = replaced or not self.behind_ray_proxy
        started, status = time.perf_counter(), 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if echo:
                    MutableHeaders(scope=message)["X-Request-ID"] = trace.request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            access.info(
                "request",
                extra={
                    "fields": {
                        "method": scope.get("method"),
                        "path": scope.get("path"),
                        "status": status,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    }
                },
            )
            _current.reset(token)


def _into_ray_context(trace: Trace) -> None:
    """Ray copies its request context's request_id into every handle call this request makes."""
    from ray.serve import context

    ctx = context._serve_request_context.get()
    if ctx is not None:
        combined = f"{trace.trace_id}:{trace.request_id}"
        context._serve_request_context.set(dataclasses.replace(ctx, request_id=combined))


def _from_ray_context() -> Trace | None:
    """In a replica of another deployment: the ids the ingress wrote into Ray's request context."""
    if "ray.serve.context" not in sys.modules:
        return None
    from ray.serve import context

    ctx = context._serve_request_context.get()
    combined = getattr(ctx, "request_id", "") or ""
    trace_id, sep, request_id = combined.partition(":")
    if not sep or len(trace_id) != 32:
        return None
    return Trace(request_id, trace_id)


# ---------------------------------------------------------------------------------------------- logs


class TraceFilter(logging.Filter):
    """Adds ``request_id`` and ``trace_id`` (None outside a request) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        trace = current() or _from_ray_context()
        record.request_id = trace.request_id if trace else None
        record.trace_id = trace.trace_id if trace else None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line; extra fields given with ``extra={"fields": {...}}`` are merged in."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": redact_urls(record.getMessage()),  # a URL's password never reaches a log
            "request_id": getattr(record, "request_id", None),
            "trace_id": getattr(record, "trace_id", None),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update({k: v for k, v in fields.items() if k not in out})
        if record.exc_info:
            out["exc"] = redact_urls(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False, default=str)


# Our packages' loggers; each gets the JSON handler once and stops propagating (no doubled lines).
LOGGERS = ("aceh_rag", "serve_app", "judge", "retrieval", "models")
_HANDLER_MARK = "_aceh_json"


def configure_logging(level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """JSON lines on stderr (or ``stream``) for our loggers; idempotent within a process."""
    formatter = JsonFormatter()
    formatter.converter = time.gmtime
    for name in LOGGERS:
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if getattr(h, _HANDLER_MARK, False)]:
            logger.removeHandler(old)
        handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
        handler.setFormatter(formatter)
        handler.addFilter(TraceFilter())
        setattr(handler, _HANDLER_MARK, True)
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
