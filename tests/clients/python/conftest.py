"""The service (in-process app, embedded engines, demo index) on a real port, for the client tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.live import serve_demo


@pytest.fixture(scope="module")
def service(demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_demo(tmp_path_factory.mktemp("client"), demo_index, demo_retriever) as base:
        yield base
