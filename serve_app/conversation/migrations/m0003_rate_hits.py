"""Migration 3: the shared rate limit becomes a moving window: one row per admitted hit (``rate_hits``)
replaces the fixed-window counters (``rate_limit``), which let a caller send twice its limit around a
window edge. The counters are transient, so they are dropped, not carried over. A snapshot; never edit it
once released."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, MetaData, String, Table
from sqlalchemy.engine import Connection


def upgrade(conn: Connection) -> None:
    meta = MetaData()
    Table(
        "rate_hits",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("key", String(512), nullable=False),
        Column("at_ms", BigInteger, nullable=False),
        Index("ix_rate_hits_key_at", "key", "at_ms"),
    )
    meta.create_all(conn)
    old = Table("rate_limit", MetaData(), Column("key", String(512), primary_key=True))
    old.drop(conn, checkfirst=True)
