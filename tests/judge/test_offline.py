from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from judge.llm_judge import LLMJudge
from judge.offline import JsonlError, judge_records, parse_jsonl
from judge.recheck import RecheckStats
from tests.support.engines import FakeEngine

PASSAGE = "Pagu anggaran pendidikan tahun 2023 sebesar Rp871.667.219.294."


T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_verdicts_after_recheck_in_input_order() -> None:
    engine = FakeEngine(flip=["SALAH dibantah"])
    records: list[Any] = [
        {"id": 1, "claim": "BENAR: pagu Rp871,67 miliar.", "passage": PASSAGE, "document": "Qanun APBA 2023"},
        {
            "id": "dua",
            "claim": "SALAH: Rp871,67 triliun.",
            "passage": PASSAGE,
            "document": {
                "title": "Qanun APBA",
                "type": "Qanun",
                "number": "1",
                "year": 2023,
                "issuer": "Pemerintah Aceh",
                "section": "Pasal 4",
            },
        },
        {"id": 3, "claim": "SALAH dibantah", "passage": PASSAGE},  # first no, re-check yes → disputed
        {"id": 4, "claim": "RAGU", "passage": PASSAGE, "context": "| Urusan | Pagu |"},
    ]
    stats = RecheckStats()
    rows = run(judge_records(records, LLMJudge(engine), stats=stats))
    assert rows == [
        {"id": 1, "verdict": "supported", "reasons": ["p_supported=0.900"]},
        {"id": "dua", "verdict": "unsupported", "reasons": ["p_supported=0.100"]},
        {"id": 3, "verdict": "unverified", "reasons": ["disputed", "p_supported=0.100"]},
        {"id": 4, "verdict": "unverified", "reasons": ["unparseable", "no_label_verdict"]},
    ]
    assert stats.first_pass == 4 and stats.rechecks == 2
    prompts = [p for call in engine.classify_calls for p in call]
    assert "Judul / Title: Qanun APBA 2023" in prompts[0]
    assert all(
        v in prompts[1]
        for v in (
            "Jenis / Type: Qanun",
            "Nomor / Number: 1",
            "Tahun / Year: 2023",
            "Penerbit / Issuer: Pemerintah Aceh",
            "Bagian / Section: Pasal 4",
        )
    )
    assert "| Urusan | Pagu |" in prompts[3]


def test_bad_lines_become_invalid_input_without_stopping() -> None:
    records: list[Any] = [
        {"id": "ok", "claim": "BENAR", "passage": PASSAGE},
        {"id": "no-claim", "passage": PASSAGE},
        {"id": "num-passage", "claim": "BENAR", "passage": 12},
        {"id": "blank", "claim": "  ", "passage": PASSAGE},
        {"id": "doc", "claim": "BENAR", "passage": PASSAGE, "document": ["Qanun"]},
        {"id": "field", "claim": "BENAR", "passage": PASSAGE, "document": {"title": {"x": 1}}},
        ["not", "an", "object"],
    ]
    engine = FakeEngine()
    rows = run(judge_records(records, LLMJudge(engine)))
    assert [r["id"] for r in rows] == ["ok", "no-claim", "num-passage", "blank", "doc", "field", None]
    assert rows[0]["verdict"] == "supported"
    assert [r["reasons"] for r in rows[1:]] == [
        ["invalid_input", "missing_claim"],
        ["invalid_input", "passage_not_string"],
        ["invalid_input", "empty_claim"],
        ["invalid_input", "document_not_string_or_object"],
        ["invalid_input", "document_field_not_scalar:title"],
        ["invalid_input", "not_an_object"],
    ]
    assert all(r["verdict"] == "unverified" for r in rows[1:])
    assert sum(len(c) for c in engine.classify_calls) == 1  # bad lines never reach the model


def test_batches_of_records() -> None:
    engine = FakeEngine()
    records = [{"id": n, "claim": "BENAR", "passage": f"p{n}"} for n in range(5)]
    rows = run(judge_records(records, LLMJudge(engine), batch_size=2))
    assert [r["id"] for r in rows] == list(range(5))
    assert [len(c) for c in engine.classify_calls] == [2, 2, 1]
    with pytest.raises(ValueError):
        run(judge_records(records, LLMJudge(engine), batch_size=0))


def test_parse_jsonl(tmp_path: Path) -> None:
    good = tmp_path / "in.jsonl"
    good.write_text(json.dumps({"id": 1, "claim": "Rp 5 miliar", "passage": "x"}) + "\n\n[1]\n", "utf-8")
    assert parse_jsonl(good) == [{"id": 1, "claim": "Rp 5 miliar", "passage": "x"}, [1]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n\n{"id": 2,\n', "utf-8")
    with pytest.raises(JsonlError, match=r"line 3: not valid JSON"):
        parse_jsonl(bad)


def test_rule_judge_is_not_rechecked_and_cli_and_query_share_it(tmp_path: Path) -> None:
    """The deterministic rule judge's first pass is final offline (aceh-rag judge) as in /query/v2, and both
    build the same judge from the config (serve_app.runtime.factory.build_judge)."""
    from judge.rules import RuleJudge
    from serve_app.runtime import factory
    from tests.conftest import make_config

    cfg = make_config(tmp_path, tmp_path / "index")
    judge = factory.build_judge(cfg)
    assert isinstance(judge, RuleJudge) and judge.deterministic
    annotator = factory.build_annotator(cfg, judge_fn=factory.local_judge_fn(cfg))
    assert annotator.deterministic_judge
    records: list[Any] = [
        {"id": 1, "claim": "Pagu anggaran pendidikan 2023 sebesar Rp871,67 miliar.", "passage": PASSAGE},
        {"id": 2, "claim": "Pagu anggaran pendidikan 2023 sebesar Rp871,67 triliun.", "passage": PASSAGE},
    ]
    stats = RecheckStats()
    rows = run(judge_records(records, judge, stats=stats))
    assert [row["verdict"] for row in rows] == ["supported", "unsupported"]
    assert stats.first_pass == 2 and stats.rechecks == 0 and stats.skipped == 1
