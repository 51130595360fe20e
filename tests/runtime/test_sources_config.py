"""The ``sources:`` section: off by default, every refusal one sentence, URLs held to the egress allowlist,
the BPS key never read from the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve_app.config import ConfigError, SourcesConfig, host_allowed, load_config
from tests.conftest import REPO


def _load(tmp_path: Path, text: str) -> SourcesConfig:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(str(path), env={}).sources


def test_default_config_has_no_live_source() -> None:
    sources = load_config(str(REPO / "configs" / "default.yaml"), env={}).sources
    assert sources == SourcesConfig()
    assert (sources.sql, sources.ckan, sources.bps, sources.mcp, sources.egress_allowlist) == (
        None, [], None, [], []
    )


def test_a_full_section_loads(tmp_path: Path) -> None:
    sources = _load(
        tmp_path,
        "sources:\n"
        "  egress_allowlist: [data.example.id, 127.0.0.1:8123]\n"
        "  sql: {url: 'sqlite:///stats.sqlite', tables: [penduduk], schema: main, max_rows: 20}\n"
        "  ckan: [{name: satudata, base_url: 'https://data.example.id', organization: bps-aceh}]\n"
        "  bps: {base_url: 'http://127.0.0.1:8123', domain: '1100'}\n"
        "  mcp:\n"
        "    - {name: local, command: [python, -m, x], allowed_tools: [figures]}\n"
        "    - {name: remote, url: 'http://127.0.0.1:8123/mcp', allowed_tools: [figures], env: {A: b}}\n",
    )
    assert sources.sql is not None and sources.sql.db_schema == "main" and sources.sql.max_rows == 20
    assert sources.ckan[0].organization == "bps-aceh" and sources.ckan[0].timeout_s == 5.0
    assert sources.bps is not None and sources.bps.key_env == "ACEH_BPS_KEY"
    assert [m.timeout_s for m in sources.mcp] == [10.0, 10.0]


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            "sources:\n  ckan: [{name: a, base_url: 'https://data.example.id'}]\n",
            "ckan 'a' URL https://data.example.id is not on sources.egress_allowlist",
        ),
        (
            "sources:\n  egress_allowlist: [data.example.id:443]\n"
            "  bps: {base_url: 'https://data.example.id:8443'}\n",
            "bps URL https://data.example.id:8443 is not on sources.egress_allowlist",
        ),
        (
            "sources:\n  egress_allowlist: [x.id]\n"
            "  mcp: [{name: m, url: 'http://y.id/mcp', allowed_tools: [t]}]\n",
            "mcp 'm' URL http://y.id/mcp is not on sources.egress_allowlist",
        ),
        (
            "sources:\n  egress_allowlist: [x.id]\n  bps: {base_url: 'http://x.id', key: secret}\n",
            "the BPS key is never read from the config file",
        ),
        ("sources:\n  egress_allowlist: ['https://x.id']\n", "is not a host or host:port"),
        ("sources:\n  sql: {url: 'mysql://u@h/db'}\n", "only sqlite:/// and postgresql:// URLs"),
        ("sources:\n  sql: {url: 'sqlite:///x', tables: ['a; drop']}\n", "is not a plain table name"),
        ("sources:\n  mcp: [{name: m, allowed_tools: [t]}]\n", "needs exactly one of command"),
        (
            "sources:\n  mcp: [{name: m, command: [x], url: 'http://x.id', allowed_tools: [t]}]\n",
            "needs exactly one of command",
        ),
        ("sources:\n  mcp: [{name: m, command: [x], allowed_tools: []}]\n", "allowed_tools"),
        ("sources:\n  egress_allowlist: [x.id]\n  ckan: [{name: a, base_url: 'ftp://x.id'}]\n", "http://"),
        ("sources:\n  sqlite: {url: 'sqlite:///x'}\n", "sources.sqlite"),
    ],
)
def test_refusals_are_one_sentence(tmp_path: Path, text: str, sentence: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    message = str(info.value)
    assert sentence in message
    assert message.endswith(".") and "\n" not in message


@pytest.mark.parametrize(
    ("allowlist", "url", "allowed"),
    [
        (["x.id"], "https://x.id/api", True),
        (["x.id"], "https://X.ID:8443/api", True),  # a bare host allows every port
        (["x.id:80"], "http://x.id:8080/", False),
        (["x.id"], "http://x.id.evil.example/", False),
        (["x.id"], "http://evil.example/?x.id", False),
        (["x.id"], "http://x.id@evil.example/", False),
        (["x.id"], "file:///etc/passwd", False),
        (["127.0.0.1:9"], "http://127.0.0.1:9/", True),
        (["[::1]:9"], "http://[::1]:9/", True),
        ([], "http://x.id/", False),
    ],
)
def test_host_allowed(allowlist: list[str], url: str, allowed: bool) -> None:
    assert host_allowed(allowlist, url) is allowed
