"""A writer process appending turns from several threads is SIGKILLed mid-way: afterwards every stored
turn is whole (user message, its answer with all annotations, its memory items) and the store still
works, on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from serve_app.conversation.exchange import Exchange
from serve_app.conversation.tables import t_conversations, t_memory, t_messages
from tests.conversation.conftest import Backend

REPO = Path(__file__).resolve().parents[2]
OWNER = "iss|crash"
WRITER = f"""
import sys, threading
from serve_app.conversation.store import Store
from serve_app.conversation.exchange import Exchange

store = Store(sys.argv[1], schema=sys.argv[2] or None)

def body(n):
    answer = f"Bingkai {{n}}. Klaim satu {{n}}. Klaim dua {{n}}. Klaim tiga {{n}}."
    claims = [{{"text": f"Klaim {{k}} {{n}}.", "verdict": "supported", "start": 10 * k}} for k in range(3)]
    return {{"schema": "annotate-v2", "answer": answer, "marker": n, "claims": claims,
            "framing": [{{"text": f"Bingkai {{n}}.", "start": 0}}],
            "faithfulness": {{"verification": "full"}}, "v2_faithfulness": {{"verification": "full"}}}}

def loop(cid):
    n = 0
    while True:
        store.append_exchange(Exchange(cid, {OWNER!r}, "v2", f"q{{n}}", body(n), [f"m{{n}}a", f"m{{n}}b"]))
        n += 1

cids = [store.create_conversation({OWNER!r})["conversation_id"] for _ in range(4)]
for cid in cids:
    threading.Thread(target=loop, args=(cid,), daemon=True).start()
print("writing", flush=True)
threading.Event().wait()
"""


def _answers(backend: Backend) -> int:
    store = backend.open()
    try:
        with store.engine.connect() as conn:
            return conn.execute(select(func.count()).where(t_messages.c.role == "assistant")).scalar() or 0
    finally:
        store.close()


def test_killed_writer_leaves_only_whole_turns(backend: Backend) -> None:
    setup = backend.open()
    setup.migrate()
    setup.close()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, backend.url, backend.schema or ""],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while _answers(backend) < 40:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            assert time.monotonic() < deadline, "the writer did not get going"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == -signal.SIGKILL

    store = backend.open()
    try:
        with store.engine.connect() as conn:
            mine = select(t_conversations.c.id).where(t_conversations.c.owner == OWNER)
            cids = conn.execute(mine).scalars().all()
            memory = conn.execute(select(t_memory.c.source_message_id, t_memory.c.text)).all()
        assert len(cids) == 4
        answers: dict[str, int] = {}
        for cid in cids:
            messages: list[Any] = store.list_messages(cid)  # rows read deep here
            assert [m["ordinal"] for m in messages] == list(range(len(messages)))
            assert len(messages) % 2 == 0
            for n, (user, assistant) in enumerate(zip(messages[::2], messages[1::2], strict=True)):
                assert (user["role"], user["content"]) == ("user", f"q{n}")
                body = assistant["body"]
                assert assistant["role"] == "assistant" and body["marker"] == n
                assert len(body["claims"]) == 3 and len(body["framing"]) == 1
                assert body["v2_faithfulness"] == {"verification": "full"}
                answers[assistant["message_id"]] = n
        assert len(answers) >= 40
        by_message: dict[str, set[str]] = {}
        for source, text in memory:
            by_message.setdefault(source, set()).add(text)
        assert by_message == {mid: {f"m{n}a", f"m{n}b"} for mid, n in answers.items()}
        # The store is still writable and continues every conversation where it stopped.
        cid = cids[0]
        before = len(store.list_messages(cid))
        store.append_exchange(
            Exchange(cid, OWNER, "v2", "setelah", {"answer": "ok", "claims": [], "framing": []})
        )
        assert [m["ordinal"] for m in store.list_messages(cid)][-2:] == [before, before + 1]
    finally:
        store.close()
