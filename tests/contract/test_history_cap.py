"""A turn reads a bounded part of its conversation; retention is wired only when an age is set (issue 35)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from serve_app.config import ConfigError, load_config
from serve_app.runtime import factory
from tests.conftest import REPO
from tests.support.service import BUDGET_QUESTION, client_for, config, post


def test_a_turn_reads_only_the_capped_history(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> None:
    cfg = config(tmp_path, demo_index, history_exchanges=1, conversations={"history_read_turns": 2})
    with client_for(cfg, demo_retriever) as client:
        app: Any = client.app
        store = app.state.pipeline.store
        reads: list[int | None] = []
        original = store.list_messages

        def spy(cid: str, *, last: int | None = None) -> Any:
            reads.append(last)
            return original(cid, last=last)

        store.list_messages = spy
        cid = post(client, "/query/v2", {"query": BUDGET_QUESTION}).json()["conversation_id"]
        bodies = [
            post(client, "/query/v2", {"query": BUDGET_QUESTION, "conversation_id": cid}).json()
            for _ in range(3)
        ]
        assert len(original(cid)) == 8, "every turn is still stored"
    assert reads and set(reads) == {4}, "two exchanges: four messages a turn"
    assert bodies[-1]["history_exchanges_in_view"] == 1 and bodies[-1]["history_truncated"] is True


def test_retention_runs_only_when_an_age_is_set(tmp_path: Path) -> None:
    env = {"ACEH_DATABASE_URL": f"sqlite:///{tmp_path}/r.db"}
    cfg = load_config(str(REPO / "configs" / "default.yaml"), env=env)
    store = factory.build_store(cfg)
    try:
        assert factory.build_retention(cfg, store) is None, "no age configured: nothing is ever deleted"
        conversations = cfg.conversations.model_copy(update={"retention_days": 90})
        aged = cfg.model_copy(update={"conversations": conversations})
        schedule = factory.build_retention(aged, store)
        assert schedule is not None and schedule.policy.conversation_days == 90
    finally:
        store.close()


def test_the_history_read_must_cover_the_models_view(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("history_exchanges: 6\nconversations:\n  history_read_turns: 3\n")
    with pytest.raises(ConfigError, match="history_read_turns .3. is below history_exchanges .6."):
        load_config(str(bad), env={})
