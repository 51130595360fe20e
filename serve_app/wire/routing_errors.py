"""The router's own answers in the contract's JSON error body, like every other error the OpenAPI declares."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from serve_app import errors


async def routing_error(_request: Request, exc: Exception) -> Response:
    """A path no route matches (404) or a method the route does not take (405, with its ``Allow``)."""
    status = exc.status_code if isinstance(exc, HTTPException) else 404
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    error = errors.MethodNotAllowed() if status == 405 else errors.RouteNotFound()
    return JSONResponse(error.body(), status_code=error.status_code, headers=headers)


# Starlette's exception handlers by status: both router answers go through routing_error.
ROUTING_ERROR_HANDLERS = {404: routing_error, 405: routing_error}
