"""Retention and the per-turn history cap, on SQLite and PostgreSQL (issue 35: unbounded growth)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from serve_app.conversation.exchange import Exchange
from serve_app.conversation.retention import PruneReport, RetentionPolicy, RetentionSchedule, prune
from serve_app.conversation.store import Store
from serve_app.conversation.tables import t_conversations, t_memory, t_messages
from tests.conversation.test_store import v2_body


def _conversation(store: Store, owner: str, turns: int, memory: tuple[str, ...] = ()) -> str:
    cid = uuid.uuid4().hex
    for turn in range(turns):
        store.write_exchange(
            Exchange(cid, owner, "v2", f"tanya {turn}", v2_body(f"jawab {turn}"), memory, new=turn == 0)
        )
    return cid


def _count(store: Store, table: object) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())  # type: ignore[arg-type]


def test_a_turn_reads_only_the_newest_messages(store: Store) -> None:
    cid = _conversation(store, "iss|a", 5)
    last = store.list_messages(cid, last=4)
    assert [m["content"] for m in last if m["role"] == "user"] == ["tanya 3", "tanya 4"]
    assert [m["ordinal"] for m in last] == [6, 7, 8, 9]  # in order, oldest first
    assert len(store.list_messages(cid)) == 10


def test_prune_deletes_only_idle_conversations_and_old_memory(store: Store) -> None:
    idle = _conversation(store, "iss|a", 2, ("catatan lama",))
    in_use = _conversation(store, "iss|b", 1, ("catatan baru",))
    later = datetime.now(UTC) + timedelta(days=29)
    with store.engine.begin() as conn:  # in_use got a turn 29 days on; its memory item is recent too
        newer = t_messages.update().where(t_messages.c.conversation_id == in_use).values(created_at=later)
        conn.execute(newer)
    policy = RetentionPolicy(conversation_days=30, memory_days=60)

    assert prune(store, policy, now=datetime.now(UTC) + timedelta(days=10)).conversations == 0
    report = prune(store, policy, now=datetime.now(UTC) + timedelta(days=31))
    assert (report.conversations, report.messages, report.memory_items) == (1, 4, 2)  # with its memory
    assert store.get_conversation(idle, "iss|a") is None and store.list_messages(idle) == []
    assert store.list_memory("iss|a") == []
    assert store.get_conversation(in_use, "iss|b") is not None and len(store.list_messages(in_use)) == 2
    assert len(store.list_memory("iss|b")) == 1

    # memory items have an age of their own: the conversation that holds them stays
    report = prune(store, RetentionPolicy(memory_days=60), now=datetime.now(UTC) + timedelta(days=61))
    assert report.memory_items == 1 and report.conversations == 0 and store.list_memory("iss|b") == []
    assert len(store.list_messages(in_use)) == 2


def test_no_age_means_nothing_is_deleted(store: Store) -> None:
    _conversation(store, "iss|a", 1, ("catatan",))
    assert RetentionPolicy().empty
    report = prune(store, RetentionPolicy(), now=datetime.now(UTC) + timedelta(days=10_000))
    assert report.conversations == report.memory_items == 0
    assert _count(store, t_conversations) == 1 and _count(store, t_memory) == 1
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            RetentionPolicy(conversation_days=bad)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_schedule_prunes_after_a_write_at_most_once_per_interval(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[RetentionPolicy] = []

    def counted(s: Store, p: RetentionPolicy) -> PruneReport:
        calls.append(p)
        return prune(s, p)

    monkeypatch.setattr("serve_app.conversation.retention.prune", counted)
    clock = Clock()
    schedule = RetentionSchedule(store, RetentionPolicy(conversation_days=1), interval_s=3600, clock=clock)

    async def writes() -> None:
        for _ in range(3):
            schedule.after_write()
            await schedule.idle()
        clock.now += 3600
        schedule.after_write()
        await schedule.idle()

    asyncio.run(writes())
    assert len(calls) == 2
