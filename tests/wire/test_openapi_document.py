"""``/openapi.json`` is a valid OpenAPI 3.1 document that names every route the app serves, declares every
path parameter, and publishes each request body as it is validated (not as it would be serialised)."""

from __future__ import annotations

import re
from typing import Any

from openapi_spec_validator import validate
from starlette.routing import Route
from starlette.testclient import TestClient

from serve_app.wire.openapi import openapi_document
from serve_app.wire.strict_types import NOT_BLANK_PATTERN

DOCUMENT: dict[str, Any] = openapi_document()
METHODS = {"get", "post", "put", "patch", "delete"}


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, m, op) for path, ops in DOCUMENT["paths"].items() for m, op in ops.items() if m in METHODS]


def test_the_document_is_valid_openapi_3_1() -> None:
    validate(DOCUMENT)  # raises on any fault, an undeclared path parameter included


def test_every_path_parameter_is_declared_once_and_required() -> None:
    for path, method, op in _operations():
        in_path = set(re.findall(r"{(\w+)}", path))
        declared = [p for p in op.get("parameters", []) if p["in"] == "path"]
        assert {p["name"] for p in declared} == in_path, (method, path)
        assert len(declared) == len(in_path) and all(p["required"] for p in declared), (method, path)


def test_every_route_the_app_serves_is_in_the_document(demo_client: TestClient) -> None:
    app = demo_client.app
    served = {
        (r.path, m.lower())
        for r in app.routes  # type: ignore[attr-defined]
        if isinstance(r, Route)
        for m in (r.methods or set()) - {"HEAD"}
    }
    assert served == {(path, m) for path, m, _ in _operations()}
    assert demo_client.get("/openapi.json").json() == DOCUMENT


def test_request_bodies_are_published_as_they_are_validated() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    assert schemas["QueryV2Request"]["properties"]["offer_artifacts"] == {
        "const": False, "default": False, "title": "Offer Artifacts", "type": "boolean"
    }
    assert schemas["QueryRequest"]["properties"]["offer_artifacts"]["type"] == "boolean"
    assert schemas["SearchRequest"]["properties"]["top_k"]["type"] == "integer"
    for name in ("QueryRequest", "QueryV2Request", "PlaygroundRequest", "SearchRequest"):
        assert schemas[name]["additionalProperties"] is False
        assert schemas[name]["required"][0] == "query"
        assert schemas[name]["properties"]["query"]["pattern"] == NOT_BLANK_PATTERN
        assert schemas[name]["examples"], name  # what schemathesis's examples phase sends


def test_query_parameters_have_no_null_and_text_ones_refuse_blanks() -> None:
    params = {p["name"]: p["schema"] for p in DOCUMENT["paths"]["/documents"]["get"]["parameters"]}
    assert set(params) == {"q", "type", "number", "year", "selection", "page", "page_size"}
    for name, schema in params.items():
        assert "anyOf" not in schema and schema["type"] in ("string", "integer"), name
    for name in ("q", "type", "number", "selection"):
        assert params[name]["pattern"] == NOT_BLANK_PATTERN and params[name]["minLength"] == 1
