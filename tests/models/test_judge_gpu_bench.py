"""The GPU judge benchmark's CPU smoke run (``--tiny``), through both dynamic-batching collectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import judge_gpu


@pytest.mark.parametrize("collector", ["judge", "queue"])
def test_tiny_run_writes_every_mode(
    tmp_path: Path, collector: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "judge_gpu.json"
    argv = ["--tiny", "--pairs", "8", "--prompt-tokens", "24", "--collector", collector, "--out", str(out)]
    judge_gpu.main(argv)
    report = json.loads(out.read_text())
    modes = [row["mode"] for row in report["results"]]
    expected = ["bs1", "batched", "shared_full", "shared_prefix", "dynamic", "dynamic_shared"]
    assert modes == expected + (["dynamic_llm_judge"] if collector == "judge" else [])
    assert all(row["pairs_per_s"] > 0 for row in report["results"])
    assert all(row["mean_batch"] >= 1 for row in report["results"] if row["mode"].startswith("dynamic"))
    assert {"date", "machine", "command", "threads", "runs"} <= set(report)
    assert "pairs/s" in capsys.readouterr().out
