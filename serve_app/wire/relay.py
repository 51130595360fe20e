"""One queue pump for both places that stream while work runs: the ingress (tool frames, then the answer)
and the Agent deployment (tool events over a streaming handle, then the outcome)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
E = TypeVar("E")  # the events the work emits


@dataclass(frozen=True, slots=True)
class Done(Generic[T]):
    """The work's result, after its last event."""

    value: T


async def relay(
    work: Callable[[Callable[[E], Awaitable[None]]], Awaitable[T]],
) -> AsyncGenerator[E | Done[T], None]:
    """Runs ``work(on_event)`` and yields each event it emits as it comes, then :class:`Done` with its
    result; an exception of the work is raised here after the events before it. Closing the iterator
    early (the caller went away) cancels the work."""
    queue: asyncio.Queue[E] = asyncio.Queue()
    task = asyncio.ensure_future(work(queue.put))
    try:
        while not task.done() or not queue.empty():
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                yield getter.result()
            else:
                getter.cancel()
        yield Done(task.result())
    finally:
        if not task.done():
            task.cancel()
