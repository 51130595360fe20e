"""The factory registers a live tool only when its source is configured; the default registers none, the
demo config all three (over its fictional database, whose SQL text is what the shipped file holds)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from serve_app.agent.tools.bps import BpsTool
from serve_app.config import ConfigError, load_config
from serve_app.demo.open_data import DEMO_DIR, build_stats_db
from serve_app.runtime import factory
from serve_app.runtime.sources import build_live_tools
from tests.conftest import REPO
from tests.support.agents import FakeRetriever, port_of

BASE_TOOLS = {"search", "legal_check", "cross_reference", "summarize", "table_query"}


def test_default_config_registers_no_live_tool() -> None:
    cfg = load_config(str(REPO / "configs" / "default.yaml"), env={})
    assert build_live_tools(cfg, env={}) == []
    agent = factory.build_agent(cfg, retriever_port=port_of(FakeRetriever([])))
    assert set(agent.tools) == BASE_TOOLS
    assert agent.planner.available == frozenset(BASE_TOOLS)


def test_demo_config_registers_each_configured_source() -> None:
    cfg = load_config(str(REPO / "configs" / "demo_sources.yaml"), env={})
    tools = {t.name: t for t in build_live_tools(cfg, env={"ACEH_BPS_KEY": "demo-bps-key"})}
    assert set(tools) == {"sql_query", "open_data", "bps", "mcp:demo:cari_statistik"}
    bps = tools["bps"]
    assert isinstance(bps, BpsTool) and bps.api_key == "demo-bps-key" and bps.domain == "1100"
    agent = factory.build_agent(cfg, retriever_port=port_of(FakeRetriever([])))
    assert set(agent.tools) == BASE_TOOLS | {"sql_query", "open_data", "bps", "mcp:demo:cari_statistik"}


def test_a_missing_bps_key_leaves_bps_saying_so() -> None:
    cfg = load_config(str(REPO / "configs" / "demo_sources.yaml"), env={})
    (bps,) = [t for t in build_live_tools(cfg, env={}) if t.name == "bps"]
    assert isinstance(bps, BpsTool) and bps.api_key is None


def test_only_the_configured_sources_are_registered(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("sources:\n  egress_allowlist: [x.id]\n  ckan: [{name: a, base_url: 'http://x.id'}]\n")
    assert [t.name for t in build_live_tools(load_config(str(path), env={}), env={})] == ["open_data"]


def test_unusable_sources_fail_at_start_with_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("sources:\n  sql: {url: 'sqlite:///no/such/file.sqlite'}\n")
    with pytest.raises(ConfigError, match=r"^sources.sql: the SQLite file .* does not exist\.$"):
        build_live_tools(load_config(str(path), env={}), env={})
    path.write_text("sources:\n  mcp: [{name: m, command: [no-such-mcp-server], allowed_tools: [t]}]\n")
    with pytest.raises(ConfigError, match=r"^MCP server 'm': the command no-such-mcp-server is not found\.$"):
        build_live_tools(load_config(str(path), env={}), env={})


def test_shipped_demo_database_is_built_from_its_sql(tmp_path: Path) -> None:
    def dump(db: Path) -> list[str]:
        with sqlite3.connect(db) as conn:
            lines = list(conn.iterdump())
        conn.close()
        return lines

    built = build_stats_db(DEMO_DIR / "stats.sql", tmp_path / "stats.sqlite")
    assert dump(built) == dump(DEMO_DIR / "stats.sqlite")
