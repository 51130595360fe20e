"""Whether a result record may stand in the README: measured on a clean tree, and not older than its code.

A record is **dirty** when its ``machine.git_dirty`` is true (tracked files differed from the commit it names,
so nobody can rebuild what was measured), and its provenance is **unknown** when it names no commit or a
commit this clone does not hold. It is **stale** when a commit after the one it names (``git log
COMMIT..HEAD``) touched the code it measures: :data:`SOURCES` lists those paths per benchmark, and every
benchmark also counts its own module (``benchmarks/<module>.py`` from its ``command``). A benchmark not
listed counts the whole product (:data:`PRODUCT`). A commit that is not an ancestor of HEAD (a branch
rebased away) makes the record unknown too. Only code counts: README, docs and ``benchmarks/results/`` do
not. A first-look record (``first_look`` true) is exempt from staleness, never from dirtiness: it is the one
look at a dev set taken before any change against it, so being older than the code is what it is for.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO

# The code every answer runs through; a benchmark of the whole service is stale when any of it changed.
PRODUCT = ("retrieval", "judge", "language", "models", "serve_app", "configs")
# Narrower lists where a benchmark exercises one library only (plus its own module, always counted).
SOURCES: dict[str, tuple[str, ...]] = {
    # retrieval reads queries through language/ (the bilingual lexicon)
    "retrieval": (
        "retrieval", "language", "models", "benchmarks/retrieval_quality.py",
        "benchmarks/retrieval_report.py",
    ),
    "judge_rules": ("judge", "language", "benchmarks/judge_numeric_dev.py", "benchmarks/datasets"),
    "judge_numeric_dev2": ("judge", "language", "benchmarks/judge_numeric_dev.py"),
    "judge_pool": ("judge", "language", "models"),
    "judge_gpu_tiny": ("judge", "language", "models", "benchmarks/judge_gpu_batching.py"),
    "llm_vllm_pool": ("judge", "language", "models", "configs/llm-cpu.yaml", "benchmarks/llm_vllm_pool.py"),
    "llm_vllm_prefix": ("judge", "language", "models", "configs/llm-cpu.yaml", "benchmarks/llm_vllm_pool.py"),
    "llm_vllm_quality": (
        "judge", "language", "models", "configs/llm-cpu.yaml", "benchmarks/judge_numeric_dev.py",
    ),
    "guard_eval": ("serve_app/guard", "configs/policy.yaml", "benchmarks/guard_report.py"),
    "store": ("serve_app/conversation",),
    # The answer benchmarks: the whole product and the benchmark modules that ask and score.
    "agent_quality": (*PRODUCT, "benchmarks/answer_scoring.py"),
    "agent_quality_demo": (*PRODUCT, "benchmarks/answer_scoring.py", "benchmarks/agent_quality_demo.py"),
    **{
        name: (*PRODUCT, "benchmarks/answer_scoring.py", "benchmarks/legal_qa_dev.py",
               "benchmarks/claim_readability.py")
        for name in ("agent_quality_full", "agent_quality_full_legal_qa_dev2")
    },
}


@dataclass(frozen=True)
class Refusal:
    benchmark: str
    reason: str  # "dirty tree", "stale: ...", "no commit recorded", ...

    def __str__(self) -> str:
        return f"{self.benchmark} ({self.reason})"


def _git(*args: str, repo: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None


def paths_of(record: dict[str, Any]) -> tuple[str, ...]:
    """The paths whose change makes ``record`` stale: its :data:`SOURCES` (else :data:`PRODUCT`) and the
    module its command runs."""
    name = str(record["benchmark"])
    paths = list(SOURCES.get(name, PRODUCT))
    for module in re.findall(r"python -m benchmarks\.(\w+)", str(record.get("command", ""))):
        paths.append(f"benchmarks/{module}.py")
    return tuple(dict.fromkeys(paths))


def refusal(record: dict[str, Any], *, repo: Path = REPO) -> Refusal | None:
    """Why ``record`` may not stand in the README table, or None when it may."""
    name = str(record["benchmark"])
    machine = record.get("machine")
    machine = machine if isinstance(machine, dict) else {}
    if machine.get("git_dirty") is True:
        return Refusal(name, "dirty tree")
    commit = machine.get("git_commit")
    if not commit:
        return Refusal(name, "no commit recorded")
    if record.get("first_look") is True:
        return None
    full = _git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", repo=repo)
    if full is None or full.returncode != 0:
        return Refusal(name, f"commit {commit} not in this clone")
    sha = full.stdout.strip()
    ancestor = _git("merge-base", "--is-ancestor", sha, "HEAD", repo=repo)
    if ancestor is None or ancestor.returncode != 0:
        return Refusal(name, f"commit {commit} is not an ancestor of HEAD")
    newer = _git("log", "-1", "--format=%h", f"{sha}..HEAD", "--", *paths_of(record), repo=repo)
    if newer is None or newer.returncode != 0:
        return Refusal(name, "git log failed")
    if newer.stdout.strip():
        # The newest change is not named: the README would then change with every later commit.
        return Refusal(name, f"stale: measured at {commit[:7]}, its code changed since")
    return None


def split(records: list[dict[str, Any]], *, repo: Path = REPO) -> tuple[list[dict[str, Any]], list[Refusal]]:
    """The records the README may show, and the refusals of the others (in the records' order)."""
    shown: list[dict[str, Any]] = []
    refused: list[Refusal] = []
    for record in records:
        why = refusal(record, repo=repo)
        if why is None:
            shown.append(record)
        else:
            refused.append(why)
    return shown, refused
