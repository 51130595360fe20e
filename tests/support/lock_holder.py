"""Another process that holds an index's ingest lock until told to let go (tests of retrieval/index_lock.py).

Ordering is by events and a marker file, never by sleeping: ``held`` is set once the lock is taken; the
holder writes ``released_marker`` just before it lets go, so a waiter that finds the marker when it gets
the lock proves it waited."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.synchronize import Event
from pathlib import Path

from retrieval.index_lock import index_lock

TIMEOUT_S = 60.0  # only bounds a broken test; nothing waits this long when the code works


def _hold(index_dir: str, held: Event, release: Event, released_marker: str) -> None:
    with index_lock(Path(index_dir)):
        held.set()
        release.wait(TIMEOUT_S)
        Path(released_marker).write_text("released")


@contextmanager
def lock_held_elsewhere(index_dir: Path, released_marker: Path) -> Iterator[Event]:
    """Run a process holding ``index_dir``'s lock; yields the event that makes it let go."""
    ctx = multiprocessing.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold, args=(str(index_dir), held, release, str(released_marker)))
    proc.start()
    try:
        assert held.wait(TIMEOUT_S), "the holder process never took the lock"
        yield release
    finally:
        release.set()
        proc.join(TIMEOUT_S)
        assert proc.exitcode == 0
