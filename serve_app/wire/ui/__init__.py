"""The reference web client: plain HTML, CSS and ES modules in ``static/`` (no framework, no build step),
served at ``/ui/`` without credentials like ``/healthz``; the page itself asks for the API key (and the
partner JWT) and sends them on its own API calls. Every file goes out with a strict Content-Security-Policy:
scripts and styles from this origin only, no inline code, API calls to this origin only, and Trusted Types
required, so the page cannot turn answer text into markup."""

from __future__ import annotations

from pathlib import Path

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

STATIC_DIR = Path(__file__).resolve().parent / "static"

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data:",
        "base-uri 'none'",
        "form-action 'none'",  # the page sends its form by fetch; a native submit would leak the question
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",  # no innerHTML anywhere: answer text is only ever text
        "trusted-types 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-cache",  # revalidate (ETag): a new release is picked up on the next load
}


class UIStaticFiles:
    """Starlette's StaticFiles over :data:`STATIC_DIR` (``index.html`` for the folder), with
    :data:`SECURITY_HEADERS` on every response, the 404s included."""

    def __init__(self, directory: Path = STATIC_DIR) -> None:
        self.files = StaticFiles(directory=directory, html=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        try:
            await self.files(scope, receive, send_with_headers)
        except HTTPException as exc:  # 404 / 405: answered here, so they carry the headers too
            headers = {**(exc.headers or {}), **SECURITY_HEADERS}
            response = PlainTextResponse(str(exc.detail), status_code=exc.status_code, headers=headers)
            await response(scope, receive, send)
