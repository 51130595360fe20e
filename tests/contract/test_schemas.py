"""The committed JSON Schemas are what the pydantic models generate now, and /openapi.json publishes the
same models."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from starlette.testclient import TestClient

from serve_app.wire import schemas as s
from serve_app.wire.openapi import WIRE_DIR, wire_schemas
from tests.contract.checks import SCHEMA_DIR, validate_against_schema

GENERATED = wire_schemas()
REGENERATE = "run `.venv/bin/python -m serve_app.wire.schema_export` and commit serve_app/wire/json_schemas/"


def test_checker_reads_the_directory_the_exporter_writes() -> None:
    assert SCHEMA_DIR.resolve() == WIRE_DIR.resolve()


def test_no_committed_schema_is_missing_or_stale() -> None:
    committed = {p.name.removesuffix(".schema.json") for p in WIRE_DIR.glob("*.schema.json")}
    assert committed == set(GENERATED), (
        f"missing {set(GENERATED) - committed}, extra {committed - set(GENERATED)}"
    )


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_committed_schema_equals_the_generated_one(name: str) -> None:
    committed = json.loads((WIRE_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert committed == GENERATED[name], f"{name} drifted from serve_app/wire/schemas.py: {REGENERATE}"
    jsonschema.Draft202012Validator.check_schema(committed)
    assert committed["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_sse_event_has_a_schema() -> None:
    for event in (
        "tool.started",
        "tool.finished",
        "message.start",
        "trace",
        "citation",
        "passage",
        "guard.blocked",
        "annotations",
        "answer.delta",
        "done",
        "error",
        "faithfulness",
    ):
        assert f"event.{event}" in GENERATED


@pytest.mark.parametrize(
    ("name", "always"),
    [
        (
            "query_v2_response",
            (
                "schema",
                "answer",
                "claims",
                "framing",
                "faithfulness",
                "conversation_id",
                "message_id",
                "history_truncated",
                "history_exchanges_in_view",
                "claims_supported",
                "claims_total",
                "grounding_rate",
                "fallback_used",
                "fallback_reason",
            ),
        ),
        ("playground_response", ("schema", "published", "playground_run_id", "latency_ms")),
        ("event.message.start", ("schema",)),
    ],
)
def test_fields_every_body_carries_are_required(name: str, always: tuple[str, ...]) -> None:
    """A client validating against the published schema must be able to rely on these keys."""
    required = set(GENERATED[name].get("required", []))
    assert set(always) <= required, f"{name}: not required {sorted(set(always) - required)}"


def _faithfulness() -> dict[str, Any]:
    return {
        "mechanism": "annotate-v2",
        "judge_status": "skipped",
        "framing_check": "skipped",
        "claims_total": 0,
        "supported": 0,
        "unsupported": 0,
        "unverified": 0,
        "uncited": 0,
        "invalid_citation": 0,
        "from_conversation": 0,
        "unverified_reasons": {
            r: 0 for r in ("deadline", "budget", "judge_unavailable", "unparseable", "disputed")
        },
        "framing_total": 0,
        "unlocated_total": 1,
        "verification": "none",
        "grounding": {"claims_supported": 0, "claims_total": 0, "grounding_rate": None},
    }


@pytest.mark.parametrize(
    ("change", "valid"),
    [
        ({}, True),
        ({"checked": False}, True),
        ({"verification": "mostly"}, False),
        ({"judge_status": "done"}, False),
        ({"extra": 1}, False),
    ],
)
def test_faithfulness_schema_accepts_the_contract_and_rejects_the_rest(
    change: dict[str, Any], valid: bool
) -> None:
    frame = {
        **_faithfulness(),
        **change,
        "fallback_used": True,
        "fallback_reason": "source_scope_empty",
        "claims_supported": 0,
        "claims_total": 0,
        "grounding_rate": None,
        "claims": [],
        "framing": [],
    }
    if valid:
        validate_against_schema(frame, "event.annotations")
    else:
        with pytest.raises(AssertionError):
            validate_against_schema(frame, "event.annotations")


def test_claim_schema_rejects_unknown_verdicts_and_reasons() -> None:
    claim = {
        "start": 0,
        "end": 4,
        "start_utf16": 0,
        "end_utf16": 4,
        "kind": "fact",
        "layout": "paragraph",
        "citation_keys": ["P1"],
        "verdict": "supported",
        "unverified_reason": None,
        "invalid_citation_keys": [],
    }
    frame = {
        **_faithfulness(),
        "fallback_used": False,
        "fallback_reason": None,
        "claims_supported": 0,
        "claims_total": 0,
        "grounding_rate": None,
        "framing": [],
    }
    validate_against_schema({**frame, "claims": [claim]}, "event.annotations")
    for bad in (
        {"verdict": "grounded"},
        {"unverified_reason": "slow"},
        {"layout": "bullet"},
        {"kind": "claim"},
    ):
        with pytest.raises(AssertionError):
            validate_against_schema({**frame, "claims": [{**claim, **bad}]}, "event.annotations")


# ---------------------------------------------------------------------------- /openapi.json


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return own + [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def test_openapi_serves_without_credentials_and_resolves(demo_client: TestClient) -> None:
    resp = demo_client.get("/openapi.json")
    assert resp.status_code == 200
    doc = resp.json()
    assert doc["openapi"].startswith("3.1")
    components = doc["components"]["schemas"]
    for ref in _refs(doc):
        assert ref.startswith("#/components/schemas/"), ref
        assert ref.removeprefix("#/components/schemas/") in components, f"dangling {ref}"
    for path in (
        "/search",
        "/query",
        "/query/stream",
        "/query/v2",
        "/query/v2/stream",
        "/playground",
        "/conversations",
        "/conversations/{conversation_id}",
        "/healthz",
        "/metrics",
    ):
        assert path in doc["paths"], path


@pytest.mark.parametrize(
    ("path", "request_model", "response_model", "wire"),
    [
        ("/query/v2", "QueryV2Request", "QueryV2Response", "query_v2_response"),
        ("/query", "QueryRequest", "QueryV1Response", "query_v1_response"),
        ("/playground", "PlaygroundRequest", "PlaygroundResponse", "playground_response"),
        ("/search", "SearchRequest", "SearchResponse", "search_response"),
    ],
)
def test_openapi_references_the_committed_models(
    demo_client: TestClient, path: str, request_model: str, response_model: str, wire: str
) -> None:
    doc = demo_client.get("/openapi.json").json()
    op = doc["paths"][path]["post"]
    assert op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/" + request_model)
    ok = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ok.endswith("/" + response_model)
    published = doc["components"]["schemas"][response_model]
    committed = json.loads((WIRE_DIR / f"{wire}.schema.json").read_text(encoding="utf-8"))
    assert set(published["properties"]) == set(committed["properties"])
    assert set(published.get("required", [])) == set(committed.get("required", []))
    for status in ("401", "413", "422"):
        assert status in op["responses"]


def test_openapi_lists_every_error_status_of_the_table(demo_client: TestClient) -> None:
    doc = demo_client.get("/openapi.json").json()
    for path in ("/query/v2", "/query/v2/stream", "/query"):
        statuses = set(doc["paths"][path]["post"]["responses"])
        assert {"400", "401", "404", "409", "413", "422", "429", "502"} <= statuses, (path, statuses)
    assert {"403", "503"} <= set(doc["paths"]["/playground"]["post"]["responses"]), "playground's own errors"


def test_wire_schema_version_is_in_the_path() -> None:
    assert WIRE_DIR.name == f"v{s.WIRE_SCHEMA_VERSION}"
