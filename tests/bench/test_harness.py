"""benchmarks.harness: the one percentile, the result record and its atomic writer."""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path

import numpy as np
import pytest

from benchmarks import harness
from benchmarks.harness import Result, machine_summary, percentile, read_result, write_result

BENCHMARKS = Path(harness.__file__).resolve().parent
QUANTILE_FUNCTIONS = ("percentile", "quantile", "quantiles", "median")


@pytest.mark.parametrize("seed", range(5))
def test_percentile_is_numpys_linear_default(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.uniform(0, 100) for _ in range(rng.randint(1, 60))]
    for q in (0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q * 100)))


def test_percentile_small_cases_and_refusals() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert percentile([7.0], 0.95) == 7.0
    assert percentile(list(map(float, range(101))), 0.95) == 95.0
    with pytest.raises(ValueError, match="no values"):
        percentile([], 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        percentile([1.0], 95)


def test_one_percentile_in_benchmarks() -> None:
    """Quantiles are computed in one place: no other function named like one, no numpy/statistics copies."""
    found = []
    for path in BENCHMARKS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and "percentile" in node.name:
                found.append(f"{path.name}:{node.name}")
            if isinstance(node, ast.Attribute) and node.attr in QUANTILE_FUNCTIONS:
                found.append(f"{path.name}:.{node.attr}")
    assert found == ["harness.py:percentile"]


def test_record_is_written_atomically_with_every_field(tmp_path: Path) -> None:
    result = Result(
        benchmark="demo",
        figures={"p50": "3 ms"},
        data="synthetic",
        in_sample=False,
        command=harness.command("demo", ["--quick", "a b"]),
        details={"rows": [1, 2]},
    )
    path = write_result(result, tmp_path / "sub" / "demo.json")
    record = read_result(path)
    assert list(record)[:7] == list(harness.RECORD_FIELDS)
    assert record["rows"] == [1, 2] and record["command"] == "python -m benchmarks.demo --quick 'a b'"
    assert {"cores", "cpu_model", "ram_gb", "python", "packages", "git_commit"} <= set(record["machine"])
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind
    with pytest.raises(ValueError, match="record fields"):
        Result(benchmark="x", figures={}, data="", in_sample=True, command="", details={"date": 1}).to_json()


def test_read_result_refuses_a_file_without_the_record(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"date": "2026-01-01", "rows": []}), encoding="utf-8")
    with pytest.raises(ValueError, match="missing benchmark, figures"):
        read_result(path)


def test_machine_summary_is_short() -> None:
    machine = {"cores": 2, "cpu_model": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "ram_gb": 7.7}
    assert machine_summary(machine) == "2 cores, Intel Xeon Platinum 8375C, 7.7 GB"
    assert machine_summary("x86_64 2 cores, 3.11.7") == "2 cores, CPU model not recorded"
    assert machine_summary({"platform": "Linux", "cpus": 2}) == "2 cores, CPU model not recorded"


def test_markdown_table_writes_the_header_its_rule_and_a_line_per_row() -> None:
    from benchmarks.harness import markdown_table

    assert markdown_table(("id", "rate"), [("q1", 0.5), ("q2", "–")]) == [
        "| id | rate |",
        "| --- | --- |",
        "| q1 | 0.5 |",
        "| q2 | – |",
    ]


def test_a_first_look_is_written_once_and_only_out_of_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness, "RESULTS", tmp_path)
    look = Result(benchmark="set_first_look", figures={"BA": 0.5}, data="d", in_sample=False,
                  command="python -m benchmarks.x", first_look=True)
    path = harness.write_first_look(look)
    assert read_result(path)["first_look"] is True and read_result(path)["in_sample"] is False
    with pytest.raises(FileExistsError, match="already taken"):
        harness.write_first_look(look)
    tuned = Result(benchmark="other", figures={"BA": 0.5}, data="d", in_sample=True,
                   command="python -m benchmarks.x", first_look=True)
    with pytest.raises(ValueError, match="in_sample false"):
        harness.write_first_look(tuned)
