"""Graph overhead: the same request mix through the in-process pipeline and through the Ray Serve graph
(over HTTP), in one run, at 1, 4 and 16 concurrent clients (closed loop).

    .venv/bin/python -m benchmarks.graph_overhead [--requests N] [--quick] [--layouts config,split,...]

Each layout is one placement of the graph's roles (``serve.colocate``): ``config`` as configs/default.yaml
says, ``split`` every role its own deployment, ``ingress`` all but the JudgePool inside the Ingress replica,
``single`` every role inside it; ``ingress2`` and ``single2`` as ``ingress`` and ``single`` with two Ingress
replicas. They run one after another in the same process, so their ratios are side by side. Prints a table
and writes benchmarks/results/graph_overhead.json. The goal (issue 2): graph p50 at most 15% above the
in-process p50 at 16 clients, for the default configuration.
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

from serve_app.config import ROLES

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "graph_overhead.json"
QUESTIONS = REPO / "tests" / "data" / "demo_questions.jsonl"
API_KEY = "bench-key"
# Warm-up passes over the questions: answers cache passage screens and word bags per process, and with two
# Ingress replicas each must see every question before the measured levels, as the in-process pipeline does.
WARMUP = 3
ALL_BUT_JUDGE = [role for role in ROLES if role != "JudgePool"]
# name -> (roles colocated in the Ingress, Ingress replicas); None: as the config file says.
LAYOUTS: dict[str, tuple[list[str], int] | None] = {
    "config": None,
    "split": ([], 1),
    "ingress": (ALL_BUT_JUDGE, 1),
    "single": (list(ROLES), 1),
    "ingress2": (ALL_BUT_JUDGE, 2),
    "single2": (list(ROLES), 2),
}


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
    parser.add_argument("--layouts", default="config", help=f"comma-separated, of {', '.join(LAYOUTS)}")
    parser.add_argument("--haproxy", action="store_true", help="every layout behind HAProxy (serve.haproxy)")
    parser.add_argument("--out", default=str(RESULTS), help="results JSON")
    args = parser.parse_args(argv)
    total = 32 if args.quick else args.requests
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    unknown = [name for name in layouts if name not in LAYOUTS]
    if unknown or not layouts:
        parser.error(f"unknown layout {', '.join(unknown)}; expected some of {', '.join(LAYOUTS)}")
    os.environ.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
    )

    if args.haproxy:  # before ray.serve is imported here: its constants read the environment once
        from serve_app.config import AppConfig, ServeConfig
        from serve_app.serve_runner import ray_env

        os.environ.update(ray_env(AppConfig(serve=ServeConfig(haproxy=True))))

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
    if args.haproxy:
        cfg = cfg.model_copy(update={"serve": cfg.serve.model_copy(update={"haproxy": True})})
    factory.ingest_paths(cfg, [REPO / "configs" / "demo_corpus"], tmp / "index", progress=False)
    qs = questions()
    levels = (1, 4, 16)
    rows: list[dict[str, Any]] = []

    pipeline = factory.build_inprocess(cfg)

    async def local_call(q: str) -> None:
        await pipeline.answer(QueryV2Request(query=q), Principal.anonymous(), route="v2")

    async def run_local() -> None:
        await closed_loop(local_call, qs, 4, WARMUP * len(qs))  # warm-up
        for n in levels:
            rows.append({"mode": "in-process", **await closed_loop(local_call, qs, n, total)})

    asyncio.run(run_local())

    def placed(layout: str) -> Any:
        placement = LAYOUTS[layout]
        if placement is None:
            return cfg
        colocate, replicas = placement
        deployments = dict(cfg.serve.deployments)
        deployments["Ingress"] = cfg.serve.deployment("Ingress").model_copy(update={"num_replicas": replicas})
        return cfg.model_copy(
            update={"serve": cfg.serve.model_copy(update={"colocate": colocate, "deployments": deployments})}
        )

    modes = []
    try:
        for layout in layouts:
            mode = f"graph:{layout}"
            modes.append(mode)
            start_serve(placed(layout), num_cpus=2)
            base = f"http://127.0.0.1:{port}"

            async def run_graph(mode: str = mode, base: str = base) -> None:
                limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
                async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:

                    async def call(q: str) -> None:
                        r = await client.post("/query/v2", json={"query": q}, headers={"X-API-Key": API_KEY})
                        r.raise_for_status()

                    await closed_loop(call, qs, 4, WARMUP * len(qs))
                    for n in levels:
                        rows.append({"mode": mode, **await closed_loop(call, qs, n, total)})

            asyncio.run(run_graph())
            serve.delete("aceh-rag")  # the next layout starts on the same Ray and Serve
    finally:
        serve.shutdown()
        ray.shutdown()

    by = {(r["mode"], r["clients"]): r for r in rows}
    ratios = {
        mode: {n: round(by[(mode, n)]["p50_ms"] / by[("in-process", n)]["p50_ms"], 3) for n in levels}
        for mode in modes
    }
    print(f"{'mode':<16} {'clients':>7} {'p50 ms':>9} {'p95 ms':>9} {'req/s':>8} {'fail':>5}")
    for r in rows:
        print(
            f"{r['mode']:<16} {r['clients']:>7} {r['p50_ms']:>9} {r['p95_ms']:>9} {r['throughput_rps']:>8} "
            f"{r['failures']:>5}"
        )
    for mode, by_level in ratios.items():
        print(f"{mode} p50 / in-process p50: " + ", ".join(f"{n} clients {v}x" for n, v in by_level.items()))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
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
                "proxy": "HAProxy (serve.haproxy)" if args.haproxy else "Ray Serve's proxy",
                "layouts": {
                    layout: {
                        "colocate": placed(layout).serve.colocate,
                        "ingress_replicas": placed(layout).serve.deployment("Ingress").num_replicas,
                    }
                    for layout in layouts
                },
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
