"""Shared fixtures: the demo corpus indexed once per session, and configs pointing at temp dirs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from retrieval.retriever import Retriever
    from serve_app.config import AppConfig

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

REPO = Path(__file__).resolve().parents[1]
DEMO_CORPUS = REPO / "configs" / "demo_corpus"
SHARED_DATA = Path(os.environ.get("ACEH_SHARED_DATA", REPO.parent / "shared" / "data"))
API_KEY = "test-key"


def make_config(tmp: Path, index_dir: Path, **overrides: object) -> AppConfig:
    from serve_app.config import load_config

    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(index_dir),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'aceh.db'}",
    }
    cfg = load_config(str(REPO / "configs" / "default.yaml"), env=env)
    return cfg.model_copy(update=overrides)


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus ingested once with the real offline encoder."""
    from serve_app.runtime import index_setup

    index_dir = tmp_path_factory.mktemp("index") / "demo"
    cfg = make_config(tmp_path_factory.mktemp("cfg"), index_dir)
    report = index_setup.ingest_paths(cfg, [DEMO_CORPUS], index_dir, progress=False)
    assert not report.failed, report.summary()
    return index_dir


@pytest.fixture(scope="session")
def demo_retriever(demo_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    from serve_app.runtime import index_setup

    retriever: Retriever = index_setup.build_retriever(make_config(tmp_path_factory.mktemp("r"), demo_index))
    return retriever


@pytest.fixture()
def app_config(tmp_path: Path, demo_index: Path) -> AppConfig:
    return make_config(tmp_path, demo_index)


@pytest.fixture()
def pipeline(app_config: AppConfig, demo_retriever: Retriever) -> Iterator[object]:
    from serve_app.runtime import factory

    yield factory.build_inprocess(app_config, retriever=demo_retriever)
