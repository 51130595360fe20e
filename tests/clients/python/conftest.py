"""The service (in-process app, embedded engines, demo index) on a real port, for the client tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from serve_app.runtime import factory
from tests.support.live import serving
from tests.support.service import build_pipeline, config


def serve_demo(tmp: Path, demo_index: Path, demo_retriever: Any, **updates: Any) -> Any:
    cfg = config(tmp, demo_index, **updates)
    pipeline = build_pipeline(cfg, demo_retriever)
    return serving(factory.build_inprocess_app(cfg, retriever=demo_retriever, pipeline=pipeline))


@pytest.fixture(scope="module")
def service(demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_demo(tmp_path_factory.mktemp("client"), demo_index, demo_retriever) as base:
        yield base
