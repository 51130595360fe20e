"""Real MCP servers for the tests, built with the SDK's ``MCPServer``: the demo server
(serve_app/demo/mcp_server.py) and faulty ones, run as processes over stdio or streamable HTTP.

    python -m tests.support.mcp_servers MODE [--transport stdio|streamable-http] [--port N]

MODE ``fail``: its ``cari_statistik`` raises (the server answers with an error result); ``hang``: it never
returns. Both list the tool with the demo's input schema, so the client gets as far as the call.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

from tests.support.net import free_port

REPO = Path(__file__).resolve().parents[2]

SECRET = "kata-sandi-basis-data-rahasia"  # a server's error text that must never reach an answer
PYTHON = sys.executable


@dataclass
class Spec:
    """A ``sources.mcp`` entry (the fields of serve_app/config/sources.py ``McpServerConfig``)."""

    name: str
    command: list[str] | None = None
    url: str | None = None
    allowed_tools: list[str] = field(default_factory=lambda: ["cari_statistik"])
    timeout_s: float = 30.0  # a loaded test host may take seconds to start a stdio server
    env: dict[str, str] = field(default_factory=dict)


def demo_command() -> list[str]:
    return [PYTHON, "-m", "serve_app.demo.mcp_server"]


def faulty_command(mode: str) -> list[str]:
    return [PYTHON, "-m", "tests.support.mcp_servers", mode]


def build_faulty(mode: str) -> MCPServer:
    server: MCPServer = MCPServer(f"faulty-{mode}", log_level="WARNING")

    @server.tool()
    async def cari_statistik(query: str, tahun: int | None = None) -> str:
        """Statistik (rusak)."""
        if mode == "hang":
            await anyio.sleep(3600)
        raise RuntimeError(f"connection to postgres failed, password={SECRET}")

    return server


def _wait_listening(port: int, process: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the MCP server exited with {process.returncode} before it listened")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the MCP server did not listen on {port} within {timeout_s:.0f} s")


@contextmanager
def http_server(command: list[str]) -> Iterator[str]:
    """Runs ``command --transport streamable-http --port P`` on a free port; yields its MCP endpoint URL."""
    port = free_port()
    process = subprocess.Popen(
        [*command, "--transport", "streamable-http", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("fail", "hang"))
    parser.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = build_faulty(args.mode)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
