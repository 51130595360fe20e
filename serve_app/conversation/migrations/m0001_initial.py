"""Migration 1: the first schema. A snapshot; never edit it once released (add a new step instead)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

JSONType = JSON().with_variant(JSONB(), "postgresql")


def _ref(target: str) -> ForeignKey:
    return ForeignKey(target, ondelete="CASCADE")


def upgrade(conn: Connection) -> None:
    meta = MetaData()
    Table(
        "conversations",
        meta,
        Column("id", String(64), primary_key=True),
        Column("owner", String(512), nullable=False),
        Column("route", String(8), nullable=True),
        Column("created_at", DateTime(timezone=True), nullable=False),
        CheckConstraint("route IS NULL OR route IN ('v1', 'v2')", name="ck_conversations_route"),
        Index("ix_conversations_owner", "owner"),
    )
    Table(
        "messages",
        meta,
        Column("id", String(64), primary_key=True),
        Column("conversation_id", String(64), _ref("conversations.id"), nullable=False),
        Column("ordinal", Integer, nullable=False),
        Column("role", String(16), nullable=False),
        Column("content", Text, nullable=False),
        Column("body", JSONType, nullable=True),
        Column("claims", JSONType, nullable=True),
        Column("framing", JSONType, nullable=True),
        Column("v2_faithfulness", JSONType, nullable=True),
        Column("created_at", DateTime(timezone=True), nullable=False),
        CheckConstraint("role IN ('user', 'assistant')", name="ck_messages_role"),
        UniqueConstraint("conversation_id", "ordinal", name="uq_messages_conversation_ordinal"),
    )
    Table(
        "memory_items",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("owner", String(512), nullable=False),
        Column("conversation_id", String(64), _ref("conversations.id"), nullable=False),
        Column("source_message_id", String(64), _ref("messages.id"), nullable=False),
        Column("text", Text, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Index("ix_memory_items_owner", "owner"),
    )
    Table(
        "playground_receipts",
        meta,
        Column("run_id", String(64), primary_key=True),
        Column("admin", String(512), nullable=False),
        Column("status", String(64), nullable=False),
        Column("counts", JSONType, nullable=False),
        Column("started_at", DateTime(timezone=True), nullable=False),
        Column("finished_at", DateTime(timezone=True), nullable=False),
    )
    Table(
        "rate_limit",
        meta,
        Column("key", String(512), nullable=False),
        Column("window_start_ms", BigInteger, nullable=False),
        Column("count", Integer, nullable=False),
        PrimaryKeyConstraint("key", "window_start_ms", name="pk_rate_limit"),
    )
    meta.create_all(conn)
