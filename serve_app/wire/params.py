"""How a route reads its parameters, in the contract's terms: the body up to its limit (413), a JSON body or a
query string as a request model (400, 422), or nothing. The ingress passes one of ``body_as``, ``query_as``
or ``no_params`` to its checks, which run it before the guard call."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from serve_app import errors
from serve_app.wire.json_body import JSONRefused, strict_json

M = TypeVar("M", bound=BaseModel)
log = logging.getLogger("aceh_rag.params")


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The whole body, refused with a 413 as soon as it is known to exceed ``max_bytes``."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise errors.PayloadTooLarge()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise errors.PayloadTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json_body(body: bytes, model: type[M]) -> M:
    """A JSON body as a model: unreadable JSON (or none, or one :func:`strict_json` refuses) is a 400, a
    body the model refuses a 422."""
    try:
        raw = strict_json(body) if body else None
    except JSONRefused as exc:
        log.info("request body refused with 400: %s", exc)  # one line: the reason, never the body
        raise errors.BadRequest() from None
    if raw is None and body.strip() != b"null":
        raise errors.BadRequest()
    try:
        return model.model_validate(raw)  # 422
    except ValidationError as exc:
        raise errors.ValidationFailed(errors.validation_details(exc.errors())) from None


def parse_query_string(request: Request, model: type[M]) -> M:
    """A query string as a model: a repeated or unknown parameter, or a bad value, is a 422."""
    items = request.query_params.multi_items()
    values = dict(items)
    if len(values) != len(items):
        repeated = sorted({k for k, _ in items if sum(1 for j, _ in items if j == k) > 1})
        raise errors.ValidationFailed(
            [{"field": k, "message": "given more than once", "type": "repeated"} for k in repeated]
        )
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise errors.ValidationFailed(errors.validation_details(exc.errors())) from None


def body_as(model: type[M]) -> Callable[[Request, bytes], M]:
    """Parse the request's JSON body as ``model`` (400 / 422)."""
    return lambda _request, body: parse_json_body(body, model)


def query_as(model: type[M]) -> Callable[[Request, bytes], M]:
    """Parse the request's query string as ``model`` (GET routes; 422)."""
    return lambda request, _body: parse_query_string(request, model)


def no_params(_request: Request, _body: bytes) -> None:
    """Routes that read no parameters (the body is still read, for the 413)."""
