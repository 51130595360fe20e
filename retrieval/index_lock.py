"""An exclusive lock on an index directory for the whole of one ingest.

Two ingests of one index each read the old index, build a new one and swap it in: the second swap drops the
first one's update, and :func:`retrieval.store.recover` run by one could delete the other's temporary
directory. The lock is an ``flock`` on ``.NAME.lock`` beside the index (not inside it: the index directory
itself is replaced by rename, the lock file must outlive every swap). The kernel drops an ``flock`` when its
holder exits, however it exits, so a crashed ingest never leaves a stale lock behind.

``recover`` asks :func:`holder_alive` before touching the temporary or previous directories: while another
process holds the lock, it leaves them alone. This process's own holds are remembered so that the ingest
holding the lock may still recover what a crashed earlier run left.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_held: set[Path] = set()  # index directories this process holds the lock of
_held_guard = threading.Lock()


class IndexBusyError(Exception):
    """Another ingest holds the index; the message is one sentence safe to show."""


def lock_path(index_dir: Path) -> Path:
    index_dir = Path(index_dir)
    return index_dir.parent / f".{index_dir.name}.lock"


def _key(index_dir: Path) -> Path:
    return Path(os.path.abspath(index_dir))


@contextmanager
def index_lock(index_dir: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold the index's lock for the block. ``wait=False`` raises :class:`IndexBusyError` at once when
    another ingest holds it; ``wait=True`` blocks until that ingest ends."""
    index_dir = Path(index_dir)
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    key = _key(index_dir)
    with _held_guard:
        if key in _held:  # a second ingest in this process: flock would not stop it, this does
            raise IndexBusyError(_busy_message(index_dir))
        _held.add(key)
    try:
        fd = os.open(lock_path(index_dir), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                raise IndexBusyError(_busy_message(index_dir)) from None
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    finally:
        with _held_guard:
            _held.discard(key)


def _busy_message(index_dir: Path) -> str:
    return (
        f"another ingest is writing the index at {index_dir}; wait for it to finish, or run "
        "`aceh-rag ingest --wait` to queue behind it"
    )


def holder_alive(index_dir: Path) -> bool:
    """Whether an ingest in another process holds the index's lock now (this process's own: False)."""
    if _key(index_dir) in _held:
        return False
    try:
        fd = os.open(lock_path(index_dir), os.O_RDONLY)
    except FileNotFoundError:
        return False  # no ingest has run here since locking began: nothing can be holding it
    except OSError:
        return True  # cannot tell: touching nothing is the safe answer
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
