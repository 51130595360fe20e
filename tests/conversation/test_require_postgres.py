"""``ACEH_REQUIRE_POSTGRES=1`` (set by .ci/run) turns an unreachable PostgreSQL into failing tests, so a CI
run cannot pass by skipping them; without it they skip."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _run_postgres_test(require: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ACEH_REQUIRE_POSTGRES"}
    env["ACEH_TEST_POSTGRES_URL"] = "postgresql://postgres@127.0.0.1:1/none"  # nothing listens on port 1
    if require is not None:
        env["ACEH_REQUIRE_POSTGRES"] = require
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "tests/conversation/test_store.py::test_migrations_are_versioned_and_idempotent",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_unreachable_postgres_fails_when_required_and_skips_otherwise() -> None:
    required = _run_postgres_test("1")
    assert required.returncode == 1, required.stdout[-2000:]
    assert "1 passed, 1 error" in required.stdout and "ACEH_REQUIRE_POSTGRES=1" in required.stdout
    optional = _run_postgres_test(None)
    assert optional.returncode == 0, optional.stdout[-2000:]
    assert "1 passed, 1 skipped" in optional.stdout
