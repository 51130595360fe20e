"""benchmarks.soak's arithmetic (minutes, goals, memory growth) and its replica finder, on real processes
this test starts with the titles Ray gives its replicas."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from benchmarks.loadtest_metrics import Outcome
from benchmarks.soak import Minute, Replica, find_replicas, goals, per_minute, rss_mb


def _ok(ms: float) -> Outcome:
    return Outcome(True, 200, None, ms / 1000)


def test_responses_fall_in_the_minute_they_completed_and_late_ones_in_the_last() -> None:
    done = [(10.0, _ok(100)), (59.9, _ok(300)), (61.0, _ok(200)),
            (70.0, Outcome(False, 503, "503", 0.05)), (125.0, _ok(400))]  # 125 s: in flight at the end
    rows = per_minute(done, 2)
    assert [(r.minute, r.requests) for r in rows] == [(1, 2), (2, 3)]
    assert rows[0].errors == {} and rows[1].errors == {"503": 1}
    assert rows[0].p50_ms == 200.0 and rows[1].p95_ms == pytest.approx(390.0)  # linear, errors left out


def test_goals() -> None:
    rows = [Minute(1, 10, {}, 90.0, 200.0), Minute(2, 10, {}, 100.0, 100.0), Minute(3, 10, {}, 100.0, 119.0)]
    steady = [Replica("Ingress", 1, [500.0, 600.0, 610.0, 650.0])]
    result = goals(rows, steady, baseline_minute=2)
    assert result["errors_met"] and result["p95_last_over_second_minute"] == 1.19 and result["p95_met"]
    assert result["rss_growth"] == {"Ingress:1": round(40 / 610, 4)} and result["rss_met"]

    slower = rows[:2] + [Minute(3, 10, {"timeout": 1}, 100.0, 121.0)]
    leaking = [Replica("Ingress", 1, [500.0, 600.0, 600.0, 661.0])]
    replaced = [Replica("Agent", 2, [300.0, 300.0, 300.0, None])]
    result = goals(slower, leaking + replaced, baseline_minute=2)
    assert not result["errors_met"] and not result["p95_met"] and not result["rss_met"]
    assert result["rss_growth"]["Agent:2"] is None  # gone before the end: no figure, goal missed


@pytest.fixture()
def fake_replicas() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Two processes titled as Ray titles replicas of app ``aceh-rag`` and one of another app."""
    titles = ["ray::ServeReplica:aceh-rag:Ingress.handle_request_with_rejection",
              "ray::SERVE_REPLICA::aceh-rag#Guard#x1:ServeReplica:aceh-rag:Guard.__init__",
              "ray::ServeReplica:other-app:Ingress"]
    # argv[0] is what Ray rewrites into the title; `sleep` keeps it as given
    procs = [subprocess.Popen([title, "60"], executable=shutil.which("sleep")) for title in titles]
    time.sleep(0.5)
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


def test_finds_the_replicas_of_one_app_under_one_process(
    fake_replicas: list[subprocess.Popen[bytes]],
) -> None:
    found = find_replicas("aceh-rag", os.getpid())
    assert found == {fake_replicas[0].pid: "Ingress", fake_replicas[1].pid: "Guard"}
    assert (rss_mb(fake_replicas[0].pid) or 0) > 1
