"""The live sources (all off by default): the read-only SQL source, CKAN portals, the BPS WebAPI and MCP
servers, each reachable only through the egress allowlist."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, field_validator, model_validator

from serve_app.config.base import StrictModel

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_HOST_ENTRY = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$|^\[[0-9a-f:.]+\](:[0-9]{1,5})?$")


def host_allowed(allowlist: Collection[str], url: str) -> bool:
    """Whether an http(s) URL's host (or host:port) is on the egress allowlist; the one matching rule, used
    by config validation and by the egress policy that every live-source call goes through."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname.lower()
    shown = f"[{host}]" if ":" in host else host
    allowed = {a.lower() for a in allowlist}
    return shown in allowed or (port is not None and f"{shown}:{port}" in allowed)


class SqlSourceConfig(StrictModel):
    """A structured source read through ``sql_query``: SQLite (opened ``mode=ro``) or PostgreSQL (read-only
    role, READ ONLY transaction with ``statement_timeout``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    url: str = Field(min_length=1)
    tables: list[str] | None = None  # None: every table (of ``schema`` when set)
    db_schema: str | None = Field(None, alias="schema")  # "schema" would shadow a BaseModel attribute
    max_rows: int = Field(200, ge=1, le=10000)
    timeout_s: float = Field(5.0, gt=0, le=300)

    @field_validator("url")
    @classmethod
    def _read_only_dialect(cls, value: str) -> str:
        # Only these two have a read-only mode this service enforces; another dialect would run unguarded.
        if not re.match(r"^(sqlite|postgresql)(\+[a-z0-9_]+)?://", value):
            raise ValueError("only sqlite:/// and postgresql:// URLs are read-only here")
        return value

    @field_validator("tables")
    @classmethod
    def _identifiers(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if not _IDENTIFIER.match(name):
                raise ValueError(f"'{name}' is not a plain table name")
        return value

    @field_validator("db_schema")
    @classmethod
    def _schema_identifier(cls, value: str | None) -> str | None:
        if value is not None and not _IDENTIFIER.match(value):
            raise ValueError(f"'{value}' is not a plain schema name")
        return value


class CkanPortalConfig(StrictModel):
    """A CKAN portal (OpenData, SatuData) read with ``package_search`` then ``datastore_search``."""

    name: str = Field(min_length=1)
    base_url: str = Field(min_length=1)
    organization: str | None = None  # CKAN organisation name: only its datasets are searched
    timeout_s: float = Field(5.0, gt=0, le=300)


class BpsConfig(StrictModel):
    """The BPS WebAPI. Its key comes from the environment variable ``key_env``, never from this file."""

    base_url: str = Field(min_length=1)
    key_env: str = Field("ACEH_BPS_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    domain: str | None = Field(None, pattern=r"^[0-9]{4}$")  # None: 1100, the Aceh province
    timeout_s: float = Field(5.0, gt=0, le=300)

    @model_validator(mode="before")
    @classmethod
    def _no_key_in_file(cls, data: Any) -> Any:
        if isinstance(data, dict) and ({"key", "api_key"} & set(data)):
            raise ValueError("the BPS key is never read from the config file; put it in the environment "
                             "variable named by key_env")
        return data


class McpServerConfig(StrictModel):
    """An MCP server: a stdio ``command`` or a streamable HTTP ``url``, and the tools allowed from it."""

    name: str = Field(min_length=1)
    command: list[str] | None = Field(None, min_length=1)
    url: str | None = None
    allowed_tools: list[str] = Field(min_length=1)
    timeout_s: float = Field(10.0, gt=0, le=300)
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server '{self.name}' needs exactly one of command (stdio) or url (HTTP)")
        return self


class SourcesConfig(StrictModel):
    egress_allowlist: list[str] = Field(default_factory=list)  # model servers are configured separately
    sql: SqlSourceConfig | None = None
    ckan: list[CkanPortalConfig] = Field(default_factory=list)
    bps: BpsConfig | None = None
    mcp: list[McpServerConfig] = Field(default_factory=list)

    @field_validator("egress_allowlist")
    @classmethod
    def _entries(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not _HOST_ENTRY.match(entry.lower()):
                raise ValueError(f"'{entry}' is not a host or host:port (no scheme, no path)")
        return [entry.lower() for entry in value]

    @model_validator(mode="after")
    def _urls_on_allowlist(self) -> SourcesConfig:
        urls = [(f"ckan '{p.name}'", p.base_url) for p in self.ckan]
        urls += [("bps", self.bps.base_url)] if self.bps is not None else []
        urls += [(f"mcp '{m.name}'", m.url) for m in self.mcp if m.url is not None]
        for what, url in urls:
            if not re.match(r"^https?://", url):
                raise ValueError(f"{what} URL {url} must start with http:// or https://")
            if not host_allowed(self.egress_allowlist, url):
                raise ValueError(f"{what} URL {url} is not on sources.egress_allowlist")
        for kind, names in (("ckan", [p.name for p in self.ckan]), ("mcp", [m.name for m in self.mcp])):
            if len(set(names)) != len(names):
                raise ValueError(f"two {kind} entries share a name; each needs its own")
        return self
