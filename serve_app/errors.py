"""HTTP-facing errors: small exception classes with a status, a fixed code and a fixed, safe text.

Components raise these; the ingress maps them to responses (JSON) or to one SSE ``error`` frame. No
message ever carries a model server's text or a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from models.json_types import JSONObject

INTERNAL_DETAIL = "Terjadi kesalahan internal. Silakan coba lagi."
# One failing field of a request: {"field", "message", "type"}
FieldError = dict[str, str]


class ServiceError(Exception):
    status_code = 500
    error = "internal_error"
    detail: str | list[FieldError] = INTERNAL_DETAIL

    def __init__(
        self, detail: str | list[FieldError] | None = None, *, headers: dict[str, str] | None = None
    ):
        super().__init__(self.error)
        if detail is not None:
            self.detail = detail
        self.headers = headers or {}

    def body(self) -> JSONObject:
        return {"error": self.error, "detail": self.detail}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status_code={self.status_code!r}, error={self.error!r})"


class PayloadTooLarge(ServiceError):
    status_code = 413
    error = "payload_too_large"
    detail = "Ukuran permintaan melebihi batas."


class Unauthorized(ServiceError):
    status_code = 401
    error = "unauthorized"
    detail = "Kredensial tidak valid."


class BadRequest(ServiceError):
    status_code = 400
    error = "invalid_json"
    detail = "Body permintaan bukan JSON yang valid."


class ValidationFailed(ServiceError):
    status_code = 422
    error = "validation_error"
    detail = "Body permintaan tidak valid."


class IdentityDisabled(ServiceError):
    status_code = 503
    error = "verified_identity_disabled"
    detail = "Playground memerlukan identitas mitra terverifikasi, yang tidak aktif di server ini."


class Forbidden(ServiceError):
    status_code = 403
    error = "forbidden"
    detail = "Anda tidak berwenang menggunakan rute ini."


class RateLimited(ServiceError):
    status_code = 429
    error = "rate_limited"
    detail = "Terlalu banyak permintaan. Silakan coba lagi nanti."


class NotFound(ServiceError):
    status_code = 404
    error = "not_found"
    detail = "Percakapan atau sumber yang diminta tidak ditemukan."


class RouteNotFound(NotFound):
    """No route for the path (a path parameter holding ``/`` included): the router's own 404."""

    detail = "Rute yang diminta tidak ada."


class MethodNotAllowed(ServiceError):
    status_code = 405
    error = "method_not_allowed"
    detail = "Metode HTTP ini tidak didukung oleh rute ini."


class NothingReadable(NotFound):
    detail = "Alat pencarian tidak mengembalikan sumber yang dapat dibaca untuk pertanyaan ini."


class Conflict(ServiceError):
    status_code = 409
    error = "conversation_route_conflict"
    detail = "Percakapan ini milik rute lain (/query dan /query/v2 tidak dapat dicampur)."


class ContextBudgetExceeded(ServiceError):
    status_code = 413
    error = "context_budget_exhausted"
    detail = "Bahan sumber yang dibutuhkan pertanyaan ini tidak muat dalam konteks model."


class ModelFailure(ServiceError):
    status_code = 502
    error = "model_failure"
    detail = "Layanan model tidak dapat menyelesaikan jawaban. Silakan coba lagi."


class RequestTimeout(ServiceError):
    status_code = 408
    error = "request_timeout"
    detail = "Body permintaan tidak selesai dikirim dalam batas waktu."


class NotReady(ServiceError):
    status_code = 503
    error = "not_ready"
    detail = "Layanan belum siap."


def validation_details(errors: Sequence[Mapping[str, object]]) -> list[FieldError]:
    """The failing fields of a pydantic error list, without input values or internals."""
    out = []
    for err in errors:
        where = err.get("loc", ())
        loc = [str(p) for p in where if p not in ("body",)] if isinstance(where, tuple | list) else []
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        kind = str(err.get("type", "invalid"))
        out.append({"field": ".".join(loc) or "body", "message": msg, "type": kind})
    return out
