"""What a call can fail with: one exception class per HTTP status the contract names, each carrying the
service's fixed ``error`` code and ``detail`` (the failing fields on 422), never a traceback."""

from __future__ import annotations

from typing import Any


class AcehError(Exception):
    """Base of every error this client raises."""


class ApiError(AcehError):
    """The service answered with an error status and its ``{"error", "detail"}`` body."""

    status: int = 0

    def __init__(self, status: int, error: str, detail: Any, *, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {error}: {detail}")
        self.status = status
        self.error = error
        self.detail = detail
        self.retry_after = retry_after


class BadRequest(ApiError):
    """400: the body was not JSON."""


class Unauthorized(ApiError):
    """401: API key or partner JWT missing or rejected."""


class Forbidden(ApiError):
    """403: authenticated, not allowed (``/playground`` for a non-admin)."""


class NotFound(ApiError):
    """404: unknown, not the caller's, expired, or nothing readable was found."""


class Conflict(ApiError):
    """409: the conversation belongs to the other route family."""


class PayloadTooLarge(ApiError):
    """413: the body is over the limit, or (v1) the sources do not fit the model's context."""


class ValidationFailed(ApiError):
    """422: ``detail`` lists the failing fields."""


class RateLimited(ApiError):
    """429 after the client's bounded retries; ``retry_after`` is the last Retry-After in seconds."""


class ServerError(ApiError):
    """5xx: 502 a model server failed, 503 not ready or a replica went away, 500 internal."""


class StreamCut(AcehError):
    """The SSE stream ended without its terminal ``done`` or ``error`` frame: whatever came before an
    ``annotations`` frame is wholly unverified (contract client rule)."""


class ProtocolError(AcehError):
    """The service answered with something the contract does not describe (not JSON, wrong shape)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: PayloadTooLarge, 422: ValidationFailed, 429: RateLimited,
}


def error_for(status: int, body: Any, retry_after: float | None = None) -> ApiError:
    error, detail = "unknown", body
    if isinstance(body, dict) and "error" in body:
        error, detail = str(body["error"]), body.get("detail")
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, error, detail, retry_after=retry_after)
