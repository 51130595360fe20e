"""ruff and mypy over the whole tree, so a lint or type error fails CI like a failing test does."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.slow
@pytest.mark.parametrize("tool", [["ruff", "check", "."], ["mypy", "."]], ids=["ruff", "mypy"])
def test_tree_is_clean(tool: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", *tool], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
