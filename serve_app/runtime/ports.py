"""Adapters that give Ray handles the same async methods the plain objects have, so the pipeline runs
unchanged in one process or across the Ray Serve graph. A remote role hands back the budget it charged
inside its result (the outcome, the annotation), exactly as a local one does: nothing is copied back.

Each adapter's methods take their signatures from the role's Protocol (``roles.GuardRole``,
``retrieval.port.RetrieverPort``, ...): Ray types every reply as Any, the Protocol says what the deployment's
method of that name returns."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from typing import Concatenate, ParamSpec, Protocol, TypeVar, cast

from ray.exceptions import RayActorError
from ray.serve.exceptions import DeploymentUnavailableError, ReplicaUnavailableError

from judge.types import JudgeItem, JudgeResult
from retrieval.port import RetrieverPort
from serve_app import errors
from serve_app.agent.agent import AgentOutcome, AgentRequest
from serve_app.budget import RequestBudget
from serve_app.roles import AnnotatorRole, EventSink, GuardRole, ToolEvent
from serve_app.wire.relay import Done

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")

# A replica that died (or none is up yet) under a request: the contract's 503, never a 500 with Ray's text.
GONE = (RayActorError, DeploymentUnavailableError, ReplicaUnavailableError)


class RemoteMethod(Protocol):
    """``handle.method`` of a Ray ``DeploymentHandle``: ``remote(...)`` sends the call; its reply is awaited,
    or iterated when the handle has ``options(stream=True)``."""

    def remote(self, *args: object, **kwargs: object) -> Awaitable[object] | AsyncIterator[object]: ...


class Handle(Protocol):
    """The part of Ray's ``ray.serve.handle.DeploymentHandle`` the adapters use (a test's fake has it too)."""

    def __getattr__(self, name: str) -> RemoteMethod: ...

    def options(self, *, stream: bool) -> Handle: ...


@contextlib.contextmanager
def _replica_gone_is_503() -> Iterator[None]:
    try:
        yield
    except GONE:
        raise errors.NotReady() from None


def _forward(
    handle: Handle, method: Callable[Concatenate[S, P], Awaitable[R]]
) -> Callable[P, Coroutine[None, None, R]]:
    """``await forward(*a, **kw)`` → ``await handle.<method's name>.remote(*a, **kw)``, typed as ``method``
    (arguments passed on as given, so the deployment's own defaults apply)."""
    name = method.__name__

    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        remote: RemoteMethod = getattr(handle, name)
        with _replica_gone_is_503():
            reply = remote.remote(*args, **kwargs)
            assert isinstance(reply, Awaitable), f"{name}: a streaming handle where one reply was expected"
            return cast(R, await reply)  # the deployment's method returns what the role's method does

    return call


class RemoteGuard:
    """The Guard deployment as a :class:`~serve_app.roles.GuardRole`."""

    def __init__(self, handle: Handle) -> None:
        self.admit = _forward(handle, GuardRole.admit)
        self.verified_identity_enabled = _forward(handle, GuardRole.verified_identity_enabled)
        self.playground_limit = _forward(handle, GuardRole.playground_limit)
        self.screen_request = _forward(handle, GuardRole.screen_request)
        self.check_answer = _forward(handle, GuardRole.check_answer)
        self.refusal_text = _forward(handle, GuardRole.refusal_text)


class RemoteRetriever:
    """The Retriever deployment as a :class:`~retrieval.port.RetrieverPort`. ``reachable``: its health
    probe answers within ``probe_s`` (no replica up, e.g. while Ray Serve replaces a dead one, queues the
    probe like any call, so it times out)."""

    def __init__(self, handle: Handle, *, probe_s: float = 2.0) -> None:
        self._handle = handle
        self._probe_s = probe_s
        self.pin = _forward(handle, RetrieverPort.pin)
        self.index_version = _forward(handle, RetrieverPort.index_version)
        self.search = _forward(handle, RetrieverPort.search)
        self.documents = _forward(handle, RetrieverPort.documents)
        self.resolve_filter = _forward(handle, RetrieverPort.resolve_filter)
        self.document_chunks = _forward(handle, RetrieverPort.document_chunks)
        self.lookup_article = _forward(handle, RetrieverPort.lookup_article)
        self.cross_references = _forward(handle, RetrieverPort.cross_references)
        self.table = _forward(handle, RetrieverPort.table)
        self.chunk = _forward(handle, RetrieverPort.chunk)
        self.find_documents = _forward(handle, RetrieverPort.find_documents)
        self.document_outline = _forward(handle, RetrieverPort.document_outline)
        self.passage = _forward(handle, RetrieverPort.passage)

    async def reachable(self) -> bool:
        try:
            probe = self._handle.health.remote()
            assert isinstance(probe, Awaitable), "health: a streaming handle where one reply was expected"
            await asyncio.wait_for(probe, timeout=self._probe_s)
        except (TimeoutError, *GONE):
            return False
        return True


class _JudgePool(Protocol):
    """The JudgePool deployment's method: the judge function of an annotator (one call per pass)."""

    async def judge_many(self, items: list[JudgeItem]) -> list[JudgeResult]: ...


class RemoteJudgePool:
    """The JudgePool deployment: ``judge_many`` is a ``factory.JudgeFn``."""

    def __init__(self, handle: Handle) -> None:
        self.judge_many = _forward(handle, _JudgePool.judge_many)


class _AgentDeployment(Protocol):
    """The Agent deployment's one-reply method (JSON routes), whose budget is positional."""

    async def run(self, req: AgentRequest, budget: RequestBudget) -> AgentOutcome: ...


class RemoteAgent:
    """The Agent deployment as an :class:`~serve_app.roles.AgentRole`: with an event sink (streams) it
    relays the deployment's events, then takes its outcome; without one (JSON routes) one plain call."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._run_once = _forward(handle, _AgentDeployment.run)

    async def run(
        self, req: AgentRequest, *, budget: RequestBudget, on_event: EventSink | None = None
    ) -> AgentOutcome:
        if on_event is None:
            return await self._run_once(req, budget)
        with _replica_gone_is_503():
            return await self._relay(req, budget, on_event)

    async def _relay(self, req: AgentRequest, budget: RequestBudget, on_event: EventSink) -> AgentOutcome:
        stream = self._handle.options(stream=True).run_stream.remote(req, budget)
        assert isinstance(stream, AsyncIterator), "run_stream: a handle without options(stream=True)"
        # what AgentDeployment.run_stream yields: the agent's tool events, then its outcome
        async for item in cast("AsyncIterator[ToolEvent | Done[AgentOutcome]]", stream):
            if isinstance(item, Done):
                return item.value
            await on_event(item)
        raise RuntimeError("the agent deployment ended its stream without an outcome")


class RemoteAnnotator:
    """The Annotator deployment as an :class:`~serve_app.roles.AnnotatorRole`."""

    def __init__(self, handle: Handle) -> None:
        self.annotate = _forward(handle, AnnotatorRole.annotate)
