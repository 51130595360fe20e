"""``make readme`` refuses records from a dirty tree, without a commit, or older than the code they measure
(benchmarks/provenance.py), and the table says how each shown figure was made. Checked on a throwaway git
repository with invented files, never on this checkout's history."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks import provenance, readme_table
from benchmarks.harness import Result

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout.strip()


def commit(repo: Path, path: str, text: str) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text, encoding="utf-8")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", f"change {path}")
    return git(repo, "rev-parse", "--short=12", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    commit(tmp_path, "judge/rules.py", "x = 1\n")
    return tmp_path


def record(name: str, sha: str | None, *, dirty: bool = False, in_sample: Any = True,
           first_look: bool = False, module: str = "judge_rules") -> dict[str, Any]:
    machine = {"cores": 2, "cpu_model": "Test CPU", "git_commit": sha, "git_dirty": dirty}
    return {"benchmark": name, "figures": {"BA": 0.5}, "data": "invented", "in_sample": in_sample,
            "command": f"python -m benchmarks.{module}", "date": "2026-01-01T00:00:00+00:00",
            "machine": machine, "first_look": first_look}


def test_a_record_at_the_code_it_measures_is_shown(repo: Path) -> None:
    sha = git(repo, "rev-parse", "--short=12", "HEAD")
    commit(repo, "README.md", "docs only\n")  # not code: does not make it stale
    commit(repo, "benchmarks/results/judge_rules.json", "{}\n")
    assert provenance.refusal(record("judge_rules", sha), repo=repo) is None


def test_a_dirty_record_is_refused(repo: Path) -> None:
    sha = git(repo, "rev-parse", "--short=12", "HEAD")
    why = provenance.refusal(record("judge_rules", sha, dirty=True), repo=repo)
    assert why is not None and why.reason == "dirty tree"


def test_a_record_older_than_its_code_is_refused(repo: Path) -> None:
    sha = git(repo, "rev-parse", "--short=12", "HEAD")
    commit(repo, "judge/rules.py", "x = 2\n")
    why = provenance.refusal(record("judge_rules", sha), repo=repo)
    assert why is not None and why.reason == f"stale: measured at {sha[:7]}, its code changed since"


def test_its_own_module_counts_and_other_code_does_not(repo: Path) -> None:
    sha = git(repo, "rev-parse", "--short=12", "HEAD")
    commit(repo, "retrieval/fusion.py", "y = 1\n")  # not in judge_rules' sources
    assert provenance.refusal(record("judge_rules", sha), repo=repo) is None
    commit(repo, "benchmarks/judge_rules.py", "z = 1\n")
    assert provenance.refusal(record("judge_rules", sha), repo=repo) is not None


def test_an_unlisted_benchmark_counts_the_whole_product(repo: Path) -> None:
    sha = git(repo, "rev-parse", "--short=12", "HEAD")
    commit(repo, "serve_app/app.py", "a = 1\n")
    why = provenance.refusal(record("invented_bench", sha, module="invented_bench"), repo=repo)
    assert why is not None and why.reason.startswith("stale:")


def test_no_commit_or_an_unknown_commit_is_refused(repo: Path) -> None:
    assert provenance.refusal(record("judge_rules", None), repo=repo) == provenance.Refusal(
        "judge_rules", "no commit recorded")
    why = provenance.refusal(record("judge_rules", "0123456789ab"), repo=repo)
    assert why is not None and "not in this clone" in why.reason


def test_a_first_look_is_never_stale_but_may_be_dirty(repo: Path) -> None:
    sha = git(repo, "rev-parse", "--short=12", "HEAD")
    commit(repo, "judge/rules.py", "x = 3\n")
    look = record("set_first_look", sha, in_sample=False, first_look=True)
    assert provenance.refusal(look, repo=repo) is None
    look["machine"]["git_dirty"] = True
    assert provenance.refusal(look, repo=repo) is not None


def test_the_table_shows_how_each_figure_was_made_and_lists_the_refused() -> None:
    records = [
        record("tuned", "a" * 12, in_sample=True),
        record("held", "a" * 12, in_sample=False),
        record("picked", "a" * 12, in_sample="selection"),
        record("judge_numeric_dev2_first_look", "a" * 12, in_sample=False, first_look=True),
        record("dirty_one", "a" * 12, dirty=True),
    ]
    refused = [provenance.Refusal("dirty_one", "dirty tree")]
    text = readme_table.render(records, refused)
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert " | yes | " in rows["tuned"] and " | no | " in rows["held"]
    assert " | selection | " in rows["picked"]
    assert " | no (first look) | " in rows["judge_numeric_dev2_first_look"]
    assert "dirty_one" not in rows  # refused: not a row, but named under the table
    assert "Not shown (" in text and "dirty_one (dirty tree)" in text


def test_the_first_look_table_sets_each_dev_set_beside_its_latest_in_sample_run() -> None:
    records = [
        record("judge_numeric_dev2_first_look", "b" * 12, in_sample=False, first_look=True),
        record("judge_numeric_dev2", "c" * 12),
    ]
    lines = readme_table.first_look_table(records, [provenance.Refusal("judge_numeric_dev2", "dirty tree")])
    (numeric,) = [line for line in lines if line.startswith("| judge_numeric_dev2 ")]
    assert "BA: 0.5 (2026-01-01, bbbbbbb)" in numeric and "not shown (dirty tree)" in numeric
    (legal,) = [line for line in lines if line.startswith("| legal_qa_dev2 ")]
    assert legal.count("not run yet") == 2


def test_in_sample_accepts_three_values_only() -> None:
    for value in (True, False, "selection"):
        Result(benchmark="b", figures={"a": 1}, data="d", in_sample=value, command="python -m benchmarks.b")
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="in_sample"):
            Result(benchmark="b", figures={"a": 1}, data="d", in_sample=bad,  # type: ignore[arg-type]
                   command="python -m benchmarks.b")
    with pytest.raises(ValueError, match="in_sample"):
        readme_table.in_sample_label(record("b", None, in_sample="maybe"))


def test_strict_readme_exits_1_when_a_record_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"{readme_table.BEGIN}\n{readme_table.END}\n", encoding="utf-8")
    monkeypatch.setattr(readme_table, "README", readme)
    monkeypatch.setattr(readme_table, "load", lambda: [record("dirty_one", "a" * 12, dirty=True)])
    assert readme_table.main(["--strict"]) == 1
    assert "dirty_one (dirty tree)" in capsys.readouterr().err
    assert readme_table.main([]) == 0 and "dirty_one (dirty tree)" in readme.read_text(encoding="utf-8")
