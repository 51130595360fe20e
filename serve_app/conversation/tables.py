"""The store's tables (SQLAlchemy Core): conversations, their messages, long-term memory, playground
receipts, the cross-replica rate-limit hits and the v1 artifacts. JSON columns are JSONB on PostgreSQL."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.dialects import postgresql

_JSON = JSON().with_variant(postgresql.JSONB(), "postgresql")

metadata = MetaData()
t_conversations = Table(
    "conversations", metadata,
    Column("id", String(64), primary_key=True),
    Column("owner", String(512), nullable=False),
    Column("route", String(8)),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
t_messages = Table(
    "messages", metadata,
    Column("id", String(64), primary_key=True),
    Column("conversation_id", String(64), nullable=False),
    Column("ordinal", Integer, nullable=False),
    Column("role", String(16), nullable=False),
    Column("content", Text, nullable=False),
    Column("body", _JSON),
    Column("claims", _JSON),
    Column("framing", _JSON),
    Column("v2_faithfulness", _JSON),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
t_memory = Table(
    "memory_items", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("owner", String(512), nullable=False),
    Column("conversation_id", String(64), nullable=False),
    Column("source_message_id", String(64), nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
t_receipts = Table(
    "playground_receipts", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("admin", String(512), nullable=False),
    Column("status", String(64), nullable=False),
    Column("counts", _JSON, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
)
t_rate_hits = Table(
    "rate_hits", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(512), nullable=False),
    Column("at_ms", BigInteger, nullable=False),
)
t_artifacts = Table(
    "artifacts", metadata,
    Column("id", String(64), primary_key=True),
    Column("owner", String(512), nullable=False),
    Column("name", String(256), nullable=False),
    Column("media_type", String(128), nullable=False),
    Column("content", LargeBinary, nullable=False),
    Column("rows", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)
