"""A replica that dies under a request (Ray raises an actor error through the handle) is the contract's 503
for that request, never a 500 carrying Ray's text."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from ray.exceptions import ActorDiedError

from serve_app import errors
from serve_app.agent.tools.base import ToolEvent
from serve_app.runtime.ports import (
    RemoteAgent,
    RemoteAnnotator,
    RemoteGuard,
    RemoteJudgePool,
    RemoteRetriever,
)


class _Method:
    def remote(self, *args: Any, **kwargs: Any) -> Any:
        async def died() -> Any:
            raise ActorDiedError()

        return died()


class _Stream:
    def remote(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async def gen() -> AsyncIterator[Any]:
            yield ("event", {"event": "tool.started", "data": {}})
            raise ActorDiedError()

        return gen()


class DeadHandle:
    """Every method of a handle whose replica died; ``options(stream=True)`` too."""

    def __getattr__(self, name: str) -> Any:
        return _Stream() if name == "run_stream" else _Method()

    def options(self, **kwargs: Any) -> DeadHandle:
        return self


async def _sink(event: ToolEvent) -> None:
    return None


NOTHING: Any = None  # the dead handle fails before any argument is read


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda: RemoteRetriever(DeadHandle()).search("q"), id="retriever"),
        pytest.param(lambda: RemoteGuard(DeadHandle()).admit({}), id="guard"),
        pytest.param(lambda: RemoteJudgePool(DeadHandle()).judge_many([]), id="judge-pool"),
        pytest.param(lambda: RemoteAgent(DeadHandle()).run(NOTHING, budget=NOTHING), id="agent"),
        pytest.param(
            lambda: RemoteAgent(DeadHandle()).run(NOTHING, budget=NOTHING, on_event=_sink), id="agent-stream"
        ),
        pytest.param(lambda: RemoteAnnotator(DeadHandle()).annotate(NOTHING, budget=NOTHING), id="annotator"),
    ],
)
def test_a_dead_replica_is_503(call: Any) -> None:
    with pytest.raises(errors.NotReady) as raised:
        asyncio.run(call())
    assert raised.value.status_code == 503 and "Actor" not in str(raised.value.detail)


class _Health:
    def __init__(self, outcome: str) -> None:
        self.outcome = outcome

    def remote(self) -> Any:
        async def probe() -> str:
            if self.outcome == "hang":  # no replica up: the call waits in the handle's queue
                await asyncio.sleep(10)
            if self.outcome == "died":
                raise ActorDiedError()
            return "ok"

        return probe()


class _ProbeHandle(DeadHandle):
    def __init__(self, outcome: str) -> None:
        self.health = _Health(outcome)


@pytest.mark.parametrize(("outcome", "reachable"), [("ok", True), ("hang", False), ("died", False)])
def test_the_retriever_probe(outcome: str, reachable: bool) -> None:
    port = RemoteRetriever(_ProbeHandle(outcome), probe_s=0.1)
    assert asyncio.run(port.reachable()) is reachable
