"""The 47 demo questions through the whole in-process pipeline (real retriever over the demo corpus,
embedded agent, composer, rule judge): the answer-quality floor the demo findings set, and the layout
invariants every answer keeps."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from retrieval.querying import is_english
from serve_app.answer.refusals import NOT_FOUND_FRAMING, framing_in

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "demo_questions.jsonl"
# Question id -> (the question's JSONL record, the answer body).
Answers = dict[str, tuple[dict[str, Any], dict[str, Any]]]


@pytest.fixture(scope="module")
def answers(demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory) -> Answers:
    from serve_app.guard.auth import Principal
    from serve_app.runtime import factory
    from serve_app.wire.schemas import QueryV2Request
    from tests.conftest import make_config

    pipeline = factory.build_inprocess(
        make_config(tmp_path_factory.mktemp("demo-answers"), demo_index), retriever=demo_retriever
    )
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line]

    async def ask_all() -> Answers:
        out = {}
        for q in questions:
            body = (
                await pipeline.answer(QueryV2Request(query=q["question"]), Principal.anonymous(), route="v2")
            ).json_body()
            out[q["id"]] = (q, body)
        return out

    return asyncio.run(ask_all())


def _cites(body: dict[str, Any], gold: str) -> bool:
    return any((c.get("source") or "").endswith(gold) for c in body.get("citations", []))


def test_no_answer_writes_a_table_row_as_prose_or_a_lead_in_twice(answers: Answers) -> None:
    for qid, (_q, body) in answers.items():
        lines = body["answer"].splitlines()
        assert not any(line.startswith("- |") for line in lines), qid
        paragraphs = [p for p in body["answer"].split("\n\n") if p.endswith(":")]
        assert len(paragraphs) == len(set(paragraphs)), qid


def test_the_asked_year_and_the_stated_share_are_answered(answers: Answers) -> None:
    expected = {
        "demo-01": ("Rp871.667.219.294", "qanun_apba_2023.md"),
        "demo-02": ("Rp934.512.880.150", "qanun_apba_2024.md"),
        "demo-05": ("20,1 persen", "qanun_apba_2023.md"),
        "demo-23": ("13,4", "statistik_kesehatan_2022_2023.md"),
    }
    for qid, (figure, gold) in expected.items():
        body = answers[qid][1]
        assert figure in body["answer"] and _cites(body, gold), (qid, body["answer"])
    assert "Rp934.512.880.150" not in answers["demo-01"][1]["answer"]
    assert "lampiran_apba_2023.csv" not in {c.get("source") for c in answers["demo-05"][1]["citations"]}


def test_the_demo_quality_floor(answers: Answers) -> None:
    """Measured 37/38, 43/43, 42/47 and 4/4 when written; the floor leaves room for retrieval changes."""
    with_figure = [(q, b) for q, b in answers.values() if q["expected_figure"]]
    with_gold = [(q, b) for q, b in answers.values() if q["gold_file"]]
    not_found = [(q, b) for q, b in answers.values() if q["kind"] == "not_found"]
    figures = sum(q["expected_figure"] in b["answer"] for q, b in with_figure)
    golds = sum(_cites(b, q["gold_file"]) for q, b in with_gold)
    full = sum(b["faithfulness"]["verification"] == "full" for _q, b in answers.values())
    assert figures >= 34 and golds >= 40 and full >= 40, (figures, golds, full)
    # the not-found framing is written in the question's language
    assert all(b["answer"] == framing_in(NOT_FOUND_FRAMING, is_english(q["question"])) for q, b in not_found)

