"""The client side of one configured MCP server, on the official ``mcp`` SDK: a local command over stdio, or a
streamable HTTP URL that must pass the egress allowlist before any connection is opened.

Session lifetime: one session per call (connect, list the tools, call one, close). A long-lived session per
replica would save the handshake (and, over stdio, a process start per call), but it would have to be owned
by one background task (the SDK's anyio task groups must be entered and left in the same task), reconnected
after every server restart or idle drop, and shared by concurrent requests; a dead session would then fail
requests that a fresh connection would answer. Per call, a failing or hanging server costs only that call,
and nothing of one request (a stuck stream, a server's state) reaches the next. The modern protocol also
wants a tool listed by the client before it is called, so the listing is part of every session anyway.
The price is paid over stdio, where every call starts the server process: on the 2-core test host, side by
side, a demo call took 3.0 s over stdio and 0.2 s over streamable HTTP (p50 of 5, load 9-14). A server asked
often belongs behind a URL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar, cast

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Implementation
from mcp_types import Tool as McpToolInfo

from serve_app.config import REPO_ROOT

log = logging.getLogger(__name__)

_MAX_LIST_PAGES = 20  # a server whose tool listing never ends cannot hold a call
_T = TypeVar("_T")
_E = TypeVar("_E", bound=BaseException)
# Sessions still closing (a stdio server gets a bounded grace period to exit), or stopped at their deadline:
# the request does not wait for that, but the tasks are kept here so they finish instead of being collected.
_CLOSING: set[asyncio.Task[Any]] = set()


async def wait_closed(timeout_s: float = 10.0) -> None:
    """Waits for this event loop's sessions that are still closing: a one-shot command (``aceh-rag ask``)
    calls it before its loop ends, which would otherwise cut a stdio server's shutdown short."""
    loop = asyncio.get_running_loop()
    pending = [t for t in _CLOSING if t.get_loop() is loop]
    if pending:
        await asyncio.wait(pending, timeout=timeout_s)


class McpServerSpec(Protocol):
    """What the client reads of one ``sources.mcp`` entry (``serve_app.config.sources.McpServerConfig``)."""

    @property
    def name(self) -> str: ...
    @property
    def command(self) -> Sequence[str] | None: ...
    @property
    def url(self) -> str | None: ...
    @property
    def allowed_tools(self) -> Sequence[str]: ...
    @property
    def timeout_s(self) -> float: ...
    @property
    def env(self) -> Mapping[str, str]: ...


class EgressCheck(Protocol):
    """The egress allowlist (serve_app/agent/tools/open_data.py ``EgressPolicy``)."""

    def allows(self, url: str) -> bool: ...


class McpUnavailable(Exception):
    """The server could not be reached, failed, or answered with an error (the message is for the log)."""


class McpTimeout(McpUnavailable):
    """The server did not finish within the source's timeout."""


class McpNotAllowed(Exception):
    """The server's URL is not on the egress allowlist: nothing was opened."""


def resolve_executable(name: str) -> str | None:
    """A relative executable with a path (``.venv/bin/python``) is relative to the repository root, like every
    path in the config; a bare name (``python``, ``npx``) is looked up on PATH. None: nothing runnable."""
    if "/" not in name:
        return shutil.which(name)
    path = Path(name) if Path(name).is_absolute() else REPO_ROOT / name
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def _stdio_parameters(executable: str, args: Sequence[str], env: Mapping[str, str]) -> StdioServerParameters:
    """The server runs in the repository root, with the SDK's minimal inherited environment (HOME, PATH, …)
    plus the configured ``env``: the service's own secrets never reach it unless the config passes them."""
    return StdioServerParameters(command=executable, args=list(args), env=dict(env), cwd=REPO_ROOT)


class McpSource:
    """One MCP server. ``list_tools`` and ``call`` each open their own session (see the module docstring);
    both raise :class:`McpNotAllowed`, :class:`McpTimeout` or :class:`McpUnavailable`, never a raw error."""

    def __init__(self, spec: McpServerSpec, *, egress: EgressCheck) -> None:
        if (spec.command is None) == (spec.url is None):
            raise ValueError(f"MCP server {spec.name!r} needs exactly one of command and url")
        self.name = spec.name
        self.command = list(spec.command) if spec.command is not None else None
        if self.command is not None:
            if not self.command:
                raise ValueError(f"MCP server {spec.name!r} has an empty command")
            executable = resolve_executable(self.command[0])
            if executable is None:  # a typo fails the start, not every question that would call it
                raise ValueError(f"MCP server {spec.name!r}: the command {self.command[0]} is not found")
            self.command[0] = executable
        self.url = spec.url
        self.allowed_tools = frozenset(spec.allowed_tools)
        self.timeout_s = float(spec.timeout_s)
        self.env = dict(spec.env)
        self.egress = egress

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "streamable-http"

    async def list_tools(self) -> list[McpToolInfo]:
        """The server's tools that ``allowed_tools`` names, in the server's order."""
        return await self._in_session(self._allowed)

    async def call(
        self, tool: str, choose_arguments: Callable[[McpToolInfo], dict[str, Any] | None]
    ) -> tuple[McpToolInfo, dict[str, Any], CallToolResult] | None:
        """Calls ``tool`` with the arguments ``choose_arguments`` picks from its listed input schema; None
        when it picks none (the question does not give what the tool requires: nothing is called). A tool off
        ``allowed_tools``, or one the server does not list, is never called."""
        if tool not in self.allowed_tools:
            raise McpNotAllowed(f"tool {tool!r} is not allowed on MCP server {self.name!r}")

        async def run(client: Client) -> tuple[McpToolInfo, dict[str, Any], CallToolResult] | None:
            listed = {t.name: t for t in await self._allowed(client)}
            info = listed.get(tool)
            if info is None:
                raise McpUnavailable(f"MCP server {self.name!r} does not list the tool {tool!r}")
            arguments = choose_arguments(info)
            if arguments is None:
                return None
            return info, arguments, await client.call_tool(tool, arguments)

        return await self._in_session(run)

    # ------------------------------------------------------------------ sessions

    async def _allowed(self, client: Client) -> list[McpToolInfo]:
        found: list[McpToolInfo] = []
        cursor: str | None = None
        for _ in range(_MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            found.extend(t for t in page.tools if t.name in self.allowed_tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return found

    async def _in_session(self, work: Callable[[Client], Awaitable[_T]]) -> _T:
        """Runs ``work`` in a fresh session under the source's timeout. The session runs in its own task and
        hands its result over as soon as it has one: closing (over stdio, the server process gets a bounded
        grace period to exit) finishes in the background, and so does a session stopped at its deadline."""
        if self.url is not None and not self.egress.allows(self.url):
            raise McpNotAllowed(f"MCP server {self.name!r}: {self.url} is not on the egress allowlist")
        errlog = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8"))  # a stdio server's stderr
        outcome: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(self._session(work, errlog, outcome))
        _CLOSING.add(task)

        def closed(t: asyncio.Task[None]) -> None:
            _CLOSING.discard(t)
            errlog.close()

        task.add_done_callback(closed)
        try:
            done, _ = await asyncio.wait({outcome}, timeout=self.timeout_s)
        except asyncio.CancelledError:  # the request's own deadline: stop the session, let it close alone
            task.cancel()
            raise
        if not done:
            task.cancel()
            outcome.cancel()
            raise McpTimeout(f"MCP server {self.name!r} did not answer within {self.timeout_s:g} s")
        return outcome.result()

    async def _session(
        self, work: Callable[[Client], Awaitable[_T]], errlog: TextIO, outcome: asyncio.Future[_T]
    ) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = Client(
                    await self._transport(stack, errlog),
                    read_timeout_seconds=self.timeout_s,
                    cache=None,  # a session lives for one call: nothing to reuse
                    client_info=Implementation(name="aceh-rag", version="0.1.0"),
                )
                async with client:
                    value = await work(client)
                    if not outcome.done():
                        outcome.set_result(value)
        except Exception as exc:  # connection refused, process died, protocol error, server-side error …
            if outcome.done():
                log.debug("MCP server %s: closing the session failed: %r", self.name, exc)
                return
            known = _find(exc, McpNotAllowed) or _find(exc, McpUnavailable)
            if known is None:
                errlog.seek(0)
                tail = errlog.read()[-500:].strip()
                shown = f" (stderr: {tail})" if tail else ""
                log.warning("MCP server %s failed: %r%s", self.name, exc, shown)
                known = McpUnavailable(f"MCP server {self.name!r} failed ({type(exc).__name__})")
            outcome.set_exception(known)

    async def _transport(self, stack: AsyncExitStack, errlog: TextIO) -> Transport:
        if self.command is not None:
            from mcp.client.stdio import stdio_client

            return stdio_client(_stdio_parameters(self.command[0], self.command[1:], self.env), errlog=errlog)
        assert self.url is not None

        async def on_request(request: httpx2.Request) -> None:
            # The SDK follows only same-origin redirects; checking every request keeps even those on the list.
            if not self.egress.allows(str(request.url)):
                raise McpNotAllowed(f"MCP server {self.name!r}: {request.url} is not on the egress allowlist")

        http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(self.timeout_s),
            trust_env=False,  # no proxy from the environment: the allowlist names the hosts really reached
            event_hooks={"request": [on_request]},
        )
        await stack.enter_async_context(http)  # a client passed to the SDK is ours to close
        return streamable_http_client(self.url, http_client=http)


def _find(exc: BaseException, kind: type[_E]) -> _E | None:
    """``exc`` itself or the first ``kind`` inside it (the SDK's task groups wrap errors in groups)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find(inner, kind)
            if found is not None:
                return found
    return None
