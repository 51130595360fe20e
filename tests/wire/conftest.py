"""Fixtures of the wire tests: one in-process app per module over the session's demo index."""

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
    with client_for(config(tmp_path_factory.mktemp("wire"), demo_index), demo_retriever) as client:
        yield client
