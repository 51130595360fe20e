"""The demo service on a real port (tests.support.net.serving), for clients that must talk HTTP (the Python
client, node)."""

from __future__ import annotations

from typing import Any

from serve_app.runtime import factory
from tests.support.net import serving
from tests.support.service import build_pipeline, config

__all__ = ["serve_demo", "serving"]


def serve_demo(tmp: Any, index_dir: Any, retriever: Any, **updates: Any) -> Any:
    """The in-process service (embedded engines) over ``index_dir`` on a real port: ``with ... as base``."""
    cfg = config(tmp, index_dir, **updates)
    pipeline = build_pipeline(cfg, retriever)
    return serving(factory.build_inprocess_app(cfg, retriever=retriever, pipeline=pipeline))
