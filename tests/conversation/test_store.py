"""The store on SQLite and PostgreSQL: ownership (404), route families (409), atomic ordered turns,
the cross-process rate limit and text-free playground receipts."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from sqlalchemy import MetaData, inspect, select
from sqlalchemy.exc import StatementError

from serve_app import errors
from serve_app.conversation.exchange import Exchange
from serve_app.conversation.migrations import LATEST_VERSION
from serve_app.conversation.store import ConflictError, NotFoundError, PlaygroundReceipt, Store, database_url
from serve_app.conversation.tables import metadata as store_tables
from tests.conversation.conftest import Backend


def v2_body(answer: str, *, marker: str = "") -> dict[str, Any]:
    return {
        "schema": "annotate-v2",
        "answer": answer,
        "marker": marker,
        "claims": [{"text": answer, "verdict": "supported", "start": 0, "end": len(answer)}],
        "framing": [],
        "faithfulness": {"verification": "full"},
        "v2_faithfulness": {"verification": "full"},
    }


def test_database_url_uses_psycopg3() -> None:
    assert database_url("postgresql://u@h:5432/db") == "postgresql+psycopg://u@h:5432/db"
    assert database_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"
    with pytest.raises(ValueError):
        Store("mysql://u@h/db")
    with pytest.raises(ValueError):
        Store("sqlite://")


def test_migrations_are_versioned_and_idempotent(store: Store, backend: Backend) -> None:
    assert store.schema_version() == LATEST_VERSION
    assert store.migrate() == []
    again = backend.open()
    try:
        assert again.migrate() == [] and again.schema_version() == LATEST_VERSION
    finally:
        again.close()
    # The query-side table definitions match what the migrations created.
    with store.engine.connect() as conn:
        inspector = inspect(conn)
        for table in store_tables.sorted_tables:
            created = {c["name"] for c in inspector.get_columns(table.name)}
            assert created == {c.name for c in table.columns}, table.name


def test_sqlite_runs_in_wal_mode(store: Store, backend: Backend) -> None:
    if backend.name != "sqlite":
        pytest.skip("SQLite only")
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        busy_timeout = conn.exec_driver_sql("PRAGMA busy_timeout").scalar()
        assert busy_timeout is not None and busy_timeout >= 5000


def test_conversations_belong_to_their_owner(store: Store) -> None:
    created = store.create_conversation("iss|alice")
    cid = created["conversation_id"]
    assert created["created_at"].endswith("Z")
    record = store.get_conversation(cid, "iss|alice")
    assert record is not None and record.route is None and record.owner == "iss|alice"
    assert store.get_conversation(cid, "iss|bob") is None
    assert store.get_conversation("no-such-id", "iss|alice") is None
    assert store.read_conversation(cid, "iss|bob") is None
    empty: dict[str, Any] = {"conversation_id": cid, "route": None, "messages": []}
    assert store.read_conversation(cid, "iss|alice") == empty
    with pytest.raises(NotFoundError) as excinfo:
        store.append_exchange(Exchange(cid, "iss|bob", "v2", "q", v2_body("a")))
    assert excinfo.value.status_code == 404 and isinstance(excinfo.value, errors.NotFound)
    with pytest.raises(NotFoundError):
        store.append_exchange(Exchange("no-such-id", "iss|alice", "v2", "q", v2_body("a")))
    assert store.list_messages(cid) == []


def test_first_route_family_claims_the_conversation(store: Store) -> None:
    cid = store.create_conversation("o")["conversation_id"]
    assert store.claim_route(cid, "other", "v1") == "not_found"
    assert store.claim_route(cid, "o", "v1") == "ok"
    assert store.claim_route(cid, "o", "v1") == "ok"
    assert store.claim_route(cid, "o", "v2") == "conflict"
    with pytest.raises(ConflictError) as excinfo:
        store.append_exchange(Exchange(cid, "o", "v2", "q", v2_body("a")))
    assert excinfo.value.status_code == 409
    with pytest.raises(ValueError):
        store.claim_route(cid, "o", "v3")  # type: ignore[arg-type]

    fresh = store.create_conversation("o")["conversation_id"]
    store.append_exchange(Exchange(fresh, "o", "v2", "q", v2_body("a")))
    assert store.get_conversation(fresh, "o").route == "v2"  # type: ignore[union-attr]
    with pytest.raises(ConflictError):
        store.append_exchange(Exchange(fresh, "o", "v1", "q", {"answer": "a"}))


def test_concurrent_claims_have_one_winner(store: Store) -> None:
    for _ in range(3):
        cid = store.create_conversation("o")["conversation_id"]
        results: list[str] = []
        barrier = threading.Barrier(4)

        def claim(family: str, cid: str = cid) -> None:
            barrier.wait()
            results.append(store.claim_route(cid, "o", family))  # type: ignore[arg-type]

        threads = [threading.Thread(target=claim, args=(f,)) for f in ("v1", "v2", "v1", "v2")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winner = store.get_conversation(cid, "o").route  # type: ignore[union-attr]
        assert sorted(results) == ["conflict", "conflict", "ok", "ok"] and winner in ("v1", "v2")


def test_exchange_round_trip_keeps_the_answer_as_the_reader_saw_it(store: Store) -> None:
    cid = store.create_conversation("o")["conversation_id"]
    body = v2_body("Anggaran 2023 adalah Rp 5 miliar.", marker="m1")
    mid = store.append_exchange(Exchange(cid, "o", "v2", "Berapa anggarannya?", body, ["Anggaran 2023."]))
    user, assistant = store.list_messages(cid)
    assert (user["role"], user["content"], user["ordinal"]) == ("user", "Berapa anggarannya?", 0)
    assert (assistant["role"], assistant["message_id"], assistant["ordinal"]) == ("assistant", mid, 1)
    assert assistant["body"] == body and assistant["content"] == body["answer"]
    assert store.list_memory("o") == [
        {
            "text": "Anggaran 2023.",
            "conversation_id": cid,
            "source_message_id": mid,
            "created_at": assistant["created_at"],
        }
    ]
    assert store.list_memory("someone-else") == []


def test_start_conversation_stores_the_first_turn_and_claims_the_route(store: Store) -> None:
    body = v2_body("Anggaran 2023 adalah Rp 5 miliar.")
    mid = store.start_conversation(Exchange("c-new", "o", "v2", "Berapa anggarannya?", body, ["m"], new=True))
    assert store.get_conversation("c-new", "o").route == "v2"  # type: ignore[union-attr]
    assert store.get_conversation("c-new", "intruder") is None
    user, assistant = store.list_messages("c-new")
    assert (user["content"], user["ordinal"], assistant["message_id"], assistant["ordinal"]) == (
        "Berapa anggarannya?",
        0,
        mid,
        1,
    )
    assert assistant["body"] == body
    with pytest.raises(ConflictError):
        store.append_exchange(Exchange("c-new", "o", "v1", "q", v2_body("a")))
    # a failing first turn leaves no conversation behind
    not_json: Any = {"answer": "a", "bad": {1}}  # a body the type refuses, to see the store refuse it too
    with pytest.raises((TypeError, StatementError)):
        store.start_conversation(Exchange("c-bad", "o", "v2", "q", not_json, new=True))
    assert store.get_conversation("c-bad", "o") is None


@pytest.mark.parametrize("broken", ["body", "memory"])
def test_a_failing_exchange_leaves_nothing(store: Store, broken: str) -> None:
    cid = store.create_conversation("o")["conversation_id"]
    store.append_exchange(Exchange(cid, "o", "v2", "q0", v2_body("a0")))
    body = v2_body("a1")
    memory: list[Any] = ["ok"]
    not_json: Any = {"answer": "a", "bad": {1}}  # a body the type refuses, to see the store refuse it too
    if broken == "body":
        body["not_json"] = {1, 2}  # fails while the assistant row is written, after the user row
    else:
        memory.append(object())  # fails after both messages are written
    with pytest.raises((TypeError, StatementError)):  # SQLAlchemy wraps the JSON error on SQLite
        store.append_exchange(Exchange(cid, "o", "v2", "q1", body, memory))
    assert [m["content"] for m in store.list_messages(cid)] == ["q0", "a0"]
    assert store.list_memory("o") == []
    fresh = store.create_conversation("o")["conversation_id"]
    with pytest.raises((TypeError, StatementError)):
        store.append_exchange(Exchange(fresh, "o", "v1", "q", not_json))
    assert store.get_conversation(fresh, "o").route is None  # type: ignore[union-attr]  # claim rolled back


def test_concurrent_appends_never_interleave(store: Store) -> None:
    cid = store.create_conversation("o")["conversation_id"]
    barrier = threading.Barrier(8)
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        barrier.wait()
        try:
            for i in range(4):
                store.append_exchange(
                    Exchange(cid, "o", "v2", f"q-{n}-{i}", v2_body(f"a-{n}-{i}", marker=f"{n}-{i}"))
                )
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    messages: list[Any] = store.list_messages(cid)  # rows read deep here
    assert [m["ordinal"] for m in messages] == list(range(64))
    for user, assistant in zip(messages[::2], messages[1::2], strict=True):
        assert user["role"] == "user" and assistant["role"] == "assistant"
        assert user["content"] == "q-" + assistant["body"]["marker"]
    for n in range(8):  # each writer's own turns stay in the order it wrote them
        mine = [m["content"] for m in messages if m["content"].startswith(f"q-{n}-")]
        assert mine == [f"q-{n}-{i}" for i in range(4)]


def test_conversation_lock_keeps_request_order(store: Store) -> None:
    """Requests in one conversation, each reading history then appending: every turn sees all turns
    before it and they land in arrival order, although the work in between takes different times."""
    cid = store.create_conversation("o")["conversation_id"]
    seen: list[int] = []

    async def request(n: int) -> None:
        async with store.conversation_lock(cid):
            history = await asyncio.to_thread(store.list_messages, cid)
            seen.append(len(history))
            await asyncio.sleep(0.01 * ((7 * n) % 5))
            await asyncio.to_thread(
                store.append_exchange, Exchange(cid, "o", "v2", f"q{n}", v2_body(f"a{n}"))
            )

    async def main() -> None:
        tasks = []
        for n in range(8):
            tasks.append(asyncio.create_task(request(n)))
            await asyncio.sleep(0)  # arrival order
        await asyncio.gather(*tasks)

    asyncio.run(main())
    assert seen == [2 * n for n in range(8)]
    assert [m["content"] for m in store.list_messages(cid)][::2] == [f"q{n}" for n in range(8)]
    assert store._locks == {}  # no lock entry outlives its requests


def test_rate_limit_is_shared_through_the_database(store: Store, backend: Backend) -> None:
    other = backend.open()  # a second replica: its own engine and connections
    try:
        hits = [s.hit_rate_limit("playground:iss|admin", 3, 60.0) for s in (store, other, store, other)]
        assert hits[:3] == [None, None, None]
        assert hits[3] is not None and 0 < hits[3] <= 60.0
        assert store.hit_rate_limit("playground:iss|someone", 3, 60.0) is None
        assert store.hit_rate_limit("k", 0, 60.0) is not None
    finally:
        other.close()


def test_rate_limit_counts_exactly_under_contention(store: Store) -> None:
    allowed: list[bool] = []
    barrier = threading.Barrier(6)

    def hit() -> None:
        barrier.wait()
        for _ in range(5):
            allowed.append(store.hit_rate_limit("busy", 12, 3600.0) is None)

    threads = [threading.Thread(target=hit) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert allowed.count(True) == 12 and len(allowed) == 30


def _all_stored_text(store: Store) -> str:
    meta = MetaData()
    meta.reflect(store.engine)
    dump: list[str] = []
    with store.engine.connect() as conn:
        for table in meta.sorted_tables:
            for row in conn.execute(select(table)):
                dump.extend(repr(value) for value in row)
    return "\n".join(dump)


def test_playground_receipt_stores_no_text(store: Store) -> None:
    prompt, question = "PROMPT-EDITORIAL-RAHASIA-7731", "PERTANYAAN-UJI-9902"
    answer, passage = "JAWABAN-UJI-5521", "PASSAGE-SUMBER-1180"
    store.record_playground_receipt(
        PlaygroundReceipt(
            run_id="0f3c9a7e",
            admin="iss|admin",
            status="answered",
            counts={"claims_total": 2, "claims_supported": 1, "framing_total": 1, "passages": 3},
            started_at=1_800_000_000.0,
            finished_at=1_800_000_001.25,
        )
    )
    receipts: list[Any] = store.list_playground_receipts("iss|admin")
    (receipt,) = receipts
    assert receipt["counts"] == {"claims_total": 2, "claims_supported": 1, "framing_total": 1, "passages": 3}
    assert receipt["status"] == "answered" and receipt["finished_at"].endswith("01.250Z")
    for smuggle in (
        {"status": question},
        {"counts": {"prompt": prompt}},
        {"counts": {question: 1}},
        {"run_id": f"{answer} {passage}"},
    ):
        args: dict[str, Any] = {
            "run_id": "r2",
            "admin": "iss|admin",
            "status": "answered",
            "counts": {},
            "started_at": 0.0,
            "finished_at": 1.0,
        }
        with pytest.raises(ValueError):
            store.record_playground_receipt(PlaygroundReceipt(**{**args, **smuggle}))
    stored = _all_stored_text(store)
    assert "0f3c9a7e" in stored  # the scan does see what is stored
    for text in (prompt, question, answer, passage):
        assert text not in stored
