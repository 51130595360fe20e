"""Versioned schema migrations for the store.

``MIGRATIONS`` is the ordered list of steps; ``schema_version`` records the ones applied. A released step
is never edited: a schema change is a new module appended to the list. Every pending step runs in one
transaction under a lock (a PostgreSQL advisory lock, SQLite ``BEGIN IMMEDIATE``), so replicas that
start together apply each step once.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, select
from sqlalchemy.engine import Connection

from serve_app.conversation.migrations import m0001_initial, m0002_artifacts, m0003_rate_hits

Migration = tuple[int, str, Callable[[Connection], None]]

MIGRATIONS: list[Migration] = [
    (1, "conversations, messages, memory, playground receipts, rate limits", m0001_initial.upgrade),
    (2, "v1 artifacts (CSV/XLSX) with owner and expiry", m0002_artifacts.upgrade),
    (3, "moving-window rate limit hits replace the fixed-window counters", m0003_rate_hits.upgrade),
]
LATEST_VERSION = MIGRATIONS[-1][0]

_meta = MetaData()
schema_version = Table(
    "schema_version",
    _meta,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("description", String(200), nullable=False),
    Column("applied_at", DateTime(timezone=True), nullable=False),
)


def lock_key(namespace: str) -> int:
    """A stable 31-bit advisory lock key per schema, so parallel test schemas do not wait on each other."""
    return zlib.crc32(f"aceh-rag-migrate:{namespace}".encode()) & 0x7FFFFFFF


def upgrade(conn: Connection) -> list[int]:
    """Apply the pending steps on ``conn`` (already inside its locked transaction); the versions applied."""
    schema_version.create(conn, checkfirst=True)
    current = conn.execute(select(schema_version.c.version)).scalars().all()
    done = set(current)
    applied = []
    for version, description, step in MIGRATIONS:
        if version in done:
            continue
        step(conn)
        row = {"version": version, "description": description, "applied_at": datetime.now(UTC)}
        conn.execute(schema_version.insert().values(**row))
        applied.append(version)
    return applied


def current_version(conn: Connection) -> int:
    """The newest applied version, 0 for an empty database."""
    if not conn.dialect.has_table(conn, "schema_version"):
        return 0
    versions = conn.execute(select(schema_version.c.version)).scalars().all()
    return max(versions, default=0)
