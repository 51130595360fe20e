"""What Ray's HTTP proxy answers when the Ingress replica serving a request dies under it.

Ray's proxy turns a replica that died mid-request (``ActorDiedError``) into a status 500 with no body of
ours: the contract wants the 503 of a service that is not ready, with its fixed body, so the client knows
to retry. This pure-ASGI middleware runs inside the proxy (Ray imports :func:`middlewares` from
``RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH``, which :mod:`serve_app.runtime.serve_runner` sets) around
Ray's own app:

* nothing was sent yet → the contract's 503 ``not_ready`` body with ``Retry-After`` (a request is not
  retried here: the replica may have stored its turn before it died, and a second run would store it twice);
* an event stream had started → one SSE ``error`` frame (503) ends it, so every stream still ends with
  exactly one terminal frame;
* any other started body is closed as it is.

A response the Ingress sent, a 500 included, passes through untouched, but for one ``X-Request-ID``
(below).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.types import Message, Receive, Scope, Send

from serve_app import errors
from serve_app.wire.body_guard import BodyGuardMiddleware, BodyLimits
from serve_app.wire.sse import error_frame
from serve_app.wire.tracing import REQUEST_ID_HEADER, HttpMiddleware, valid_request_id

log = logging.getLogger("aceh_rag.proxy")
RETRY_AFTER_S = 1  # another Ingress replica answers at once; a replaced one in a few seconds


class ReplicaLostMiddleware(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = ended = sse = False

        async def tracking_send(message: Message) -> None:
            nonlocal started, ended, sse
            if message["type"] == "http.response.start":
                started = True
                message = _one_request_id(message)
                sse = (
                    Headers(raw=message.get("headers", []))
                    .get("content-type", "")
                    .startswith("text/event-stream")
                )
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                ended = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:  # noqa: BLE001 - Ray's text never reaches the client
            log.warning("request lost its Ingress replica: %s", type(exc).__name__)
        if ended:
            return
        lost = errors.NotReady()
        if not started:
            await _send_json(send, lost, _request_id(scope))
        elif sse:
            frame = error_frame(lost.status_code, lost.error, str(lost.detail)).encode()
            await send({"type": "http.response.body", "body": frame, "more_body": False})
        else:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _one_request_id(message: Message) -> Message:
    """Ray's proxy echoes the client's ``X-Request-ID`` as sent; when the Ingress replaced an invalid one
    with its own, the response would carry both. Keep one id we would accept: the client's valid one, or
    ours."""
    headers = list(message.get("headers", []))
    ids = [v for k, v in headers if k.lower() == b"x-request-id"]
    if len(ids) < 2:
        return message
    keep = [v for v in ids if valid_request_id(v.decode("latin-1"))][:1] or ids[-1:]
    kept = [(k, v) for k, v in headers if k.lower() != b"x-request-id"] + [(b"x-request-id", keep[0])]
    return {**message, "headers": kept}


def _request_id(scope: Scope) -> str:
    """The request id Ray's proxy put on the request (the client's or its own), when it is one we would
    accept; a new one otherwise."""
    return valid_request_id(Headers(scope=scope).get(REQUEST_ID_HEADER)) or uuid.uuid4().hex


async def _send_json(send: Send, error: errors.ServiceError, request_id: str) -> None:
    body = json.dumps(error.body(), ensure_ascii=False).encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(RETRY_AFTER_S).encode()),
        (b"x-request-id", request_id.encode()),
    ]
    await send({"type": "http.response.start", "status": error.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def middlewares() -> list[Any]:
    """The callback Ray's proxy imports (``RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH``). The body guard
    comes first (outermost): a slow body is held, and refused, in the proxy, so it never ties up an Ingress
    replica's request slot."""
    return [
        Middleware(BodyGuardMiddleware, limits=BodyLimits.from_env(), tag_request_id=True),
        Middleware(ReplicaLostMiddleware),
    ]
