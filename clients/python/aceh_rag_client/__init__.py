"""Typed client of the aceh-rag HTTP API. Mark only ``supported`` claims as verified; see the README."""

from aceh_rag_client import models
from aceh_rag_client._core import DocumentFilters, RetryPolicy
from aceh_rag_client.client import AsyncClient, Client
from aceh_rag_client.errors import (
    AcehError,
    ApiError,
    Conflict,
    NotFound,
    ProtocolError,
    RateLimited,
    ServerError,
    StreamCut,
    Unauthorized,
    ValidationFailed,
)
from aceh_rag_client.sse import StreamEvent

__all__ = [
    "AcehError",
    "ApiError",
    "AsyncClient",
    "Client",
    "Conflict",
    "DocumentFilters",
    "NotFound",
    "ProtocolError",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "StreamCut",
    "StreamEvent",
    "Unauthorized",
    "ValidationFailed",
    "models",
]
