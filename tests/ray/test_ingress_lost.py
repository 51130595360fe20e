"""The Ingress replica serving a request dies under it (``ray.kill``, what a crashed process looks like to
Ray Serve) while the request's body is still arriving: nothing is lost. Ray Serve 2.60's proxy keeps the body
it has forwarded and replays the request on the replica Serve starts in its place, so the client that finishes
its body gets the answer (200, its own request id), never a bare 500, a hang or a 408. The contract's 503 for
a replica lost while answering is the proxy callback's (serve_app/wire/proxy_errors.py, tests/wire)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import API_KEY, make_config
from tests.support.net import free_port, wait_healthy

pytestmark = [pytest.mark.ray, pytest.mark.slow]

QUESTION = "Berapa anggaran pendidikan Aceh tahun 2023?"


def _kill_ingress() -> str:
    import ray

    prefix = "SERVE_REPLICA::aceh-rag#Ingress#"
    actors = ray.util.list_named_actors(all_namespaces=True)
    names: list[str] = [a["name"] for a in actors if a["name"].startswith(prefix)]
    assert len(names) == 1, names
    ray.kill(ray.get_actor(names[0], namespace="serve"), no_restart=True)
    return names[0]


def _wait_for_a_new_ingress(killed: str, timeout_s: float = 120.0) -> None:
    """Until Serve has started a replica in place of the killed one (the replay goes there)."""
    import ray

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
        if any(n.startswith("SERVE_REPLICA::aceh-rag#Ingress#") and n != killed for n in names):
            return
        time.sleep(0.5)
    raise AssertionError("Serve started no replica in place of the killed Ingress")


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed without a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    while len(body) < int(headers.get("content-length", "0")):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(status_line.split()[1]), headers, body


def test_a_request_whose_ingress_replica_dies_mid_body_is_replayed_and_answered(
    demo_index: Path, tmp_path: Path
) -> None:
    import ray
    from ray import serve

    from serve_app.runtime.serve_runner import start_serve

    port = free_port()
    cfg = make_config(tmp_path, demo_index)
    one = cfg.serve.deployment("Ingress").model_copy(update={"num_replicas": 1})
    serve_cfg = cfg.serve.model_copy(update={"deployments": {**cfg.serve.deployments, "Ingress": one}})
    # The body deadline far beyond the kill: no replica may answer 408 while the test waits for the
    # replacement, however long listing and killing actors takes on a loaded machine (the default is 10 s).
    limits = cfg.limits.model_copy(update={"body_read_deadline_s": 300.0})
    cfg = cfg.model_copy(update={"serve": serve_cfg, "port": port, "limits": limits})
    base = f"http://127.0.0.1:{port}"
    try:
        start_serve(cfg, num_cpus=2)
        wait_healthy(base, timeout_s=120)
        body = json.dumps({"query": QUESTION}).encode()
        head = (
            f"POST /query/v2 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-API-Key: {API_KEY}\r\n"
            f"X-Request-ID: lost-ingress-1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", port), timeout=90) as sock:
            # Half the body: the proxy hands the request to the Ingress replica, which waits for the rest.
            sock.sendall(head + body[:8])
            time.sleep(3.0)
            killed = _kill_ingress()
            _wait_for_a_new_ingress(killed)
            sock.sendall(body[8:])
            status, headers, text = _read_response(sock)
        assert status == 200, (status, text[:300])
        assert json.loads(text)["citations"] and headers["x-request-id"] == "lost-ingress-1"
        # Serve replaces the replica; the next request is answered.
        deadline = time.monotonic() + 120
        while True:
            r = httpx.post(f"{base}/query/v2", json={"query": QUESTION}, headers={"X-API-Key": API_KEY},
                           timeout=60, trust_env=False)
            if r.status_code == 200 or time.monotonic() > deadline:
                break
            assert r.status_code == 503 and r.json()["error"] == "not_ready", r.text[:300]
            time.sleep(1.0)
        assert r.status_code == 200
    finally:
        serve.shutdown()
        ray.shutdown()
