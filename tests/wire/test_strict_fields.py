"""Request validation is exactly as declared: for every request field, a value the published schema accepts
is accepted by the handler's model, and a value it refuses is refused (the three faults schemathesis found
among them: ``offer_artifacts: 0`` taken as false, ``top_k: 2.0`` refused, a blank ``number`` refused while
the schema allowed any text). The values are invented; the HTTP tests send the same through the routes."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, ValidationError
from starlette.testclient import TestClient

from serve_app.wire import documents as d
from serve_app.wire import schemas as s
from serve_app.wire.openapi import openapi_document
from serve_app.wire.strict_types import is_blank
from tests.support.service import BUDGET_QUESTION, HEADERS, post

DOCUMENT: dict[str, Any] = openapi_document()
SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]
TEXTS = ["a", "Pasal 7", " x ", "", "\ufeff", "\u200b", "x" * 4000, "x" * 4001, *SPACES]
TEXTS += [c * 3 for c in SPACES]
BOOLEANS = [True, False, 0, 1, 0.0, "false", "true", None, [], {}]
FIELD_VALUES: dict[str, list[Any]] = {
    "query": TEXTS,
    "offer_artifacts": BOOLEANS,
    "include_grounding": BOOLEANS,
    "include_provenance": BOOLEANS,
    "accept_annotations": BOOLEANS,
    "top_k": [1, 2, 2.0, 1e1, 50, 50.0, 51, 0, -1, 2.5, "2", True, None, float("inf")],
    "conversation_id": ["c1", "", None, 7, ["c1"]],
    "document_ids": [["d1"], [], None, "d1", [1], [None]],
    "selection": ["pilihan", None, 3],
    "editorial_prompt": ["Jawab singkat.", "", "x" * 2000, "x" * 2001, None],
}
MODELS: dict[str, type[BaseModel]] = {
    "QueryRequest": s.QueryRequest,
    "QueryV2Request": s.QueryV2Request,
    "PlaygroundRequest": s.PlaygroundRequest,
    "SearchRequest": s.SearchRequest,
}
BASE = {"query": "Apa isi pasal ini?", "editorial_prompt": "Jawab singkat."}


def _accepted(model: type[BaseModel], body: Any) -> bool:
    try:
        model.model_validate(body)
    except ValidationError:
        return False
    return True


def _cases() -> list[tuple[str, str, Any]]:
    out = []
    for name, model in MODELS.items():
        for field, values in FIELD_VALUES.items():
            if field in model.model_fields:
                out += [(name, field, v) for v in values]
    return out


@pytest.mark.parametrize(("name", "field", "value"), _cases())
def test_a_body_field_is_refused_by_the_handler_exactly_when_the_schema_refuses_it(
    name: str, field: str, value: Any
) -> None:
    model = MODELS[name]
    body = {k: v for k, v in BASE.items() if k in model.model_fields} | {field: value}
    schema = DOCUMENT["components"]["schemas"][name]
    by_schema = jsonschema.Draft202012Validator(schema).is_valid(body)
    assert _accepted(model, body) == by_schema, (name, field, value, by_schema)


@pytest.mark.parametrize("value", TEXTS)
@pytest.mark.parametrize("name", ["q", "type", "number", "selection"])
def test_a_text_query_parameter_is_refused_exactly_when_its_schema_refuses_it(name: str, value: str) -> None:
    param = next(p for p in DOCUMENT["paths"]["/documents"]["get"]["parameters"] if p["name"] == name)
    by_schema = jsonschema.Draft202012Validator(param["schema"]).is_valid(value)
    assert _accepted(d.DocumentListParams, {name: value}) == by_schema, (name, value)


def test_blank_means_what_str_isspace_means_over_every_code_point() -> None:
    assert [c for c in range(0x110000) if is_blank(chr(c))] == [ord(c) for c in SPACES]
    assert is_blank("") and not is_blank(" a ") and not is_blank("\ufeff")


# ---------------------------------------------------------------- the same through the routes


@pytest.mark.parametrize("path", ["/query/v2", "/query/v2/stream"])
@pytest.mark.parametrize("value", [0, 0.0, "false", None])
def test_v2_refuses_an_offer_artifacts_that_is_not_the_boolean_false(
    demo_client: TestClient, path: str, value: Any
) -> None:
    response = post(demo_client, path, {"query": BUDGET_QUESTION, "offer_artifacts": value})
    assert response.status_code == 422
    assert [item["field"] for item in response.json()["detail"]] == ["offer_artifacts"]


def test_search_takes_an_integral_top_k_written_with_a_fraction(demo_client: TestClient) -> None:
    whole = post(demo_client, "/search", {"query": BUDGET_QUESTION, "top_k": 2})
    written = post(demo_client, "/search", {"query": BUDGET_QUESTION, "top_k": 2.0})
    assert whole.status_code == written.status_code == 200
    ranked = [[r["chunk_id"] for r in res.json()["results"]] for res in (whole, written)]
    assert ranked[0] == ranked[1]
    assert len(written.json()["results"]) == 2
    for refused in (2.5, "2", True, 51.0):
        response = post(demo_client, "/search", {"query": BUDGET_QUESTION, "top_k": refused})
        assert response.status_code == 422 and response.json()["detail"][0]["field"] == "top_k", refused


@pytest.mark.parametrize("value", ["%0B", "%20%20", "%E3%80%80", ""])
def test_documents_refuses_a_blank_number_as_its_schema_does(demo_client: TestClient, value: str) -> None:
    response = demo_client.get(f"/documents?number={value}", headers=HEADERS)
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "number"
    assert demo_client.get("/documents?number=%0B7", headers=HEADERS).status_code == 200


def test_the_routers_own_404_and_405_have_the_contracts_json_body(demo_client: TestClient) -> None:
    unknown = demo_client.get("/conversations/a%2Fb", headers=HEADERS)  # a path parameter holding a slash
    assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    wrong = demo_client.request("PATCH", "/search", headers=HEADERS)
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"
    assert wrong.headers["allow"] == "POST"
