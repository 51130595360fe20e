"""``aceh-rag serve`` as its own process, the way `make serve` runs it: answers over HTTP, and stops cleanly
on SIGTERM (what a service manager sends) and on Ctrl-C (SIGINT to the process, or to its whole process
group as a terminal sends it).

Behind Ray's proxy (the default) and behind HAProxy (``serve.haproxy: true``): Ray reads its proxy switches
once per process, so that mode is only testable in a fresh one. ``make test`` installs HAProxy (``make
haproxy``); without it the HAProxy case FAILS with that command, it never skips: CI must run it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import API_KEY, REPO
from tests.support.net import free_port, wait_healthy

pytestmark = [pytest.mark.ray, pytest.mark.slow]



@pytest.mark.parametrize(
    ("haproxy", "stop_signal", "to_group"),
    [
        pytest.param(False, signal.SIGTERM, False, id="ray-proxy-sigterm"),
        pytest.param(False, signal.SIGINT, True, id="ray-proxy-terminal-ctrl-c"),
        pytest.param(True, signal.SIGINT, False, id="haproxy-ctrl-c"),
    ],
)
def test_serve_answers_and_stops_cleanly(
    demo_index: Path, tmp_path: Path, haproxy: bool, stop_signal: signal.Signals, to_group: bool
) -> None:
    if haproxy and shutil.which("haproxy") is None and not os.environ.get("RAY_SERVE_HAPROXY_BINARY_PATH"):
        pytest.fail("HAProxy is not installed: run `make haproxy` (as root)", pytrace=False)
    port = free_port()
    config = tmp_path / "serve.yaml"
    text = (REPO / "configs" / "default.yaml").read_text(encoding="utf-8")
    if haproxy:
        text = text.replace("serve:\n", "serve:\n  haproxy: true\n", 1)
    config.write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "ACEH_CONFIG": str(config),
        "ACEH_PORT": str(port),
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(demo_index),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp_path / 'aceh.db'}",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "serve_app.runtime.cli", "serve"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, timeout_s=180, alive=lambda: proc.poll() is None)
        r = httpx.post(
            f"{base}/query/v2",
            json={"query": "Berapa anggaran pendidikan Aceh tahun 2023?"},
            headers={"X-API-Key": API_KEY},
            timeout=60,
        )
        assert r.status_code == 200 and r.json()["schema"] == "annotate-v2"
        assert httpx.post(f"{base}/query/v2", json={"query": "x"}, timeout=30).status_code == 401
    finally:
        if to_group:
            os.killpg(proc.pid, stop_signal)  # a terminal's Ctrl-C: every process of the foreground group
        else:
            proc.send_signal(stop_signal)  # to the `aceh-rag serve` process only, as a service manager does
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.returncode == 0, err[-3000:]
    assert "aceh-rag: shutting down" in err and "SIGTERM received" not in err
    assert "failed to shut down" not in err  # the controller was not killed under the driver
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{base}/healthz", timeout=5)
