"""Adapters that give Ray handles the same async methods the plain objects have, so the pipeline runs
unchanged in one process or across the Ray Serve graph. A remote role hands back the budget it charged
inside its result (the outcome, the annotation), exactly as a local one does: nothing is copied back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from ray.exceptions import RayActorError
from ray.serve.exceptions import DeploymentUnavailableError, ReplicaUnavailableError

from serve_app import errors
from serve_app.agent.agent import AgentOutcome, AgentRequest
from serve_app.answer.annotation import Annotation
from serve_app.answer.segments import AnnotationRequest
from serve_app.budget import RequestBudget
from serve_app.roles import EventSink
from serve_app.wire.relay import Done

# A replica that died (or none is up yet) under a request: the contract's 503, never a 500 with Ray's text.
GONE = (RayActorError, DeploymentUnavailableError, ReplicaUnavailableError)


@contextlib.contextmanager
def _replica_gone_is_503() -> Iterator[None]:
    try:
        yield
    except GONE:
        raise errors.NotReady() from None


class HandleProxy:
    """``await proxy.method(*a, **kw)`` → ``await handle.method.remote(*a, **kw)``."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def __getattr__(self, name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self._handle, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            with _replica_gone_is_503():
                return await method.remote(*args, **kwargs)

        return call


class RemoteRetriever(HandleProxy):
    """The Retriever deployment as a :class:`~retrieval.port.RetrieverPort`. ``reachable``: its health
    probe answers within ``probe_s`` (no replica up, e.g. while Ray Serve replaces a dead one, queues the
    probe like any call, so it times out)."""

    def __init__(self, handle: Any, *, probe_s: float = 2.0) -> None:
        super().__init__(handle)
        self._probe_s = probe_s

    async def reachable(self) -> bool:
        try:
            await asyncio.wait_for(self._handle.health.remote(), timeout=self._probe_s)
        except (TimeoutError, *GONE):
            return False
        return True


class RemoteAgent:
    """The Agent deployment as an :class:`~serve_app.roles.AgentRole`: with an event sink (streams) it
    relays the deployment's events, then takes its outcome; without one (JSON routes) one plain call."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    async def run(
        self, req: AgentRequest, *, budget: RequestBudget, on_event: EventSink | None = None
    ) -> AgentOutcome:
        with _replica_gone_is_503():
            return await self._run(req, budget, on_event)

    async def _run(
        self, req: AgentRequest, budget: RequestBudget, on_event: EventSink | None
    ) -> AgentOutcome:
        if on_event is None:
            outcome: AgentOutcome = await self._handle.run.remote(req, budget)
            return outcome
        async for item in self._handle.options(stream=True).run_stream.remote(req, budget):
            if isinstance(item, Done):
                result: AgentOutcome = item.value
                return result
            await on_event(item)
        raise RuntimeError("the agent deployment ended its stream without an outcome")


class RemoteAnnotator:
    """The Annotator deployment as an :class:`~serve_app.roles.AnnotatorRole`."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    async def annotate(self, request: AnnotationRequest, *, budget: RequestBudget) -> Annotation:
        with _replica_gone_is_503():
            annotation: Annotation = await self._handle.annotate.remote(request, budget=budget)
        return annotation
