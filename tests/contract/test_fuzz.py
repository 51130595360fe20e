"""A bounded schemathesis run over every route of ``/openapi.json`` (valid key, wrong key, none; valid and
invalid bodies): no 5xx, declared statuses, content types and schemas. ``benchmarks/fuzz.py`` runs longer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.fuzz import API_KEY, fuzz
from serve_app.runtime import factory
from serve_app.wire.openapi import openapi_document
from tests.support.service import config

pytestmark = pytest.mark.slow


def test_fuzz_every_route_with_and_without_credentials(
    demo_index: Path, demo_retriever: Any, tmp_path: Path
) -> None:
    cfg = config(tmp_path, demo_index).model_copy(update={"api_keys": API_KEY})
    app = factory.build_inprocess_app(cfg, retriever=demo_retriever)
    report = fuzz(app, examples=3, seed=0)
    failures = {route: r["failure_examples"] for route, r in report["routes"].items() if r["failures"]}
    assert not failures and report["server_errors"] == 0, failures
    document: dict[str, Any] = openapi_document()  # read deep here, as a test
    declared = {f"{m.upper()} {path}" for path, ops in document["paths"].items() for m in ops}
    # schemathesis reads /openapi.json itself to load the schema and does not fuzz it again
    assert set(report["routes"]) == declared - {"GET /openapi.json"}
    for route, r in report["routes"].items():
        if document["paths"][route.split(" ", 1)[1]][route.split(" ")[0].lower()]["security"]:
            assert "401" in r["statuses"] and len(r["statuses"]) > 1, (route, r["statuses"])
