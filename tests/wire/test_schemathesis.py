"""A bounded run of ``benchmarks/fuzz.py``: the schemathesis CLI with every phase and every check (``-c all``)
against the in-process app on uvicorn, with a valid key and with none, a few examples per operation and a
fixed seed (the same cases every run). ``python -m benchmarks.fuzz`` runs the long one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from benchmarks.fuzz import PHASES, fuzz
from tests.conftest import API_KEY
from tests.support.live import serve_demo
from tests.support.net import serving

pytestmark = pytest.mark.slow
MAX_EXAMPLES = 3
SEED = 20261207


def test_schemathesis_finds_nothing_with_a_key_and_without(
    demo_index: Path, demo_retriever: Any, tmp_path: Path
) -> None:
    with serve_demo(tmp_path, demo_index, demo_retriever) as base:
        report = fuzz(
            base, api_key=API_KEY, max_examples=MAX_EXAMPLES, seed=SEED, who=("valid_key", "none")
        )
    for who, run in report["runs"].items():
        found = (who, run["failure_kinds"], run["error_kinds"], run.get("output_tail"))
        assert run["failures"] == 0 and run["errors"] == 0, found
        assert run["operations_tested"] == run["operations_total"] == 14, who
        assert set(run["phases"]) == set(PHASES) and set(run["phases"].values()) == {"success"}, run["phases"]
        assert run["cases"] > 100, who


def _lax_app() -> Starlette:
    """A document that promises an integer ``n`` from 1 to 5, and a handler that takes anything and fails
    with a 500 on 3: what the run must report."""
    document = {
        "openapi": "3.1.0",
        "info": {"title": "planted", "version": "1"},
        "paths": {
            "/echo": {
                "post": {
                    "requestBody": {"required": True, "content": {"application/json": {"schema": {
                        "type": "object", "required": ["n"], "additionalProperties": False,
                        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}},
                    }}}},
                    "responses": {"200": {"description": "OK", "content": {
                        "application/json": {"schema": {"type": "object"}}}}},
                }
            }
        },
    }

    async def echo(request: Request) -> Response:
        body = await request.json()
        if body.get("n") == 3:
            return JSONResponse({"error": "boom"}, status_code=500)
        return JSONResponse({"n": body.get("n")})

    async def openapi(_request: Request) -> Response:
        return JSONResponse(document)

    return Starlette(routes=[Route("/echo", echo, methods=["POST"]), Route("/openapi.json", openapi)])


def test_the_run_reports_a_planted_server_error_and_an_accepted_invalid_body() -> None:
    with serving(_lax_app()) as base:
        report = fuzz(base, max_examples=MAX_EXAMPLES, seed=SEED, who=("none",))
    codes = {kind["code"] for kind in report["runs"]["none"]["failure_kinds"]}
    assert {"ST101", "ST201"} <= codes, codes  # the 500, and an invalid n accepted
    assert report["failures"] >= 2
