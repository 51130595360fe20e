"""aceh_judge_unsupported_reasons_total{reason}: counted where the annotator takes the judge's verdicts."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from judge.rules import RuleJudge
from serve_app.answer.annotate import Annotator
from serve_app.metrics import Metrics, observe_unsupported
from tests.support.answers import StaticFraming, annotate, chunk_passage, seg

P1 = chunk_passage("P1", "Anggaran pendidikan Aceh tahun 2023 adalah Rp 5 miliar.")
NAME = "aceh_judge_unsupported_reasons_total"


def _count(metrics: Metrics, reason: str) -> float:
    return metrics.registry.get_sample_value(NAME, {"reason": reason}) or 0.0


def test_unsupported_verdict_counts_its_reasons_in_metrics() -> None:
    metrics = Metrics(CollectorRegistry())
    before = _count(metrics, "figure_mismatch"), _count(metrics, "scale_mismatch")
    facts = [
        seg("Anggaran pendidikan 2023 adalah Rp 5 miliar.", "fact", "paragraph", "P1"),
        seg("Anggaran pendidikan 2023 adalah Rp 7 miliar.", "fact", "continue", "P1"),
        seg("Anggaran pendidikan 2023 adalah Rp 5 triliun.", "fact", "continue", "P1"),
    ]
    _, ann = annotate(Annotator(RuleJudge().judge, StaticFraming([])), facts, [P1])
    assert [c["verdict"] for c in ann.claims] == ["supported", "unsupported", "unsupported"]
    assert _count(metrics, "figure_mismatch") == before[0] + 1
    assert _count(metrics, "scale_mismatch") == before[1] + 1
    assert f'{NAME}{{reason="figure_mismatch"}}' in metrics.text()


def test_free_text_reason_is_counted_as_other() -> None:
    metrics = Metrics(CollectorRegistry())
    before = _count(metrics, "other")
    observe_unsupported(["The passage gives another year, not this one."])
    assert _count(metrics, "other") == before + 1
