"""Scale-out on two Ray nodes of this machine: a head and a second ``ray start --address`` node with a
custom resource of its own, the graph deployed from ``serve_app.app.build_app`` with one Ingress replica
(every role colocated, as in configs/default.yaml) pinned to each node by a custom resource both nodes offer
once. Concurrent requests must be answered by replicas on both nodes (``X-Served-By-Node``), ``/metrics``
must count both, and after the second node is stopped (only its processes) the service must keep answering."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from serve_app.wire.tracing import SERVED_BY_HEADER
from tests.conftest import API_KEY, make_config
from tests.support.net import free_port, wait_healthy
from tests.support.ray_nodes import RayNode, start_node

pytestmark = [pytest.mark.ray, pytest.mark.slow]

SLOT = "aceh_ingress_slot"  # each node offers one: one Ingress replica per node
QUESTION = {"query": "Berapa anggaran pendidikan Aceh tahun 2023?"}


def _node_env() -> dict[str, str]:
    from serve_app.runtime.ray_bind import SINGLE_NODE_VAR
    from serve_app.runtime.serve_runner import RAY_ENV

    return {
        **os.environ,
        **RAY_ENV,
        # Both nodes listen on 127.0.0.1 only. Explicit, because Ray turns token auth on by itself when a
        # token file exists in ~/.ray, and the two `ray start` processes must agree.
        "RAY_AUTH_MODE": "disabled",
        # A loaded 2-core machine starts each node's agents slowly; Ray's defaults give up after 30 s.
        "RAY_agent_register_timeout_ms": "180000",
        # Two nodes are a cluster: the single-node switch that an earlier local start left in this
        # process's environment (serve_app/runtime/ray_bind.py) would make `ray start` refuse the second.
        SINGLE_NODE_VAR: "1",
    }


@pytest.fixture(scope="module")
def cluster(demo_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import ray
    from ray import serve

    from serve_app.app import build_app

    env = _node_env()
    nodes: list[RayNode] = []
    try:
        head = start_node(num_cpus=1, resources={SLOT: 1}, env=env)
        nodes.append(head)
        second = start_node(num_cpus=1, resources={SLOT: 1, "node2": 1}, env=env, head_address=head.address)
        nodes.append(second)
        ray.init(address=head.address, log_to_driver=False)
        by_resource = {n["NodeID"]: n["Resources"] for n in ray.nodes() if n["Alive"]}
        node2_id = next(i for i, res in by_resource.items() if "node2" in res)
        head_id = next(i for i in by_resource if i != node2_id)

        port = free_port()
        cfg = make_config(tmp_path_factory.mktemp("two-nodes"), demo_index)
        # One request at a time per replica: Serve's proxy prefers the replica on its own node while that one
        # has room, so concurrent requests overflow to the second node (as load does on a real cluster).
        ingress = cfg.serve.deployment("Ingress").model_copy(
            update={"num_replicas": 2, "num_cpus": 0.2, "resources": {SLOT: 1}, "max_ongoing_requests": 1}
        )
        deployments = {**cfg.serve.deployments, "Ingress": ingress}
        serve_cfg = cfg.serve.model_copy(update={"deployments": deployments})
        cfg = cfg.model_copy(update={"serve": serve_cfg, "port": port})
        # One proxy: both nodes share this machine's ports (on a cluster, EveryNode puts one on each node).
        serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": port})
        serve.run(build_app(cfg), name="aceh-rag", route_prefix="/", blocking=False)
        base = f"http://127.0.0.1:{port}"
        wait_healthy(base, timeout_s=300)
        yield {"base": base, "head": head_id, "node2": node2_id, "second": second}
    finally:
        try:
            if ray.is_initialized():
                serve.shutdown()
        finally:
            ray.shutdown()
            for node in reversed(nodes):  # the worker node first, then the head (GCS last)
                node.remove()


def _ask(client: httpx.Client, base: str) -> httpx.Response:
    return client.post(base + "/query/v2", json=QUESTION, headers={"X-API-Key": API_KEY})


def _samples(metrics: str, prefix: str) -> dict[str, float]:
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith(prefix)
    }


def test_requests_are_served_on_both_nodes_and_survive_losing_one(cluster: dict[str, Any]) -> None:
    base, head, node2 = cluster["base"], cluster["head"], cluster["node2"]
    with httpx.Client(timeout=120, trust_env=False) as client:
        assert client.get(base + "/healthz").json()["node_id"] in {head, node2}
        # Rounds of three concurrent requests (bounded) until replicas on both nodes have answered.
        served: Counter[str] = Counter()
        with ThreadPoolExecutor(max_workers=3) as pool:
            for _ in range(8):
                for response in pool.map(lambda _: _ask(client, base), range(3)):
                    assert response.status_code == 200, response.text
                    assert response.json()["schema"] == "annotate-v2"
                    served[response.headers[SERVED_BY_HEADER]] += 1
                if len(served) == 2:
                    break
        assert set(served) == {head, node2}, served

        # Both nodes' replicas write into the shared metrics folder of this machine; the scrape sums them.
        nodes = _samples(client.get(base + "/metrics").text, "aceh_node_responses_total{")
        counted = {key.split('node="')[1].split('"')[0]: value for key, value in nodes.items()}
        assert counted.keys() == {head, node2}
        for node_id, answers in served.items():
            assert counted[node_id] >= answers  # plus the health probes and scrapes each replica answered
        routes = _samples(client.get(base + "/metrics").text, "aceh_http_requests_total{")
        assert routes['aceh_http_requests_total{route="/query/v2",status="200"}'] == sum(served.values())

        cluster["second"].stop()
        assert cluster["second"].pids() == []
        # The proxy learns the replica is gone; a request caught in between may fail, then all answer.
        deadline, after = time.monotonic() + 180, list[str]()
        while time.monotonic() < deadline and len(after) < 5:
            try:
                response = _ask(client, base)
            except httpx.HTTPError:
                after.clear()
                continue
            if response.status_code != 200:
                after.clear()
                time.sleep(1)
                continue
            after.append(response.headers[SERVED_BY_HEADER])
        assert after == [head] * 5, after
        assert client.get(base + "/healthz").status_code == 200
