"""Issue #7's measurement: /query/v2 latency and throughput, and time to the first answer.delta on
/query/v2/stream, at 1, 8 and 32 concurrent clients (closed loop), embedded engines, over the real Ray
Serve graph and the Indonesian statutes in ../shared/data/indo_legal_corpus/.

    .venv/bin/python -m benchmarks.query_v2 [--subset full|demo] [--index DIR] [--requests N] [--quick]

``--subset demo`` indexes only the 53 statutes of demo_subset.txt; the default indexes all 1,633 (long).
The index is built once into ``.aceh/bench-index-<subset>`` and reused when present (``--index DIR``
uses a prebuilt one instead). Goals: p50 <= 250 ms and p95 <= 600 ms at 8 clients, no error at 32.
Prints a table and writes benchmarks/results/query_v2.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO, Figure, Result, command, shared_data, write_result
from benchmarks.loadtest import load_questions, run_closed_loop
from benchmarks.service import free_port, wait_healthy

SHARED_DATA = shared_data()
CORPUS = SHARED_DATA / "indo_legal_corpus"
QUESTIONS = REPO / "benchmarks" / "data" / "legal_questions.jsonl"
ROUTES = ("/query/v2", "/query/v2/stream")
API_KEY = "bench-query-v2"
GOAL_P50_MS, GOAL_P95_MS, GOAL_CLIENTS, ERROR_FREE_CLIENTS = 250.0, 600.0, 8, 32


def subset_files(corpus: Path, subset: str) -> list[str]:
    """Statute paths relative to the corpus folder: demo_subset.txt's list, or every .md under uu/ and pp/."""
    if subset == "demo":
        listing = corpus / "demo_subset.txt"
        rels = [line.strip() for line in listing.read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    elif subset == "full":
        rels = sorted(p.relative_to(corpus).as_posix() for top in ("uu", "pp")
                      for p in (corpus / top).rglob("*.md"))
    else:
        raise ValueError(f"unknown subset {subset!r}; expected full or demo")
    missing = [r for r in rels if not (corpus / r).is_file()]
    if missing:
        raise FileNotFoundError(f"{len(missing)} listed statutes are missing in {corpus}, e.g. {missing[0]}")
    return rels


def stage_corpus(corpus: Path, rels: list[str], stage: Path) -> Path:
    """A folder of symlinks mirroring ``rels``, so the index names each statute by its corpus path
    ("uu/2006/11.md"): ingesting files one by one would name them by file name, and uu/2006/11.md and
    pp/2006/11.md would collide. Links that are no longer listed are removed."""
    wanted = set(rels)
    if stage.is_dir():
        for link in [p for p in stage.rglob("*") if p.is_symlink()]:
            if link.relative_to(stage).as_posix() not in wanted:
                link.unlink()
    for rel in rels:
        link = stage / rel
        target = (corpus / rel).resolve()
        if link.is_symlink() and link.resolve() == target:
            continue
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return stage


def has_index(index_dir: Path) -> bool:
    from retrieval.store import MANIFEST

    return (index_dir / MANIFEST).is_file()


def index_summary(index_dir: Path) -> dict[str, Any]:
    from retrieval.store import MANIFEST

    manifest = json.loads((index_dir / MANIFEST).read_text(encoding="utf-8"))
    return {k: manifest.get(k) for k in ("created_at", "documents", "chunks", "dense_index", "encoder")}


def evaluate_goals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by = {(r["route"], r["extra"]["clients"]): r for r in rows}
    out: dict[str, Any] = {}
    at8 = by.get(("/query/v2", GOAL_CLIENTS))
    for name, key, goal in (("p50", "p50_latency_ms", GOAL_P50_MS), ("p95", "p95_latency_ms", GOAL_P95_MS)):
        value = None if at8 is None else at8[key]
        out[f"{name}_le_{goal:g}ms_at_{GOAL_CLIENTS}"] = None if value is None else value <= goal
    at32 = [r for (route, n), r in by.items() if n == ERROR_FREE_CLIENTS]
    out[f"no_errors_at_{ERROR_FREE_CLIENTS}"] = all(r["failed"] == 0 for r in at32) if at32 else None
    return out


def figures(details: dict[str, Any]) -> dict[str, Figure]:
    """Headline: /query/v2 p50 / p95 at the goal's 8 clients and the failures at the most clients."""
    runs = [r for r in details["runs"] if r["route"] == "/query/v2"]
    out: dict[str, Figure] = {}
    at8 = [r for r in runs if r["extra"]["clients"] == GOAL_CLIENTS]
    if at8:
        out[f"p50 / p95 at {GOAL_CLIENTS} clients"] = (
            f"{at8[0]['p50_latency_ms']:.0f} / {at8[0]['p95_latency_ms']:.0f} ms")
    if runs:
        top = max(runs, key=lambda r: int(r["extra"]["clients"]))
        out[f"failed at {top['extra']['clients']} clients"] = top["failed"]
        out[f"req/s at {top['extra']['clients']}"] = round(top["throughput_rps"], 1)
    return out


def format_rows(rows: list[dict[str, Any]]) -> str:
    def v(x: float | None) -> str:
        return "-" if x is None else f"{x:.0f}"

    head = (f"{'route':<17} {'clients':>7} {'sent':>5} {'fail':>5} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} "
            f"{'req/s':>7} {'1st-delta p50/p95':>18}  full/partial/none  fallback  errors")
    lines = [head]
    for r in rows:
        mix = "/".join(str(r["verification"].get(k, 0)) for k in ("full", "partial", "none"))
        delta = f"{v(r['p50_first_delta_ms'])}/{v(r['p95_first_delta_ms'])}" if r["streams"] else "-"
        errs = ", ".join(f"{k}:{n}" for k, n in r["errors"].items()) or "-"
        if r["streams"] and not r["streams_all_terminal_ok"]:
            errs += " (a stream without exactly one terminal frame)"
        lines.append(f"{r['route']:<17} {r['extra']['clients']:>7} {r['sent']:>5} {r['failed']:>5} "
                     f"{v(r['p50_latency_ms']):>7} {v(r['p95_latency_ms']):>7} {v(r['p99_latency_ms']):>7} "
                     f"{r['throughput_rps']:>7.2f} {delta:>18}  {mix:<17}  {r['fallback_used']:>8}  {errs}")
    return "\n".join(lines)


async def measure(base: str, questions: list[str], levels: list[int], requests: int) -> list[dict[str, Any]]:
    for route in ROUTES:  # warm-up: load what loads lazily, fill caches; not counted
        await run_closed_loop(base, API_KEY, questions, 4, 8, route, timeout=120)
    rows = []
    for clients in levels:
        for route in ROUTES:
            n = max(requests, 2 * clients)
            row = await run_closed_loop(base, API_KEY, questions, clients, n, route, timeout=60)
            print(f"  {route} at {clients} clients: p50 {row['p50_latency_ms']} ms, "
                  f"{row['failed']} failed", file=sys.stderr, flush=True)
            rows.append(row)
    return rows


def prepare_index(cfg_for_ingest: Any, subset: str, index_arg: str | None) -> tuple[Path, dict[str, Any]]:
    from serve_app.runtime import index_setup

    if index_arg:
        index_dir = Path(index_arg).resolve()
        if not has_index(index_dir):
            raise SystemExit(f"query_v2: no index at {index_dir} (no manifest.json)")
        return index_dir, {"index": str(index_dir), "built": False, **index_summary(index_dir)}
    index_dir = REPO / ".aceh" / f"bench-index-{subset}"
    info: dict[str, Any] = {"index": str(index_dir.relative_to(REPO)), "built": False}
    if has_index(index_dir):
        return index_dir, {**info, **index_summary(index_dir)}
    if not CORPUS.is_dir():
        raise SystemExit(f"query_v2: the corpus is not at {CORPUS} (set ACEH_SHARED_DATA)")
    rels = subset_files(CORPUS, subset)
    stage = stage_corpus(CORPUS, rels, REPO / ".aceh" / f"bench-corpus-{subset}")
    print(f"query_v2: indexing {len(rels)} statutes into {index_dir} (once)", file=sys.stderr, flush=True)
    started = time.perf_counter()
    report = index_setup.ingest_paths(cfg_for_ingest, [stage], index_dir)
    print(report.summary(), file=sys.stderr)
    if not has_index(index_dir):
        raise SystemExit("query_v2: ingest wrote no index")
    info.update(built=True, ingest_s=round(time.perf_counter() - started, 1), failed=len(report.failed),
                **index_summary(index_dir))
    return index_dir, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.query_v2", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subset", choices=("full", "demo"), default="full")
    parser.add_argument("--index", help="a prebuilt index folder to use as is")
    parser.add_argument("--requests", type=int, default=64, help="per route and level (>= 2 x clients)")
    parser.add_argument("--clients", default="1,8,32", help="concurrency levels, comma-separated")
    parser.add_argument("--config", default=str(REPO / "configs" / "default.yaml"))
    parser.add_argument("--quick", action="store_true", help="demo subset, 16 requests per level")
    parser.add_argument("--out", help="results JSON (default benchmarks/results/query_v2.json)")
    args = parser.parse_args(argv)
    if args.quick:
        args.subset, args.requests = "demo", 16
    levels = [int(x) for x in args.clients.split(",") if x.strip()]
    os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                       "RAY_USAGE_STATS_ENABLED": "0"})

    from serve_app.config import load_config
    from serve_app.runtime import factory
    from serve_app.runtime.serve_runner import check_port_free, start_serve

    questions = load_questions(QUESTIONS)
    with tempfile.TemporaryDirectory(prefix="aceh-bench-q2-") as tmp:
        port = free_port()

        def config(index_dir: Path) -> Any:
            return load_config(args.config, env={
                "ACEH_API_KEYS": API_KEY, "ACEH_INDEX_DIR": str(index_dir),
                "ACEH_DATABASE_URL": f"sqlite:///{Path(tmp) / 'aceh.db'}", "ACEH_PORT": str(port)})

        index_dir, index_info = prepare_index(config(Path(tmp) / "unused"), args.subset, args.index)
        cfg = config(index_dir)
        factory.preflight(cfg)
        check_port_free(cfg.serve.host, cfg.port)
        import ray
        from ray import serve

        base = f"http://{cfg.serve.host}:{cfg.port}"
        try:
            started = time.perf_counter()
            start_serve(cfg)
            wait_healthy(base)
            startup_s = round(time.perf_counter() - started, 1)
            load_before = [round(x, 2) for x in os.getloadavg()]
            print(f"query_v2: graph up in {startup_s} s at {base}", file=sys.stderr, flush=True)
            rows = asyncio.run(measure(base, questions, levels, args.requests))
            ray_cpus = ray.cluster_resources().get("CPU")
            load_after = [round(x, 2) for x in os.getloadavg()]
        finally:
            try:
                serve.shutdown()
            finally:
                ray.shutdown()

    goals = evaluate_goals(rows)
    print(format_rows(rows))
    verdicts = {None: "not measured", True: "met", False: "MISSED"}
    print("goals: " + ", ".join(f"{k}: {verdicts[v]}" for k, v in goals.items()))
    details = {
        "engines": "embedded (CPU): extractive writer, rule judge, framing rules, pattern guard",
        "corpus": f"indo_legal_corpus ({args.subset})", "index": index_info, "graph_startup_s": startup_s,
        "questions": str(QUESTIONS.relative_to(REPO)), "mode": "closed loop", "levels": levels,
        "requests_per_level": args.requests, "goals": goals, "runs": rows,
        "ray_cpus": ray_cpus, "encoder_threads": cfg.retrieval.encoder.threads or "library default",
        "loadavg_before": load_before, "loadavg_after": load_after,
    }
    # The 44 questions are the ones the code was profiled on, and they repeat, so caches are warm.
    result = Result(benchmark="query_v2", figures=figures(details), in_sample=True,
                    data=f"indo_legal_corpus ({args.subset}), 44 questions repeated",
                    command=command("query_v2", argv), details=details)
    print(f"wrote {write_result(result, args.out, quick=args.quick)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
