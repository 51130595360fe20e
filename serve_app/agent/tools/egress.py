"""The one egress policy: every outbound call to a live source (CKAN, BPS, MCP over HTTP) goes through an
:class:`EgressPolicy` built from ``sources.egress_allowlist``. Its httpx transport checks each request's
host (redirects included) before a connection is opened; a host off the list raises :class:`EgressDenied`.
Model servers are configured separately and do not pass here."""

from __future__ import annotations

from collections.abc import Collection

import httpx

from serve_app.config import SourcesConfig, host_allowed


class EgressDenied(httpx.TransportError):
    """The allowlist refused the request's host; no connection was opened."""


class _GuardedTransport(httpx.AsyncBaseTransport):
    def __init__(self, policy: EgressPolicy, inner: httpx.AsyncBaseTransport) -> None:
        self.policy = policy
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self.policy.allows(str(request.url)):
            raise EgressDenied(f"egress to {request.url.host} is not allowed", request=request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class EgressPolicy:
    """Hosts (``host`` or ``host:port``) the server may call. Empty: nothing is allowed."""

    def __init__(self, allowed_hosts: Collection[str] = ()) -> None:
        self.allowed = frozenset(h.lower() for h in allowed_hosts)

    @classmethod
    def from_config(cls, sources: SourcesConfig) -> EgressPolicy:
        return cls(sources.egress_allowlist)

    def allows(self, url: str) -> bool:
        return host_allowed(self.allowed, url)

    def client(
        self, *, timeout_s: float, transport: httpx.AsyncBaseTransport | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.AsyncClient:
        """An httpx client whose every request is checked here first. ``transport``: the inner transport
        (tests); redirects are not followed, a live source's answer is read where it was asked."""
        inner = transport if transport is not None else httpx.AsyncHTTPTransport()
        return httpx.AsyncClient(
            transport=_GuardedTransport(self, inner), timeout=timeout_s, follow_redirects=False,
            headers=headers,
        )
