"""Retention: delete conversations idle longer than a set age, and long-term memory items older than one.

Nothing is deleted unless the operator asked: ``conversations.retention_days`` /
``conversations.memory_retention_days`` in the config (then each replica prunes at most once per
``prune_interval_s``, after a write: :class:`RetentionSchedule`), or ``aceh-rag prune`` with ages given on
the command line. A conversation's age is that of its newest message (its creation when it has none), so a
conversation in use is never pruned; its messages and memory items go with it (the schema's foreign keys
cascade; they are deleted explicitly here so the report counts them). Memory items also have an age of
their own, for owners whose conversations stay.

Concurrent writers (PostgreSQL): the stale conversations are locked (``FOR UPDATE``) and then chosen again
in a fresh statement, so a turn that was appended while the lock was awaited keeps its conversation; a turn
that arrives after the delete finds no conversation (404), as for any deleted one. SQLite's writers are
serialised by the store's ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, exists, select

from serve_app.conversation.store import Store
from serve_app.conversation.tables import t_conversations, t_memory, t_messages

log = logging.getLogger(__name__)
_BATCH = 500  # conversation ids per DELETE … IN (…): keeps statements small on a large first prune


@dataclass(frozen=True)
class RetentionPolicy:
    """Ages in days; None keeps that kind of data for ever."""

    conversation_days: float | None = None
    memory_days: float | None = None

    def __post_init__(self) -> None:
        for days in (self.conversation_days, self.memory_days):
            if days is not None and not (math.isfinite(days) and days > 0):
                raise ValueError("A retention age must be a positive number of days.")

    @property
    def empty(self) -> bool:
        return self.conversation_days is None and self.memory_days is None


@dataclass(frozen=True)
class PruneReport:
    conversations: int = 0
    messages: int = 0
    memory_items: int = 0

    def summary(self) -> str:
        return (
            f"prune: {self.conversations} conversations ({self.messages} messages) and "
            f"{self.memory_items} memory items deleted"
        )


def _stale_ids(conn: Connection, cutoff: datetime, among: Sequence[str] | None, lock: bool) -> list[str]:
    conv = t_conversations.c
    recent = exists().where(t_messages.c.conversation_id == conv.id, t_messages.c.created_at >= cutoff)
    query = select(conv.id).where(conv.created_at < cutoff, ~recent)
    if among is not None:
        query = query.where(conv.id.in_(among))
    if lock:
        query = query.with_for_update(of=t_conversations)
    return [row.id for row in conn.execute(query)]


def prune(store: Store, policy: RetentionPolicy, *, now: datetime | None = None) -> PruneReport:
    """Delete what ``policy`` says is too old, in one transaction; returns the counts."""
    now = now or datetime.now(UTC)
    conversations = messages = memory = 0
    with store._write() as conn:  # the store's write transaction (BEGIN IMMEDIATE on SQLite)
        if policy.conversation_days is not None:
            cutoff = now - timedelta(days=policy.conversation_days)
            locked = _stale_ids(conn, cutoff, None, lock=store.dialect == "postgresql")
            for start in range(0, len(locked), _BATCH):
                ids = _stale_ids(conn, cutoff, locked[start : start + _BATCH], lock=False)
                if not ids:
                    continue
                memory += conn.execute(t_memory.delete().where(t_memory.c.conversation_id.in_(ids))).rowcount
                gone = t_messages.delete().where(t_messages.c.conversation_id.in_(ids))
                messages += conn.execute(gone).rowcount
                conversations += conn.execute(
                    t_conversations.delete().where(t_conversations.c.id.in_(ids))
                ).rowcount
        if policy.memory_days is not None:
            cutoff = now - timedelta(days=policy.memory_days)
            memory += conn.execute(t_memory.delete().where(t_memory.c.created_at < cutoff)).rowcount
    return PruneReport(conversations, messages, memory)


@dataclass(eq=False)
class RetentionSchedule:
    """Prune after a write, at most once per ``interval_s`` in this process, off the request's path."""

    store: Store
    policy: RetentionPolicy
    interval_s: float = 3600.0
    clock: Callable[[], float] = time.monotonic
    _next_at: float = field(default=-math.inf, init=False)
    _task: asyncio.Task[None] | None = field(default=None, init=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, init=False)

    def _claim(self) -> bool:
        with self._guard:
            now = self.clock()
            if now < self._next_at or (self._task is not None and not self._task.done()):
                return False
            self._next_at = now + self.interval_s
            return True

    def after_write(self) -> None:
        """Start a prune in a thread when one is due; the answer does not wait for it."""
        if not self.policy.empty and self._claim():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            report = await asyncio.to_thread(prune, self.store, self.policy)
        except Exception as exc:  # noqa: BLE001 - a failed prune is retried at the next interval
            log.warning(
                "retention prune failed (%s); retrying after %.0f s", type(exc).__name__, self.interval_s
            )
            return
        if report.conversations or report.memory_items:
            log.info(report.summary())

    async def idle(self) -> None:
        """Wait for a running prune (tests, shutdown)."""
        if self._task is not None:
            await self._task
