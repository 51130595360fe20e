"""The rate limit shared by every replica through the store (``/playground``, per admin): a moving window.

One row per admitted hit (``rate_hits``): a hit is admitted while fewer than ``limit`` hits of its key lie
in the last ``window_s``, so no span of ``window_s`` ever holds more than ``limit``, where the fixed window
it replaces let a caller send its limit before a window edge and again after it. Rows older than the window
are deleted on the key's next hit, so a key holds at most ``limit`` rows.

Exact under contention: the check and the insert run in the store's write transaction, serialised per key
by a transaction-scoped advisory lock on PostgreSQL and by ``BEGIN IMMEDIATE`` on SQLite.
"""

from __future__ import annotations

import zlib

from sqlalchemy import select, text
from sqlalchemy.engine import Connection

from serve_app.conversation.tables import t_rate_hits


def _lock_key(key: str) -> int:
    return zlib.crc32(f"aceh-rag-rate:{key}".encode()) & 0x7FFFFFFF


def hit_moving_window(
    conn: Connection, dialect: str, key: str, limit: int, window_s: float, now: float
) -> float | None:
    """Count one hit of ``key`` at ``now`` (epoch seconds) inside the caller's write transaction. None when
    admitted; otherwise the seconds until the oldest hit in the window leaves it (Retry-After)."""
    if window_s <= 0:
        raise ValueError("window_s must be positive")
    if limit <= 0:
        return window_s
    now_ms, window_ms = int(now * 1000), int(window_s * 1000)
    if dialect == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_key(key)})
    hits = t_rate_hits.c
    conn.execute(t_rate_hits.delete().where(hits.key == key, hits.at_ms <= now_ms - window_ms))
    in_window: list[int] = list(conn.execute(
        select(hits.at_ms).where(hits.key == key).order_by(hits.at_ms).limit(limit)
    ).scalars())
    if len(in_window) < limit:
        conn.execute(t_rate_hits.insert().values(key=key, at_ms=now_ms))
        return None
    return max((int(in_window[0]) + window_ms - now_ms) / 1000, 0.001)
