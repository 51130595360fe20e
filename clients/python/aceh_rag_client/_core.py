"""What the sync and async clients share: credentials, request bodies built from the generated models (so a
bad option fails here, before the network), the 429 retry rule, and response decoding."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from aceh_rag_client.errors import ProtocolError, StreamCut, error_for

M = TypeVar("M", bound=BaseModel)
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


@dataclass(frozen=True)
class RetryPolicy:
    """Retries a 429 after its ``Retry-After`` (seconds or an HTTP date), at most ``max_retries`` times and
    never waiting longer than ``max_wait_s`` at once: a longer Retry-After raises RateLimited at once, as
    retrying earlier than the service asked would only be refused again."""

    max_retries: int = 3
    max_wait_s: float = 30.0
    default_wait_s: float = 1.0  # a 429 without Retry-After (the service always sends one)

    def wait_s(self, response: httpx.Response, attempt: int) -> float | None:
        if response.status_code != 429 or attempt >= self.max_retries:
            return None
        wait = retry_after_s(response)
        wait = self.default_wait_s if wait is None else wait
        return wait if wait <= self.max_wait_s else None


def retry_after_s(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def headers(api_key: str, token: str | None) -> dict[str, str]:
    out = {"X-API-Key": api_key, "User-Agent": "aceh-rag-client/0.1"}
    if token is not None:
        out["Authorization"] = f"Bearer {token}"
    return out


def body(model: type[BaseModel], **fields: Any) -> dict[str, Any]:
    """A request body checked against the wire model; only the fields the caller set are sent."""
    try:
        parsed = model.model_validate(fields)
    except ValidationError as exc:
        raise ValueError(f"invalid {model.__name__}: {exc}") from None
    return parsed.model_dump(mode="json", exclude_unset=True, by_alias=True)


def path(*segments: str) -> str:
    return "/" + "/".join(quote(s, safe="") for s in segments)


class DocumentFilters(TypedDict, total=False):
    """The query of ``GET /documents``, each optional (the service checks the values: 422)."""

    q: str | None  # words of the title or number
    type: str | None  # the document type, e.g. "Qanun"
    number: str | None
    year: int | None
    selection: str | None  # a partner's named selection of documents
    page: int | None
    page_size: int | None


def document_params(filters: DocumentFilters) -> dict[str, str]:
    """The query string of ``GET /documents``; a filter the route does not take is refused here, as an
    unknown keyword argument is (the service would ignore it)."""
    unknown = sorted(set(filters) - DocumentFilters.__optional_keys__)
    if unknown:
        raise TypeError(f"documents() got unexpected filter(s): {', '.join(unknown)}")
    return params(**filters)


def params(**values: Any) -> dict[str, str]:
    return {k: str(v) for k, v in values.items() if v is not None}


def stream_retry_wait(response: httpx.Response, url: str, retry: RetryPolicy, attempt: int) -> float:
    """A stream request answered with an error status (its body read): the wait before asking again, or
    the status's error raised (StreamCut for a status without one)."""
    wait = retry.wait_s(response, attempt)
    if wait is None:
        raise_for(response)
        raise StreamCut(f"{url}: status {response.status_code} without a stream")
    return wait


def raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        payload: Any = response.json()
    except ValueError:
        payload = response.text[:500]
    raise error_for(response.status_code, payload, retry_after_s(response))


def decode(response: httpx.Response, model: type[M]) -> M:
    raise_for(response)
    try:
        return model.model_validate(response.json())
    except (ValueError, ValidationError) as exc:
        raise ProtocolError(f"{response.request.url.path}: not a {model.__name__}: {exc}") from None
