"""Adapters that give Ray handles the same async methods the plain objects have, so the pipeline
runs unchanged in one process or across the Ray Serve graph."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from ray.exceptions import RayActorError
from ray.serve.exceptions import DeploymentUnavailableError, ReplicaUnavailableError

from serve_app import errors

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

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self._handle, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            with _replica_gone_is_503():
                return await method.remote(*args, **kwargs)

        return call


def copy_state(target: Any, source: Any) -> None:
    """Bring a budget that was charged in another process back into the caller's object."""
    if target is source or source is None:
        return
    if dataclasses.is_dataclass(target):
        for f in dataclasses.fields(target):
            setattr(target, f.name, getattr(source, f.name))
    else:
        target.__dict__.update(source.__dict__)


class RemoteAgent:
    """Streams: the Agent deployment yields ``("event", dict)`` items, then ``("outcome", outcome, budget)``;
    without an event sink (JSON routes) one plain call returns ``(outcome, budget)``."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    async def run(
        self, req: Any, *, budget: Any, on_event: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    ) -> Any:
        with _replica_gone_is_503():
            return await self._run(req, budget, on_event)

    async def _run(
        self, req: Any, budget: Any, on_event: Callable[[dict[str, Any]], Awaitable[None]] | None
    ) -> Any:
        if on_event is None:
            outcome, remote_budget = await self._handle.run.remote(req, budget)
            copy_state(budget, remote_budget)
            return outcome
        gen = self._handle.options(stream=True).run_stream.remote(req, budget)
        outcome = None
        async for item in gen:
            if item[0] == "event":
                if on_event is not None:
                    await on_event(item[1])
            else:
                outcome = item[1]
                copy_state(budget, item[2])
        if outcome is None:
            raise RuntimeError("the agent deployment ended its stream without an outcome")
        return outcome


class RemoteAnnotator:
    def __init__(self, handle: Any) -> None:
        self._handle = handle

    async def annotate(self, *, budget: Any, **kwargs: Any) -> Any:
        with _replica_gone_is_503():
            annotation = await self._handle.annotate.remote(budget=budget, **kwargs)
        copy_state(budget, getattr(annotation, "budget", None))
        return annotation
