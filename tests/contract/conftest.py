"""Fixtures of the contract suite: one shared in-process app per module over the session's demo index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.support.service import client_for, config


@pytest.fixture(scope="module")
def demo_client(
    demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """The default app (embedded engines) over the demo corpus, one store for the module."""
    cfg = config(tmp_path_factory.mktemp("contract"), demo_index)
    with client_for(cfg, demo_retriever) as client:
        yield client


@pytest.fixture()
def env(tmp_path: Path, demo_index: Path, demo_retriever: Any) -> dict[str, Any]:
    """What a fault test builds its own app from: a temporary folder, the demo index and its retriever."""
    return {"tmp": tmp_path, "index": demo_index, "retriever": demo_retriever}
