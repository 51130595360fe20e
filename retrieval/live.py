"""A served index that follows ``ingest`` without a restart, one whole version per request.

``ingest`` swaps a finished index directory in by renaming it (:func:`retrieval.store.replace_atomically`),
so a new ``manifest.json`` (a new inode) means a new version. :class:`LiveRetriever` stats that file at most
once per ``check_interval_s`` when a request asks for the current retriever; on a change it loads the new
version in a background thread (requests keep the old one meanwhile) and then swaps one reference. A request
holds on to the retriever it got first (its snapshot): the old version's memory-mapped files stay readable
after ingest deleted their directory, so a request that started before a swap ends on its own version.

:class:`RequestPins` keeps those snapshots for callers that reach the retriever through several separate
calls per request (a Retriever deployment), keyed by a request key, bounded in count and age."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from retrieval.retriever import Retriever
from retrieval.store import MANIFEST

log = logging.getLogger(__name__)


def version_of(retriever: Retriever) -> str:
    """The index version: the manifest's fingerprint (sources, contents, chunker, encoder), shortened."""
    return retriever.fingerprint[:16]


def _stamp(index_dir: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(index_dir / MANIFEST)
    except OSError:
        return None  # mid-swap or removed: keep serving what is loaded
    return st.st_ino, st.st_mtime_ns, st.st_size


class LiveRetriever:
    def __init__(
        self, index_dir: Path, load: Callable[[], Retriever], *, check_interval_s: float = 1.0
    ) -> None:
        self.index_dir = Path(index_dir)
        self._load = load
        self.check_interval_s = check_interval_s
        self._stamp = _stamp(self.index_dir)
        self._current = load()
        self._next_check = time.monotonic() + check_interval_s
        self._lock = threading.Lock()
        self._loading: threading.Thread | None = None
        self.swaps = 0
        self.last_error: str | None = None

    @property
    def version(self) -> str:
        return version_of(self._current)

    def current(self) -> Retriever:
        """The newest loaded version; starts loading a newer one in the background when the index changed."""
        now = time.monotonic()
        if now >= self._next_check:
            self._next_check = now + self.check_interval_s
            stamp = _stamp(self.index_dir)
            if stamp is not None and stamp != self._stamp:
                self._start_reload(stamp)
        return self._current

    def _start_reload(self, stamp: tuple[int, int, int]) -> None:
        with self._lock:
            if self._loading is not None and self._loading.is_alive():
                return
            self._loading = threading.Thread(target=self._reload, args=(stamp,), daemon=True)
            self._loading.start()

    def _reload(self, stamp: tuple[int, int, int]) -> None:
        try:
            fresh = self._load()
        except Exception as exc:  # noqa: BLE001 - a broken new version must not stop the old one serving
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.error("index at %s changed but could not be loaded; serving %s: %s", self.index_dir,
                      self.version, self.last_error)
            self._stamp = stamp  # do not retry the same files on every request
            return
        if _stamp(self.index_dir) != stamp:
            return  # swapped again while loading: the next check loads the newer one
        old = self.version
        self._current, self._stamp, self.last_error = fresh, stamp, None
        self.swaps += 1
        log.info("index at %s reloaded: version %s replaces %s", self.index_dir, version_of(fresh), old)

    def wait_idle(self, timeout_s: float = 60.0) -> None:
        """Block until a reload in progress has finished (tests, benchmarks)."""
        loading = self._loading
        if loading is not None:
            loading.join(timeout_s)


class RequestPins:
    """Snapshot per request key: the first call of a request pins the live retriever's current version."""

    def __init__(self, live: LiveRetriever, *, max_pins: int = 4096, max_age_s: float = 300.0) -> None:
        self.live = live
        self.max_pins = max_pins
        self.max_age_s = max_age_s
        self._pins: OrderedDict[str, tuple[float, Retriever]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str | None) -> Retriever:
        if not key:
            return self.live.current()
        now = time.monotonic()
        with self._lock:
            pinned = self._pins.get(key)
            if pinned is not None and now - pinned[0] <= self.max_age_s:
                return pinned[1]
            retriever = self.live.current()
            self._pins[key] = (now, retriever)
            self._pins.move_to_end(key)
            while len(self._pins) > self.max_pins or (
                self._pins and now - next(iter(self._pins.values()))[0] > self.max_age_s
            ):
                self._pins.popitem(last=False)
            return retriever
