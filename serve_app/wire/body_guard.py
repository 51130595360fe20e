"""Limits that come before a request body: a slow client never holds the service.

uvicorn (the server Ray's proxy runs) reads a body only as fast as the client sends it and sets no deadline
on it; Ray Serve's proxy exposes only the idle keep-alive timeout (``keep_alive_timeout_s``) and an end-to-end
``request_timeout_s`` that would also cut long answer streams. This pure-ASGI middleware, run in Ray's proxy
(``serve_app.wire.proxy_errors.middlewares``) and around the in-process app, reads the whole body itself:

* ``Content-Length`` over the limit: 413 at once, before any body byte is read (the contract's first check);
* more than ``max_readers`` requests waiting on an incomplete body at once: 503 ``not_ready`` with
  ``Retry-After``, as soon as the new request's body is not complete within ``busy_grace_s`` (default
  0.25 s). A body that is complete on arrival (an ordinary client sends its small JSON body with its
  headers) costs no waiting, which is what the bound limits, so it passes even at the bound: slow sockets
  that fill every place do not lock out ordinary queries;
* a body not complete within ``read_deadline_s``: 408, and the connection is closed;
* a body that grows past the limit while it is read: 413.

Every refusal carries ``Connection: close``. Before the socket is closed, what the client is still sending of
its body is read and dropped for up to ``LINGER_S`` (a lingering close, as nginx does): closing a socket
with unread bytes, or with bytes still arriving, makes the kernel send a reset, and a reset can destroy the
refusal in the client's buffer before the client reads it, so the client would see "connection reset"
instead of its 408/413/503. A
complete body is handed on unchanged to the app, whose own checks keep the contract's order (413, 401, 400,
...). Requests that carry no body, and the open probes ``/healthz`` and ``/metrics``, pass straight through,
so they answer while these limits are hit.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serve_app import errors
from serve_app.config import LimitsConfig
from serve_app.wire.tracing import REQUEST_ID_HEADER, HttpMiddleware, valid_request_id

log = logging.getLogger("aceh_rag.body_guard")
OPEN_PATHS = frozenset({"/healthz", "/metrics", "/-/healthz", "/-/routes"})
BUSY_RETRY_AFTER_S = 1
LINGER_S = 1.0  # how long a refused request's remaining body is read and dropped before the close
# Environment of Ray's proxy process (serve_runner.ray_env sets it from the config's ``limits``).
ENV_MAX_BODY_BYTES = "ACEH_MAX_BODY_BYTES"
ENV_READ_DEADLINE_S = "ACEH_BODY_READ_DEADLINE_S"
ENV_MAX_READERS = "ACEH_MAX_BODY_READERS"
ENV_BUSY_GRACE_S = "ACEH_BODY_BUSY_GRACE_S"


@dataclass(frozen=True)
class BodyLimits:
    max_body_bytes: int = 65_536
    read_deadline_s: float = 10.0
    max_readers: int = 256
    busy_grace_s: float = 0.25

    @classmethod
    def of(cls, limits: LimitsConfig) -> BodyLimits:
        """The configured limits (``limits`` in the YAML): one place, in-process and in Ray's proxy."""
        return cls(
            max_body_bytes=limits.max_body_bytes,
            read_deadline_s=limits.body_read_deadline_s,
            max_readers=limits.max_body_readers,
            busy_grace_s=limits.body_busy_grace_s,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> BodyLimits:
        """The limits Ray's proxy runs with; a variable that is not set keeps the default."""
        env = os.environ if env is None else env
        default = cls()
        return cls(
            max_body_bytes=int(env.get(ENV_MAX_BODY_BYTES, default.max_body_bytes)),
            read_deadline_s=float(env.get(ENV_READ_DEADLINE_S, default.read_deadline_s)),
            max_readers=int(env.get(ENV_MAX_READERS, default.max_readers)),
            busy_grace_s=float(env.get(ENV_BUSY_GRACE_S, default.busy_grace_s)),
        )

    def env(self) -> dict[str, str]:
        return {
            ENV_MAX_BODY_BYTES: str(self.max_body_bytes),
            ENV_READ_DEADLINE_S: str(self.read_deadline_s),
            ENV_MAX_READERS: str(self.max_readers),
            ENV_BUSY_GRACE_S: str(self.busy_grace_s),
        }


class _TooLarge(Exception):
    def __init__(self, complete: bool) -> None:
        super().__init__()
        self.complete = complete  # the client had sent its whole body: nothing left to drain


class _Disconnected(Exception):
    pass


class BodyGuardMiddleware(HttpMiddleware):
    def __init__(
        self, app: ASGIApp, *, limits: BodyLimits | None = None, tag_request_id: bool = False
    ) -> None:
        """``tag_request_id``: put an ``X-Request-ID`` on its own refusals (in Ray's proxy, where no trace
        middleware is around it)."""
        super().__init__(app)
        self.limits = limits or BodyLimits()
        self.tag_request_id = tag_request_id
        self.readers = 0  # one event loop per middleware: a plain counter needs no lock
        self.busy_logged = False  # one warning per spell at the bound, not one line per refused socket

    def _log_busy(self) -> None:
        if not self.busy_logged:
            log.warning("body readers at their limit (%d): slow bodies get 503", self.limits.max_readers)
            self.busy_logged = True

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        refuse = functools.partial(_refuse, send, _request_id(headers) if self.tag_request_id else None)
        declared = headers.get("content-length")
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        if scope.get("path") in OPEN_PATHS or (not chunked and declared in (None, "0")):
            await self.app(scope, receive, send)  # no body to wait for
            return
        if declared is not None and declared.isdigit() and int(declared) > self.limits.max_body_bytes:
            await refuse(errors.PayloadTooLarge(), drain=receive)
            return
        # At the bound, a request takes no place: it may wait only the short grace for a body that is
        # complete on arrival, and a slow one is refused at once instead of queueing behind the others.
        at_bound = self.readers >= self.limits.max_readers
        wait_s = self.limits.busy_grace_s if at_bound else self.limits.read_deadline_s
        if not at_bound:
            self.readers += 1
        try:
            async with asyncio.timeout(wait_s):
                body = await self._read(receive)
        except TimeoutError:
            if at_bound:
                self._log_busy()
                busy = errors.NotReady(headers={"Retry-After": str(BUSY_RETRY_AFTER_S)})
                await refuse(busy, drain=receive)
            else:
                log.info("request body not complete within %.1f s: 408", self.limits.read_deadline_s)
                await refuse(errors.RequestTimeout(), drain=receive)
            return
        except _TooLarge as too_large:
            await refuse(errors.PayloadTooLarge(), drain=None if too_large.complete else receive)
            return
        except _Disconnected:
            return  # the client left: nobody to answer
        finally:
            if not at_bound:
                self.readers -= 1
                self.busy_logged = self.busy_logged and self.readers >= self.limits.max_readers
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limits.max_body_bytes:
                raise _TooLarge(complete=not message.get("more_body", False))
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The whole body as one message, then the client's own messages (a disconnect while the app works)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _request_id(headers: Headers) -> str:
    return valid_request_id(headers.get(REQUEST_ID_HEADER)) or uuid.uuid4().hex


async def _drain(receive: Receive) -> None:
    """Read and drop the rest of the body until it is complete, the client leaves or ``LINGER_S`` passes."""
    try:
        async with asyncio.timeout(LINGER_S):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect" or not message.get("more_body", False):
                    return
    except TimeoutError:
        return


async def _refuse(
    send: Send, request_id: str | None, error: errors.ServiceError, *, drain: Receive | None = None
) -> None:
    """The error answered with ``Connection: close``; with ``drain``, the whole answer is sent first and the
    close waits for :func:`_drain`, so the client reads the answer before any reset can reach it."""
    body = json.dumps(error.body(), ensure_ascii=False).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *((k.lower().encode(), v.encode()) for k, v in error.headers.items()),
    ]
    if request_id is not None:
        headers.append((b"x-request-id", request_id.encode()))
    await send({"type": "http.response.start", "status": error.status_code, "headers": headers})
    if drain is None:
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return
    await send({"type": "http.response.body", "body": body, "more_body": True})  # sent now, not closed yet
    await _drain(drain)
    await send({"type": "http.response.body", "body": b"", "more_body": False})
