"""Every repository path that README.md, benchmarks/README.md or a file under docs/ names in backticks exists:
a moved or renamed module makes this fail instead of leaving a reader at a dead end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted([REPO / "README.md", REPO / "benchmarks" / "README.md", *(REPO / "docs").glob("*.md")])
# A backticked token that looks like a path into the repository: a known top-level folder or file first.
TOP = ("serve_app", "retrieval", "judge", "language", "models", "benchmarks", "tests", "configs", "clients",
       "deploy", "docs", ".ci", "Makefile", "pyproject.toml", "setup.py", "schemathesis.toml")
PATH = re.compile(r"`((?:\.\./shared/|" + "|".join(re.escape(t) for t in TOP) + r")[A-Za-z0-9_./*-]*)")
# Paths a run makes (never committed) and spelled-out placeholders are not checked.
MADE_AT_RUN_TIME = ("benchmarks/results/quick", "clients/typescript/dist", "clients/typescript/node_modules",
                    "configs/demo_sources/stats.sqlite", "serve_app/_data")
PLACEHOLDER = re.compile(r"[A-Z]{3,}")


def named_paths(text: str) -> set[str]:
    found = set()
    for match in PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if "/" not in path and path not in TOP:
            continue  # a dotted module or config key (`judge.batching`, `retrieval.encoder`), not a path
        if PLACEHOLDER.search(path.rsplit("/", 1)[-1].split(".")[0]) and path.split("/")[-1] not in TOP:
            continue
        if path.startswith(MADE_AT_RUN_TIME):
            continue
        found.add(path)
    return found


def exists(path: str) -> bool:
    if path.startswith("../shared/"):
        shared = REPO.parent / "shared"
        if not shared.is_dir():
            return True  # checked where the shared folder is present
        return any(shared.glob(path.removeprefix("../shared/"))) if "*" in path else (REPO / path).exists()
    return any(REPO.glob(path)) if "*" in path else (REPO / path).exists()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_path_exists(doc: Path) -> None:
    missing = sorted(p for p in named_paths(doc.read_text(encoding="utf-8")) if not exists(p))
    assert missing == [], f"{doc.relative_to(REPO)} names paths that do not exist: {missing}"


def test_a_missing_path_is_caught() -> None:
    """The check itself: a renamed module is reported; a placeholder, a run-time folder and a dotted module
    name are not."""
    text = ("see `serve_app/tracing_gone.py`, `benchmarks/results/NAME.json`, `benchmarks/results/quick/` "
            "and `judge.batching`")
    assert named_paths(text) == {"serve_app/tracing_gone.py"}
    assert not exists("serve_app/tracing_gone.py") and exists("serve_app/wire/tracing.py")


def test_the_readme_is_read_in_five_minutes() -> None:
    """At most 150 lines, with the request flow in the first 60; the rest lives in docs/ (linked from it)."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, len(lines)
    assert "## How a request flows" in lines[:60]
    linked = named_paths("\n".join(lines))
    assert {str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")} <= linked, "a docs/ file unlinked"
