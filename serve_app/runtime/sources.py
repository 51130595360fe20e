"""The live-source tools of ``sources:`` in the config, each built only when its source is configured (seed
003: a tool that is not registered is never planned). One :class:`EgressPolicy`, built from
``sources.egress_allowlist``, is handed to every tool that calls out."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from serve_app.agent.tools.base import Tool
from serve_app.agent.tools.bps import BpsTool
from serve_app.agent.tools.ckan import CkanPortal, OpenDataTool
from serve_app.agent.tools.egress import EgressPolicy
from serve_app.agent.tools.sql import SqlQueryTool
from serve_app.config import REPO_ROOT, AppConfig, ConfigError
from serve_app.config.redact import redact_urls

log = logging.getLogger(__name__)


def build_live_tools(cfg: AppConfig, *, env: Mapping[str, str] | None = None) -> list[Tool]:
    """sql_query, open_data, bps (and the MCP tools) for the sources configured; none by default."""
    sources = cfg.sources
    env = os.environ if env is None else env
    egress = EgressPolicy.from_config(sources)
    tools: list[Tool] = []
    if sources.sql is not None:
        try:
            tools.append(SqlQueryTool.from_config(sources.sql, root=REPO_ROOT))
        except ValueError as exc:
            raise ConfigError(f"sources.sql: {redact_urls(str(exc)).rstrip('.')}.") from None
    if sources.ckan:
        tools.append(OpenDataTool([CkanPortal.from_config(p) for p in sources.ckan], egress=egress))
    if sources.bps is not None:
        bps = sources.bps
        key = env.get(bps.key_env) or None
        if key is None:
            # Registered all the same: a statistics question then says honestly that BPS is off here.
            log.warning("sources.bps is configured but %s is not set; BPS answers 'not enabled'", bps.key_env)
        tools.append(
            BpsTool(bps.base_url, api_key=key, egress=egress, domain=bps.domain, timeout_s=bps.timeout_s)
        )
    if sources.mcp:  # imported only then: the MCP SDK is not loaded by a service without MCP servers
        from serve_app.agent.tools.mcp_tool import build_mcp_tools

        tools.extend(build_mcp_tools(sources.mcp, egress))
    return tools
