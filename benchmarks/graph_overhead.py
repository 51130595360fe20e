"""Graph overhead: the same request mix through the in-process pipeline and through the Ray Serve graph
(over HTTP), in one run, at 1, 4 and 16 concurrent clients (closed loop).

    .venv/bin/python -m benchmarks.graph_overhead [--requests N] [--quick]

Prints a table and writes benchmarks/results/graph_overhead.json. The goal (issue 2): graph p50 at most
15% above the in-process p50 at 16 clients.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "graph_overhead.json"
QUESTIONS = REPO / "tests" / "data" / "demo_questions.jsonl"
API_KEY = "bench-key"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def questions() -> list[str]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


async def closed_loop(call: Any, qs: list[str], clients: int, total: int) -> dict[str, Any]:
    latencies: list[float] = []
    failures = 0
    counter = iter(range(total))

    async def client() -> None:
        nonlocal failures
        for i in counter:
            started = time.perf_counter()
            try:
                await call(qs[i % len(qs)])
            except Exception:  # noqa: BLE001 - counted, reported
                failures += 1
                continue
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - started
    return {
        "clients": clients,
        "requests": total,
        "failures": failures,
        "wall_s": round(wall, 3),
        "throughput_rps": round(len(latencies) / wall, 2),
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 2),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=96, help="requests per concurrency level and mode")
    parser.add_argument("--quick", action="store_true", help="32 requests per level")
    args = parser.parse_args(argv)
    total = 32 if args.quick else args.requests
    os.environ.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
    )

    import httpx
    import ray
    from ray import serve

    from serve_app import factory
    from serve_app.auth import Principal
    from serve_app.config import load_config
    from serve_app.schemas import QueryV2Request
    from serve_app.serve_runner import start_serve

    tmp = Path(tempfile.mkdtemp(prefix="aceh-bench-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(tmp / "index"),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'aceh.db'}",
        "ACEH_PORT": str(port),
    }
    cfg = load_config(str(REPO / "configs" / "default.yaml"), env=env)
    factory.ingest_paths(cfg, [REPO / "configs" / "demo_corpus"], tmp / "index", progress=False)
    qs = questions()
    levels = (1, 4, 16)
    rows: list[dict[str, Any]] = []

    pipeline = factory.build_inprocess(cfg)

    async def local_call(q: str) -> None:
        await pipeline.answer(QueryV2Request(query=q), Principal.anonymous(), route="v2")

    async def run_local() -> None:
        await closed_loop(local_call, qs, 4, 8)  # warm-up
        for n in levels:
            rows.append({"mode": "in-process", **await closed_loop(local_call, qs, n, total)})

    asyncio.run(run_local())

    try:
        start_serve(cfg, num_cpus=2)
        base = f"http://127.0.0.1:{port}"

        async def run_graph() -> None:
            limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
            async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:

                async def call(q: str) -> None:
                    r = await client.post("/query/v2", json={"query": q}, headers={"X-API-Key": API_KEY})
                    r.raise_for_status()

                await closed_loop(call, qs, 4, 8)
                for n in levels:
                    rows.append({"mode": "ray-serve-graph", **await closed_loop(call, qs, n, total)})

        asyncio.run(run_graph())
    finally:
        serve.shutdown()
        ray.shutdown()

    by = {(r["mode"], r["clients"]): r for r in rows}
    ratios = {
        n: round(by[("ray-serve-graph", n)]["p50_ms"] / by[("in-process", n)]["p50_ms"], 3) for n in levels
    }
    print(f"{'mode':<16} {'clients':>7} {'p50 ms':>9} {'p95 ms':>9} {'req/s':>8} {'fail':>5}")
    for r in rows:
        print(
            f"{r['mode']:<16} {r['clients']:>7} {r['p50_ms']:>9} {r['p95_ms']:>9} {r['throughput_rps']:>8} "
            f"{r['failures']:>5}"
        )
    print("graph p50 / in-process p50: " + ", ".join(f"{n} clients {v}x" for n, v in ratios.items()))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "graph_overhead",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "command": "python -m benchmarks.graph_overhead " + " ".join(argv or sys.argv[1:]),
                "machine": {
                    "platform": platform.platform(),
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                },
                "corpus": "configs/demo_corpus",
                "engines": "embedded (CPU)",
                "requests_per_level": total,
                "rows": rows,
                "p50_ratio_graph_over_inprocess": ratios,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
