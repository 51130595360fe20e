"""Migration 2: v1 artifacts (CSV/XLSX offered by ``/query``), each owned by the principal that asked and
kept until ``expires_at``. A snapshot; never edit it once released."""

from __future__ import annotations

from sqlalchemy import Column, DateTime, Index, Integer, LargeBinary, MetaData, String, Table
from sqlalchemy.engine import Connection


def upgrade(conn: Connection) -> None:
    meta = MetaData()
    Table(
        "artifacts",
        meta,
        Column("id", String(64), primary_key=True),
        Column("owner", String(512), nullable=False),
        Column("name", String(256), nullable=False),
        Column("media_type", String(128), nullable=False),
        Column("content", LargeBinary, nullable=False),
        Column("rows", Integer, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("expires_at", DateTime(timezone=True), nullable=False),
        Index("ix_artifacts_expires_at", "expires_at"),
    )
    meta.create_all(conn)
