"""Graph overhead: the same request mix through the in-process pipeline and through the Ray Serve graph
(over HTTP), in one run, at 1, 4 and 16 concurrent clients (closed loop).

    .venv/bin/python -m benchmarks.graph_overhead [--requests N] [--rounds R] [--quick] [--layouts config,...]

Each layout is one placement of the graph's roles (``serve.colocate``): ``config`` as configs/default.yaml
says, ``split`` every role its own deployment, ``ingress`` all but the JudgePool inside the Ingress replica,
``single`` every role inside it; ``ingress2`` and ``single2`` as ``ingress`` and ``single`` with two Ingress
replicas, ``single3`` with three.

Modes are interleaved: with the graph of one layout running, each round runs every concurrency level in every
mode back to back (in-process, in-process over HTTP, graph), and the figures are medians over the rounds, so
a slow spell of this shared host falls on all modes alike instead of on whichever ran then. Besides the
in-process pipeline (a direct call), ``in-process:http`` serves the same Starlette routes over it from one
uvicorn process (no Ray) to the same HTTP client: the graph's ratio to it is what Ray Serve adds, the rest of
the ratio to ``in-process`` is HTTP (JSON, the ASGI stack, a client that shares the two cores). Prints a
table and writes benchmarks/results/graph_overhead.json. The goal (issue 2): graph p50 at most 15% above the
in-process p50 at 16 clients, for the default configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO, Figure, Result, command, percentile, write_result
from serve_app.config import ROLES

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
    "single3": (list(ROLES), 3),
}


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


def _serve_inprocess_http(config: str, env: dict[str, str], port: int) -> None:
    """Child process: the Ingress routes over the in-process pipeline, served by uvicorn (no Ray)."""
    import uvicorn

    from serve_app.config import load_config
    from serve_app.runtime import factory

    app = factory.build_inprocess_app(load_config(config, env=env))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _http_caller(client: Any) -> Any:
    async def call(q: str) -> None:
        r = await client.post("/query/v2", json={"query": q}, headers={"X-API-Key": API_KEY})
        r.raise_for_status()

    return call


def figures(details: dict[str, Any]) -> dict[str, Figure]:
    """Headline: the default placement's p50 ratio to the in-process pipeline, at 16 and 1 clients."""
    ratios = details["p50_ratio_graph_over_inprocess"]["graph:config"]
    graph = details.get("median_over_rounds", {}).get("config", {}).get("graph:config", {})
    out: dict[str, Figure] = {"graph / in-process p50, 16 clients": f"{ratios['16']:.2f}x"}
    if "16" in graph:
        out["graph p50"] = f"{graph['16']['p50_ms']:.0f} ms"
    out["1 client"] = f"{ratios['1']:.2f}x"
    return out


def _median(values: list[float]) -> float:
    return round(percentile(values, 0.5), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=96, help="requests per concurrency level and mode")
    parser.add_argument("--quick", action="store_true", help="32 requests per level")
    parser.add_argument("--layouts", default="config", help=f"comma-separated, of {', '.join(LAYOUTS)}")
    parser.add_argument("--haproxy", action="store_true", help="every layout behind HAProxy (serve.haproxy)")
    parser.add_argument("--out", help="results JSON (default benchmarks/results/graph_overhead.json)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every level in every mode")
    parser.add_argument(
        "--no-http-baseline", action="store_true", help="skip the in-process pipeline served by uvicorn"
    )
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
        from serve_app.runtime.serve_runner import ray_env

        os.environ.update(ray_env(AppConfig(serve=ServeConfig(haproxy=True))))

    import httpx
    import ray
    from ray import serve

    from benchmarks.service import free_port, wait_healthy
    from serve_app.config import load_config
    from serve_app.guard.auth import Principal
    from serve_app.runtime import factory, index_setup
    from serve_app.runtime.serve_runner import start_serve
    from serve_app.wire.schemas import QueryV2Request

    tmp = Path(tempfile.mkdtemp(prefix="aceh-bench-"))
    port = free_port()
    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(tmp / "index"),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'aceh.db'}",
        "ACEH_PORT": str(port),
    }
    cfg = load_config(str(REPO / "configs" / "default.yaml"), env=env)
    if args.haproxy:
        cfg = cfg.model_copy(update={"serve": cfg.serve.model_copy(update={"haproxy": True})})
    index_setup.ingest_paths(cfg, [REPO / "configs" / "demo_corpus"], tmp / "index", progress=False)
    qs = questions()
    levels = (1, 4, 16)
    rows: list[dict[str, Any]] = []

    pipeline = factory.build_inprocess(cfg)

    async def local_call(q: str) -> None:
        await pipeline.answer(QueryV2Request(query=q), Principal.anonymous(), route="v2")

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

    async def measure_block(layout: str, http_base: str | None) -> None:
        """Warm every mode, then ``rounds`` rounds; in each round every level runs in every mode back to
        back, so a slow spell of the shared host hits all modes alike."""
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with contextlib.AsyncExitStack() as stack:
            callers = {"in-process": local_call}
            if http_base is not None:
                http = await stack.enter_async_context(
                    httpx.AsyncClient(base_url=http_base, timeout=120, limits=limits, trust_env=False)
                )
                callers["in-process:http"] = _http_caller(http)
            graph = await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}", timeout=120, limits=limits, trust_env=False
                )
            )
            callers[f"graph:{layout}"] = _http_caller(graph)
            for call in callers.values():
                await closed_loop(call, qs, 4, WARMUP * len(qs))
            for round_ in range(args.rounds):
                for n in levels:
                    for mode, call in callers.items():
                        result = await closed_loop(call, qs, n, total)
                        rows.append({"block": layout, "round": round_, "mode": mode, **result})

    server = None
    http_base = None
    if not args.no_http_baseline:
        import multiprocessing

        http_port = free_port()
        server = multiprocessing.get_context("spawn").Process(
            target=_serve_inprocess_http,
            args=(str(REPO / "configs" / "default.yaml"), env, http_port),
            daemon=True,
        )
        server.start()
        http_base = f"http://127.0.0.1:{http_port}"
        wait_healthy(http_base, timeout_s=120, alive=server.is_alive)
    try:
        for layout in layouts:
            start_serve(placed(layout), num_cpus=2)
            asyncio.run(measure_block(layout, http_base))
            serve.delete("aceh-rag")  # the next layout starts on the same Ray and Serve
    finally:
        serve.shutdown()
        ray.shutdown()
        if server is not None:
            server.terminate()
            server.join(30)

    # Per block and mode: the median over rounds of each level's p50 (and p95, throughput).
    summary: dict[str, dict[str, dict[int, dict[str, float]]]] = {}
    for layout in layouts:
        block = [r for r in rows if r["block"] == layout]
        for mode in dict.fromkeys(r["mode"] for r in block):
            summary.setdefault(layout, {})[mode] = {
                n: {
                    key: _median([r[key] for r in block if r["mode"] == mode and r["clients"] == n])
                    for key in ("p50_ms", "p95_ms", "throughput_rps")
                }
                for n in levels
            }

    def ratios_over(baseline: str) -> dict[str, dict[int, float]]:
        return {
            f"graph:{layout}": {
                n: round(modes[f"graph:{layout}"][n]["p50_ms"] / modes[baseline][n]["p50_ms"], 3)
                for n in levels
            }
            for layout, modes in summary.items()
            if baseline in modes
        }

    ratios = ratios_over("in-process")
    http_ratios = ratios_over("in-process:http")
    print(f"median over {args.rounds} rounds")
    print(f"{'block':<10} {'mode':<18} {'clients':>7} {'p50 ms':>9} {'p95 ms':>9} {'req/s':>8}")
    for layout, modes in summary.items():
        for mode, by_level in modes.items():
            for n, m in by_level.items():
                cells = f"{m['p50_ms']:>9} {m['p95_ms']:>9} {m['throughput_rps']:>8}"
                print(f"{layout:<10} {mode:<18} {n:>7} {cells}")
    failures = sum(r["failures"] for r in rows)
    print(f"failures: {failures}")
    for baseline, table in (("in-process", ratios), ("in-process:http", http_ratios)):
        for mode, ratio_by_level in table.items():
            print(
                f"{mode} p50 / {baseline} p50: "
                + ", ".join(f"{n} clients {v}x" for n, v in ratio_by_level.items())
            )
    details = {
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
        "rounds": args.rounds,
        "failures": failures,
        "median_over_rounds": summary,
        "rows": rows,
        "p50_ratio_graph_over_inprocess": ratios,
        "p50_ratio_graph_over_inprocess_http": http_ratios,
    }
    result = Result(
        benchmark="graph_overhead",
        figures=figures(json.loads(json.dumps(details))),
        data="demo corpus, its 47 questions, embedded engines",
        in_sample=False,
        command=command("graph_overhead", argv),
        details=details,
    )
    print(f"written to {write_result(result, args.out, quick=args.quick)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
