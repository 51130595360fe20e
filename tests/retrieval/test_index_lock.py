"""One ingest at a time per index; recover() leaves a live ingest's folders alone (issue 35)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from models.embeddings import HashingEncoder
from retrieval.index_lock import IndexBusyError, holder_alive, index_lock, lock_path
from retrieval.ingest import ingest
from retrieval.store import recover
from tests.support.lock_holder import lock_held_elsewhere


def test_a_second_ingest_refuses_at_once_and_changes_nothing(
    tmp_path: Path, corpus: Path, index: Path, encoder: HashingEncoder
) -> None:
    manifest = (index / "manifest.json").read_text()
    (corpus / "baru.md").write_text("# Baru\n\nDokumen baru tentang retribusi.\n")
    with lock_held_elsewhere(index, tmp_path / "released"):
        assert holder_alive(index)
        with pytest.raises(IndexBusyError, match="another ingest is writing the index") as busy:
            ingest([corpus], index, encoder=encoder, progress=False)
        assert "\n" not in str(busy.value) and "--wait" in str(busy.value)
        assert (index / "manifest.json").read_text() == manifest
    assert not holder_alive(index)
    assert ingest([corpus], index, encoder=encoder, progress=False).added == ["baru.md"]


def test_wait_queues_behind_the_running_ingest(tmp_path: Path, index: Path) -> None:
    marker = tmp_path / "released"
    with lock_held_elsewhere(index, marker) as release:
        release.set()
        with index_lock(index, wait=True):
            assert marker.exists(), "the waiter got the lock only after the holder let go"


def test_recover_leaves_a_live_ingests_folders_alone(tmp_path: Path, index: Path) -> None:
    work = index.parent / f".{index.name}.tmp-live0001"
    work.mkdir()
    (work / "chunks.jsonl").write_text("{}\n")
    with lock_held_elsewhere(index, tmp_path / "released"):
        recover(index)
        assert (work / "chunks.jsonl").is_file(), "a running ingest's temporary folder was deleted"
        # Between its two renames the index is briefly absent; recover must not put the old one back.
        old = index.parent / f".{index.name}.old-live0001"
        index.rename(old)
        recover(index)
        assert old.is_dir() and not index.exists()
        old.rename(index)
    recover(index)  # the holder is gone: what it left is a crashed run's and is removed
    assert not work.exists() and index.is_dir()


def test_the_holder_itself_recovers_what_a_crashed_run_left(index: Path, encoder: HashingEncoder) -> None:
    stale = index.parent / f".{index.name}.tmp-crashed1"
    stale.mkdir()
    with index_lock(index):
        assert not holder_alive(index)  # this process's own hold
        recover(index)
    assert not stale.exists()


def test_one_process_cannot_run_two_ingests_of_one_index(index: Path) -> None:
    """flock does not stop a second hold through another descriptor of the same process: the registry does."""
    with index_lock(index):
        with pytest.raises(IndexBusyError):
            with index_lock(index):
                pass
        errors: list[BaseException] = []

        def other_thread() -> None:
            try:
                with index_lock(index):
                    pass
            except IndexBusyError as exc:
                errors.append(exc)

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert len(errors) == 1
    with index_lock(index):  # released: free again
        pass
    assert lock_path(index).parent == index.parent, "the lock outlives the index folder's swaps"
