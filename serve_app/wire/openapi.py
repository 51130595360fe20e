"""``/openapi.json`` and the committed JSON Schemas, both generated from :mod:`serve_app.wire.schemas`."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from models.json_types import JSONObject
from serve_app.wire import documents as d
from serve_app.wire import events
from serve_app.wire import schemas as s

WIRE_DIR = Path(__file__).resolve().parent / "json_schemas" / f"v{s.WIRE_SCHEMA_VERSION}"
SCHEMA_BASE = "https://aceh-rag.local/wire/v" + s.WIRE_SCHEMA_VERSION

# file name → model; events are written as event.<name>.schema.json
RESPONSE_MODELS: dict[str, type[BaseModel]] = {
    "query_v2_response": s.QueryV2Response,
    "query_v1_response": s.QueryV1Response,
    "playground_response": s.PlaygroundResponse,
    "search_response": s.SearchResponse,
    "error": s.ErrorBody,
    "conversation_created": s.ConversationCreated,
    "conversation_view": s.ConversationView,
    "document_list": d.DocumentList,
    "document_view": d.DocumentView,
    "passage_response": d.PassageResponse,
}
REQUEST_MODELS: dict[str, type[BaseModel]] = {
    "query_request": s.QueryRequest,
    "query_v2_request": s.QueryV2Request,
    "playground_request": s.PlaygroundRequest,
    "search_request": s.SearchRequest,
    "document_list_params": d.DocumentListParams,  # the query string of GET /documents
}


# search's provenance and v1's artifacts are opt-in too
MAY_BE_ABSENT = set(s.OPT_IN_FIELDS) | {"checked", "provenance", "artifacts"}


def _relax(node: Any) -> Any:
    """Keys that may be absent are not required; ``checked`` is published only as ``false``."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            if "checked" in props:
                props["checked"] = {
                    "const": False,
                    "type": "boolean",
                    "description": "Present (false) only for context_budget_exhausted.",
                }
            if isinstance(node.get("required"), list):
                node["required"] = [k for k in node["required"] if k not in MAY_BE_ABSENT]
        for value in node.values():
            _relax(value)
    elif isinstance(node, list):
        for value in node:
            _relax(value)
    return node


def _schema(model: type[BaseModel], name: str, mode: str) -> dict[str, Any]:
    body = _relax(model.model_json_schema(by_alias=True, mode=mode))  # type: ignore[arg-type]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{SCHEMA_BASE}/{name}.schema.json",
        **body,
    }


def wire_schemas() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, model in RESPONSE_MODELS.items():
        out[name] = _schema(model, name, "serialization")
    for name, model in REQUEST_MODELS.items():
        out[name] = _schema(model, name, "validation")
    for event, model in events.SSE_EVENTS.items():
        out[f"event.{event}"] = _schema(model, f"event.{event}", "serialization")
    return out


def write_wire_schemas(directory: Path = WIRE_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in wire_schemas().items():
        path = directory / f"{name}.schema.json"
        path.write_text(
            json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
        )
        written.append(path)
    return written


# One event of a stream (Open API 3.1: the event-stream schema describes each event). ``data`` is the JSON
# text of the event's own model, whose schema is in ``components/schemas`` and wire_schema/v1/event.<name>.
JSON_OBJECT: dict[str, Any] = {"application/json": {"schema": {"type": "object"}}}
SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"enum": sorted(events.SSE_EVENTS)},
        "data": {"type": "string", "contentMediaType": "application/json"},
    },
}


def _op(
    summary: str, req: str | None, resp: str, *, stream: bool = False, status: str = "200"
) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "security": [{"ApiKey": []}, {"ApiKey": [], "PartnerJWT": []}]}
    if req:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{req}"}}},
        }
    content = (
        {"text/event-stream": {"schema": SSE_EVENT}}
        if stream
        else {"application/json": {"schema": {"$ref": f"#/components/schemas/{resp}"}}}
    )
    errs = {
        code: {
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        }
        for code, text in [
            ("400", "body is not JSON"),
            ("401", "missing or rejected credentials"),
            ("404", "not found"),
            ("409", "conversation belongs to the other route family"),
            ("413", "body too large"),
            ("422", "invalid body"),
            ("429", "rate limited"),
            ("502", "model server failure"),
            ("503", "a deployment of the graph is not available (a replica died); retry"),
        ]
    }
    op["responses"] = {status: {"description": "OK", "content": content}, **errs}
    return op


def _get_op(summary: str, resp: str, params: list[dict[str, Any]]) -> dict[str, Any]:
    """A GET route of the catalogue: path and query parameters, no body, the query routes' errors that
    apply (no 400/409/413/502 without a body or a model call)."""
    op = _op(summary, None, resp)
    for code in ("400", "409", "413", "502"):
        del op["responses"][code]
    op["responses"]["404"]["description"] = "unknown, or outside every selection the caller may use"
    op["parameters"] = params
    return op


def _path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema: the model's ``X | None`` means "may be left out", and a query string has
    no null (``?year=`` is the empty text, refused like any text that is not a number)."""
    branches = prop.get("anyOf")
    if not isinstance(branches, list):
        return prop
    kept = [b for b in branches if b != {"type": "null"}]
    rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
    return {**rest, **kept[0]} if len(kept) == 1 else {**rest, "anyOf": kept}


def _query_params() -> list[dict[str, Any]]:
    schema = d.DocumentListParams.model_json_schema()
    return [
        {
            "name": name,
            "in": "query",
            "required": False,
            "schema": _without_null(prop),
            "description": prop.get("description", ""),
        }
        for name, prop in schema["properties"].items()
    ]


def _conversation_op() -> dict[str, Any]:
    op = _get_op(
        "A conversation as the reader saw it", "ConversationView", [_path_param("conversation_id")]
    )
    op["responses"]["404"]["description"] = "unknown, or owned by another principal"
    del op["responses"]["422"]  # no parameter but the path's, which any text fills
    return op


def _artifact_op() -> dict[str, Any]:
    op = _get_op(
        "A v1 artifact (CSV or XLSX), for the principal that asked, until it expires",
        "",
        [_path_param("artifact_id")],
    )
    op["responses"]["200"] = {
        "description": "the file",
        "content": {
            media: {"schema": {"type": "string", "contentMediaType": media}}
            for media in ("text/csv", s.XLSX_MEDIA_TYPE)
        },
    }
    op["responses"]["404"]["description"] = "unknown, another principal's, or expired"
    del op["responses"]["422"]
    return op


def _playground_op() -> dict[str, Any]:
    op = _op(
        "Admin trial of one editorial prompt, never published", "PlaygroundRequest", "PlaygroundResponse"
    )
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    op["responses"]["403"] = {"description": "verified principal is not an admin", "content": ref}
    op["responses"]["503"] = {"description": "verified identity is off", "content": ref}
    return op


@lru_cache(maxsize=1)
def openapi_document() -> JSONObject:
    # Request bodies are published as they are validated, responses as they are written.
    requests: list[type[BaseModel]] = [s.QueryRequest, s.QueryV2Request, s.PlaygroundRequest, s.SearchRequest]
    responses: list[type[BaseModel]] = [
        s.QueryV2Response,
        s.QueryV1Response,
        s.PlaygroundResponse,
        s.SearchResponse,
        s.ErrorBody,
        s.ConversationCreated,
        s.ConversationView,
        d.DocumentList,
        d.DocumentView,
        d.PassageResponse,
        *events.SSE_EVENTS.values(),
    ]
    _, defs = models_json_schema(
        [(m, "validation") for m in requests] + [(m, "serialization") for m in responses],
        by_alias=True,
        ref_template="#/components/schemas/{model}",
    )
    _relax(defs)
    paths = {
        "/search": {"post": _op("Ranked chunks with citation metadata", "SearchRequest", "SearchResponse")},
        "/query": {
            "post": _op("v1 answer: unconfirmed sentences removed", "QueryRequest", "QueryV1Response")
        },
        "/query/stream": {"post": _op("v1 answer over SSE", "QueryRequest", "", stream=True)},
        "/query/v2": {
            "post": _op("annotate-v2 answer: every statement marked", "QueryV2Request", "QueryV2Response")
        },
        "/query/v2/stream": {
            "post": _op("annotate-v2 over SSE (annotations before text)", "QueryV2Request", "", stream=True)
        },
        "/playground": {"post": _playground_op()},
        "/conversations": {
            "post": _op("Create an empty conversation", None, "ConversationCreated", status="201")
        },
        "/conversations/{conversation_id}": {"get": _conversation_op()},
        "/documents": {
            "get": _get_op(
                "Documents the caller may use, by title/type/number/year, paged",
                "DocumentList",
                _query_params(),
            )
        },
        "/documents/{document_id}": {
            "get": _get_op("A document's identity and sections", "DocumentView", [_path_param("document_id")])
        },
        "/documents/{document_id}/passages/{chunk_id}": {
            "get": _get_op(
                "A passage as cited, with the reader's context and its citation metadata",
                "PassageResponse",
                [_path_param("document_id"), _path_param("chunk_id")],
            )
        },
        "/artifacts/{artifact_id}": {"get": _artifact_op()},
        "/healthz": {
            "get": {
                "summary": "200 once every deployment answers; `model_servers` names each model server a "
                "role uses (ok or unavailable); `status` is `degraded` while one is down; in the Ray Serve "
                "graph `node_id` is the Ray node of the Ingress replica that answered (every response names "
                "it in `X-Served-By-Node`)",
                "security": [],
                "responses": {"200": {"description": "OK"}, "503": {"description": "not ready"}},
            }
        },
        "/metrics": {
            "get": {"summary": "Prometheus text", "security": [], "responses": {"200": {"description": "OK"}}}
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "security": [],
                "responses": {"200": {"description": "OK", "content": JSON_OBJECT}},
            }
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "aceh-rag",
            "version": "0.1.0",
            "description": "Answers over Indonesian government documents; every statement is marked by a "
            "strict judge (annotate-v2). Wire schema version " + s.WIRE_SCHEMA_VERSION,
        },
        "paths": paths,
        "components": {
            "schemas": defs.get("$defs", {}),
            "securitySchemes": {
                "ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                "PartnerJWT": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            },
        },
    }


if __name__ == "__main__":
    for p in write_wire_schemas():
        print(p)
