from __future__ import annotations

from pathlib import Path

import pytest

from serve_app.guard.policy import PolicyGuard

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "configs" / "policy.yaml"


@pytest.fixture(scope="session")
def guard() -> PolicyGuard:
    return PolicyGuard.from_file(POLICY)
