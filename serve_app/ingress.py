"""Starlette routes. The router only reads the body, runs the checks in the contract's order, and
picks a JSON response, an SSE stream or an error status; the work is in :mod:`serve_app.pipeline`."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from models.json_types import json_text
from serve_app import errors
from serve_app.catalog.artifacts import ArtifactOffer
from serve_app.catalog.documents import DocumentCatalog
from serve_app.guard.auth import Principal
from serve_app.guard.policy import GuardDecision
from serve_app.metrics import Metrics
from serve_app.pipeline import Pipeline
from serve_app.roles import EventSink, ToolEvent
from serve_app.wire.body_guard import BodyGuardMiddleware, BodyLimits
from serve_app.wire.documents import DocumentListParams
from serve_app.wire.openapi import openapi_document
from serve_app.wire.params import body_as, no_params, query_as, read_body
from serve_app.wire.relay import Done, relay
from serve_app.wire.responses import AnswerResult
from serve_app.wire.responses import Route as AnswerRoute
from serve_app.wire.routing_errors import ROUTING_ERROR_HANDLERS
from serve_app.wire.schemas import (
    PlaygroundRequest,
    QueryRequest,
    QueryV1Response,
    QueryV2Request,
    SearchRequest,
)
from serve_app.wire.sse import answer_frames, error_frame, event_frame
from serve_app.wire.tracing import ServedByMiddleware, TraceMiddleware
from serve_app.wire.ui import UIStaticFiles

log = logging.getLogger("aceh_rag.ingress")
KEEPALIVE = ": keep-alive\n\n"  # an SSE comment: clients ignore it, proxies see traffic
INDEX_VERSION_HEADER = "X-Index-Version"  # the index version the whole answer was read from
HealthCheck = Callable[[], Awaitable[dict[str, str]]]
MetricsText = Callable[[], Awaitable[str]]
Parsed = TypeVar("Parsed")
# What one answer stream carries: the work's events, then its result (wire/relay.py).
StreamItem = ToolEvent | Done[AnswerResult]
AnswerStream = AsyncGenerator[StreamItem, None]


def _error_response(exc: errors.ServiceError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status_code, headers=exc.headers)


async def _next_item(stream: AnswerStream, route: str) -> StreamItem | errors.ServiceError:
    """The stream's next event or result; a failure of the work becomes the ServiceError it answers with."""
    try:
        return await anext(stream)
    except errors.ServiceError as exc:
        return exc
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - never a traceback to the client
        log.exception("unhandled error on %s", route)
        return errors.ServiceError()


class Ingress:
    """Routes over a :class:`Pipeline`; the guard and the store are the pipeline's own roles (plain objects
    in one process, handle adapters in the Ray graph)."""

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        max_body_bytes: int,
        metrics: Metrics,
        health: HealthCheck,
        metrics_text: MetricsText | None = None,
        model_health: HealthCheck | None = None,
        behind_ray_proxy: bool = False,
        sse_keepalive_s: float = 15.0,
        catalog: DocumentCatalog | None = None,
        artifacts: ArtifactOffer | None = None,
        node_id: str | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.guard = pipeline.guard
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics
        self.health = health
        self.metrics_text = metrics_text
        self.model_health = model_health
        self.store = pipeline.store
        self.behind_ray_proxy = behind_ray_proxy
        self.sse_keepalive_s = sse_keepalive_s
        self.catalog = catalog or DocumentCatalog(pipeline.retriever, pipeline.config)
        self.artifacts = artifacts or ArtifactOffer.over(
            pipeline.retriever, self.store, ttl_s=pipeline.config.artifacts.ttl_s
        )
        self.node_id = node_id  # the Ray node this replica runs on (graph only)

    def app(self) -> Starlette:
        routes = [
            Route("/healthz", self.healthz, methods=["GET"]),
            Route("/metrics", self.metrics_route, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route("/search", self.search, methods=["POST"]),
            Route("/query", self.query_v1, methods=["POST"]),
            Route("/query/stream", self.query_v1_stream, methods=["POST"]),
            Route("/query/v2", self.query_v2, methods=["POST"]),
            Route("/query/v2/stream", self.query_v2_stream, methods=["POST"]),
            Route("/playground", self.playground, methods=["POST"]),
            Route("/conversations", self.create_conversation, methods=["POST"]),
            Route("/conversations/{conversation_id}", self.get_conversation, methods=["GET"]),
            Route("/artifacts/{artifact_id}", self.get_artifact, methods=["GET"]),
            Route("/documents", self.list_documents, methods=["GET"]),
            Route("/documents/{document_id}", self.get_document, methods=["GET"]),
            Route("/documents/{document_id}/passages/{chunk_id}", self.get_passage, methods=["GET"]),
            # The reference web client: open like /healthz; the page sends credentials on its API calls.
            Mount("/ui", app=UIStaticFiles(), name="ui"),
        ]
        body_limits = BodyLimits.of(self.pipeline.config.limits)
        body_limits = dataclasses.replace(body_limits, max_body_bytes=self.max_body_bytes)
        middleware = [
            Middleware(TraceMiddleware, behind_ray_proxy=self.behind_ray_proxy),
            # Before any route: a slow body is refused (408 / 503 / 413) before a route waits on it.
            Middleware(BodyGuardMiddleware, limits=body_limits),
        ]
        if self.node_id is not None:
            counter = self.metrics.node_responses.labels(self.node_id)
            middleware.append(Middleware(ServedByMiddleware, node_id=self.node_id, on_response=counter.inc))
        return Starlette(routes=routes, middleware=middleware, exception_handlers=ROUTING_ERROR_HANDLERS)

    # ------------------------------------------------------------------ open routes

    async def healthz(self, request: Request) -> Response:
        try:
            status = await asyncio.wait_for(self.health(), timeout=10)
        except Exception:  # noqa: BLE001 - any failing deployment means not healthy
            return JSONResponse({"status": "unavailable"}, status_code=503)
        ok = all(v == "ok" for v in status.values())
        body: dict[str, Any] = {"status": "ok" if ok else "unavailable", "deployments": status}
        if self.node_id is not None:
            body["node_id"] = self.node_id  # the node whose Ingress replica answered this probe
        with contextlib.suppress(Exception):  # the version is information; health is the deployments
            body["index_version"] = await asyncio.wait_for(self.pipeline.retriever.index_version(), 5)
        if self.model_health is not None:
            # A model server that is down leaves the service up (its answers degrade as the contract says:
            # judge_unavailable claims, or 502 for the agent): 200 with status "degraded", naming the server.
            try:
                servers = await asyncio.wait_for(self.model_health(), timeout=10)
            except Exception:  # noqa: BLE001 - the probe itself failing says nothing is known to answer
                servers = {"model_servers": "unavailable"}
            body["model_servers"] = servers
            if ok and any(v != "ok" for v in servers.values()):
                body["status"] = "degraded"
        return JSONResponse(body, status_code=200 if ok else 503)

    async def metrics_route(self, request: Request) -> Response:
        text = self.metrics.text()
        if self.metrics_text is not None:
            with contextlib.suppress(Exception):
                text = await self.metrics_text()
        return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_document())

    # ------------------------------------------------------------------ checks in the contract's order

    async def _admit(
        self,
        request: Request,
        parse: Callable[[Request, bytes], Parsed],
        *,
        playground: bool = False,
        screen: bool = False,
    ) -> tuple[Principal, Parsed, GuardDecision | None]:
        """The contract's checks in order: 413, 401, 400, 422, 503, 403, 429. The parameters are parsed
        (wire/params.py: ``body_as``, ``query_as`` or ``no_params``) before the guard call so that, with
        ``screen``, the guard screens a valid question in the same round trip; a parse error still loses to
        a 401."""
        body = await read_body(request, self.max_body_bytes)  # 413 before anything is parsed
        parsed: Parsed | errors.ServiceError
        try:
            parsed = parse(request, body)
        except errors.ServiceError as exc:
            parsed = exc
        question = parsed.query if screen and isinstance(parsed, QueryRequest) else None
        admission = await self.guard.admit(dict(request.headers), question)  # 401
        principal, retry_after = admission.principal, admission.retry_after
        if isinstance(parsed, errors.ServiceError):
            raise parsed  # 400 / 422
        if playground:
            if not await self.guard.verified_identity_enabled():
                raise errors.IdentityDisabled()  # 503
            if not principal.is_admin:
                raise errors.Forbidden()  # 403
            if retry_after is None:
                retry_after = await self.guard.playground_limit(principal)
        if retry_after is not None:
            raise errors.RateLimited(headers={"Retry-After": retry_after})  # 429
        return principal, parsed, admission.screen

    async def _pin_index(self) -> dict[str, str]:
        """Hold one index version for the rest of the request (retrieval.live); its header."""
        pin = getattr(self.pipeline.retriever, "pin", None)
        if pin is None:
            return {}
        try:
            return {INDEX_VERSION_HEADER: await pin()}
        except Exception:  # noqa: BLE001 - unpinned, each call reads the newest version; the calls report
            log.warning("the index version could not be pinned", exc_info=True)
            return {}

    async def _timed(self, route: str, handler: Callable[[], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        try:
            response = await handler()
        except errors.ServiceError as exc:
            response = _error_response(exc)
        except Exception:  # noqa: BLE001 - never a traceback to the client
            log.exception("unhandled error on %s", route)
            response = _error_response(errors.ServiceError())
        self.metrics.requests.labels(route, str(response.status_code)).inc()
        self.metrics.latency.labels(route).observe(time.perf_counter() - started)
        return response

    # ------------------------------------------------------------------ JSON routes

    async def search(self, request: Request) -> Response:
        async def run() -> Response:
            principal, req, _ = await self._admit(request, body_as(SearchRequest))
            version = await self._pin_index()
            return JSONResponse(await self.pipeline.search(req, principal), headers=version)

        return await self._timed("/search", run)

    async def _answer_json(
        self, request: Request, route: str, model: type[QueryRequest], family: AnswerRoute
    ) -> Response:
        async def run() -> Response:
            principal, req, screen = await self._admit(
                request, body_as(model), playground=family == "playground", screen=True
            )
            version = await self._pin_index()
            result = await self.pipeline.answer(req, principal, route=family, prescreen=screen)
            self._count(result)
            result = await self._offer(result, req, principal)
            return JSONResponse(result.json_body(), headers=version)  # the one dump of the answer

        return await self._timed(route, run)

    async def query_v1(self, request: Request) -> Response:
        return await self._answer_json(request, "/query", QueryRequest, "v1")

    async def query_v2(self, request: Request) -> Response:
        return await self._answer_json(request, "/query/v2", QueryV2Request, "v2")

    async def playground(self, request: Request) -> Response:
        return await self._answer_json(request, "/playground", PlaygroundRequest, "playground")

    async def _offer(self, result: AnswerResult, req: QueryRequest, principal: Principal) -> AnswerResult:
        """v1 with ``offer_artifacts``: the answer's files set on its response (``artifacts``, and the
        stream's artifacts event); v2 refuses the flag at validation (seed 000: /query/v2 makes no files)."""
        if not isinstance(result.response, QueryV1Response) or not req.offer_artifacts:
            return result
        return result.with_artifacts(await self.artifacts.offer(result.response, principal))

    def _count(self, result: AnswerResult) -> None:
        """The response's refusal reason, then the verdicts and verification of its annotation."""
        if reason := result.response.fallback_reason:
            self.metrics.refusals.labels(reason).inc()
        if result.route == "v1":  # a v1 answer publishes its gate's claim map, not the annotation's claims
            return
        for claim in result.annotation.claims:
            self.metrics.verdicts.labels(json_text(claim["verdict"])).inc()
            unverified = json_text(claim.get("unverified_reason"))
            if unverified:
                self.metrics.unverified.labels(unverified).inc()
        if verification := json_text(result.annotation.faithfulness.get("verification")):
            self.metrics.answers.labels(verification).inc()

    # ------------------------------------------------------------------ streams

    async def query_v1_stream(self, request: Request) -> Response:
        return await self._stream(request, "/query/stream", QueryRequest, "v1")

    async def query_v2_stream(self, request: Request) -> Response:
        return await self._stream(request, "/query/v2/stream", QueryV2Request, "v2")

    async def _stream(
        self, request: Request, route: str, model: type[QueryRequest], family: AnswerRoute
    ) -> Response:
        """Work that can fail runs before the first frame: a failure before any frame is a plain status;
        after ``tool.*`` frames it is one ``error`` frame. The answer is buffered and guarded first. The
        work's events come through the one queue pump (wire/relay.py) the agent deployment uses too."""
        started = time.perf_counter()
        try:
            principal, req, screen = await self._admit(request, body_as(model), screen=True)
            version = await self._pin_index()
        except errors.ServiceError as exc:
            self.metrics.requests.labels(route, str(exc.status_code)).inc()
            return _error_response(exc)

        async def work(on_event: EventSink) -> AnswerResult:
            result = await self.pipeline.answer(
                req, principal, route=family, on_event=on_event, prescreen=screen
            )
            return await self._offer(result, req, principal)

        stream: AnswerStream = relay(work)
        first = await _next_item(stream, route)
        if isinstance(first, errors.ServiceError):
            self.metrics.requests.labels(route, str(first.status_code)).inc()
            await stream.aclose()
            return _error_response(first)

        async def frames() -> AsyncIterator[str]:
            status = "200"
            getter: asyncio.Future[StreamItem | errors.ServiceError] | None = None
            try:
                pending: StreamItem | errors.ServiceError | None = first
                while True:
                    if pending is None:
                        getter = getter or asyncio.ensure_future(_next_item(stream, route))
                        done, _ = await asyncio.wait({getter}, timeout=self.sse_keepalive_s)
                        if not done:
                            yield KEEPALIVE  # the agent or judge still works: proxies must not cut us
                            continue
                        pending, getter = getter.result(), None
                    item, pending = pending, None
                    if isinstance(item, errors.ServiceError):
                        status = str(item.status_code)
                        detail = item.detail if isinstance(item.detail, str) else "invalid"
                        yield error_frame(item.status_code, item.error, detail)
                        return
                    if not isinstance(item, Done):
                        yield event_frame(item["event"], item["data"])
                        continue
                    self._count(item.value)
                    try:
                        for piece in answer_frames(item.value):
                            yield piece
                    except Exception:  # noqa: BLE001 - after annotations: one error frame
                        log.exception("stream writer failed on %s", route)
                        status = "500"
                        yield error_frame(500, "internal_error", errors.INTERNAL_DETAIL)
                    return
            finally:
                if getter is not None:  # the client went away: closing the pump cancels the work
                    getter.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await getter
                await stream.aclose()  # nothing half-done is saved
                self.metrics.requests.labels(route, status).inc()
                self.metrics.latency.labels(route).observe(time.perf_counter() - started)

        return StreamingResponse(
            frames(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **version},
        )

    # ------------------------------------------------------------------ conversations

    async def create_conversation(self, request: Request) -> Response:
        async def run() -> Response:
            principal, _, _ = await self._admit(request, no_params)
            created = await asyncio.to_thread(self.store.create_conversation, principal.key)
            return JSONResponse(created, status_code=201)

        return await self._timed("/conversations", run)

    async def get_conversation(self, request: Request) -> Response:
        async def run() -> Response:
            principal, _, _ = await self._admit(request, no_params)
            cid = request.path_params["conversation_id"]
            record = await asyncio.to_thread(self.store.get_conversation, cid, principal.key)
            if record is None:
                raise errors.NotFound()
            messages = await asyncio.to_thread(self.store.list_messages, cid)
            return JSONResponse(
                {"conversation_id": cid, "route": record.route, "messages": messages}
            )

        return await self._timed("/conversations/{id}", run)

    # ------------------------------------------------------------------ citation routes

    async def list_documents(self, request: Request) -> Response:
        return await self._catalog_view(
            request, "/documents", query_as(DocumentListParams), self.catalog.list
        )

    async def get_document(self, request: Request) -> Response:
        document_id = request.path_params["document_id"]
        return await self._catalog_view(
            request, "/documents/{id}", no_params, lambda _, who: self.catalog.document(document_id, who)
        )

    async def get_passage(self, request: Request) -> Response:
        ids = request.path_params["document_id"], request.path_params["chunk_id"]
        route = "/documents/{id}/passages/{chunk_id}"
        return await self._catalog_view(
            request, route, no_params, lambda _, who: self.catalog.passage(*ids, who)
        )

    async def _catalog_view(
        self,
        request: Request,
        route: str,
        parse: Callable[[Request, bytes], Parsed],
        view: Callable[[Parsed, Principal], Awaitable[BaseModel]],
    ) -> Response:
        """A citation route: admitted like every route, then the catalogue's view of it as JSON."""

        async def run() -> Response:
            principal, params, _ = await self._admit(request, parse)
            return JSONResponse((await view(params, principal)).model_dump(mode="json"))

        return await self._timed(route, run)

    async def get_artifact(self, request: Request) -> Response:
        async def run() -> Response:
            principal, _, _ = await self._admit(request, no_params)
            found = await self.artifacts.fetch(request.path_params["artifact_id"], principal)
            if found is None:
                raise errors.NotFound()
            media = found.media_type
            if media == "text/csv":
                media += "; charset=utf-8"
            headers = {
                "Content-Disposition": f'attachment; filename="{found.name}"',
                "Cache-Control": "private, no-store",
                "X-Content-Type-Options": "nosniff",
            }
            return Response(found.content, media_type=media, headers=headers)

        return await self._timed("/artifacts/{id}", run)
