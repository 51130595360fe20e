"""Store write throughput and latency: 32 concurrent conversations (one thread each) appending v2
exchanges (user message + stored answer with claims, framing, faithfulness + two memory items, one
transaction each), SQLite (WAL) vs PostgreSQL.

    .venv/bin/python -m benchmarks.store [--quick] [--seconds S] [--threads N] [--postgres URL]

Prints a table and writes benchmarks/results/store.json. PostgreSQL is skipped (and said so) when the
server is not reachable; it runs in a schema of its own that is dropped afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.harness import Figure, Result, command, percentile, write_result
from serve_app.conversation.exchange import Exchange
from serve_app.conversation.store import Store

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"


def answer_body(n: int) -> dict[str, Any]:
    """A stored v2 answer of realistic size (about 3 KB of JSON)."""
    claims: list[dict[str, Any]] = []
    text = "Berikut ringkasan anggaran."
    for k in range(5):
        claim = (f"Anggaran urusan {k} tahun 2023 adalah Rp {n + k},{k} miliar "
                 "menurut Qanun Aceh Nomor 1 Tahun 2023.")
        start = len(text) + 1
        text = f"{text} {claim}"
        citation = {"document_id": f"doc-{k}", "document_title": "Qanun Aceh tentang APBA 2023",
                    "chunk_id": f"doc-{k}:{n % 97}", "document_year": 2023, "document_number": "1"}
        claims.append({"text": claim, "citation_keys": [f"P{k + 1}"],
                       "citations": [{"citation_key": f"P{k + 1}", "citation": citation}],
                       "verdict": "supported" if k % 3 else "unsupported", "unverified_reason": None,
                       "invalid_citation_keys": [], "kind": "fact", "layout": "continue",
                       "start": start, "end": start + len(claim), "start_utf16": start,
                       "end_utf16": start + len(claim)})
    faithfulness = {"mechanism": "annotate-v2", "judge_status": "complete", "supported": 3, "unsupported": 2,
                    "verification": "partial",
                    "grounding": {"claims_supported": 3, "claims_total": 5, "grounding_rate": 0.6}}
    return {"schema": "annotate-v2", "answer": text, "claims": claims,
            "framing": [{"text": "Berikut ringkasan anggaran.", "layout": "paragraph", "start": 0, "end": 27,
                         "start_utf16": 0, "end_utf16": 27}],
            "faithfulness": faithfulness, "v2_faithfulness": faithfulness, "fallback_used": False,
            "citations": [c["citations"][0]["citation"] for c in claims]}


def run_backend(store: Store, *, threads: int, seconds: float) -> dict[str, Any]:
    store.migrate()
    owner = "bench|user"
    cids = [store.create_conversation(owner)["conversation_id"] for _ in range(threads)]
    latencies: list[list[float]] = [[] for _ in range(threads)]
    errors: list[str] = []
    start_barrier = threading.Barrier(threads + 1)
    stop = threading.Event()

    def writer(i: int) -> None:
        start_barrier.wait()
        n = 0
        while not stop.is_set():
            body = answer_body(n)
            t0 = time.perf_counter()
            try:
                store.append_exchange(Exchange(
                    cids[i], owner, "v2", f"Pertanyaan {n} tentang anggaran?", body,
                    [body["claims"][1]["text"], body["claims"][2]["text"]],
                ))
            except Exception as exc:  # reported in the results, not hidden
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
                return
            latencies[i].append(time.perf_counter() - t0)
            n += 1

    workers = [threading.Thread(target=writer, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    start_barrier.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    wall = time.perf_counter() - began
    flat = sorted(x for per in latencies for x in per)
    exchanges = len(flat)

    def pct(q: float) -> float | None:
        return round(percentile(flat, q) * 1000, 2) if flat else None

    return {
        "exchanges": exchanges,
        "messages_written": 2 * exchanges,
        "wall_s": round(wall, 3),
        "messages_per_s": round(2 * exchanges / wall, 1),
        "exchanges_per_s": round(exchanges / wall, 1),
        "latency_ms": {"p50": pct(0.50), "p95": pct(0.95), "p99": pct(0.99), "max": pct(1.0),
                       "mean": round(statistics.fmean(flat) * 1000, 2) if flat else None},
        "slowest_thread_exchanges": min(len(per) for per in latencies),
        "errors": errors[:5],
    }


def figures(details: dict[str, Any]) -> dict[str, Figure]:
    """Headline: messages/s and p95 per backend that ran."""
    out: dict[str, Figure] = {}
    for name, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
        r = details["results"].get(name, {})
        if "messages_per_s" in r:
            out[f"{label} messages/s (p95)"] = f"{r['messages_per_s']:,.0f} ({r['latency_ms']['p95']:.0f} ms)"
    return out


def _pg_available(url: str) -> str | None:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3) as conn:
            return str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
    except Exception:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 s per backend instead of 10 s")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--postgres", default=os.environ.get("ACEH_BENCH_POSTGRES_URL", DEFAULT_PG))
    args = parser.parse_args(argv)
    seconds = args.seconds or (3.0 if args.quick else 10.0)

    results: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="aceh-bench-store-"))
    try:
        sqlite_store = Store(f"sqlite:///{tmp / 'bench.db'}")
        try:
            results["sqlite"] = run_backend(sqlite_store, threads=args.threads, seconds=seconds)
        finally:
            sqlite_store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    pg_version = _pg_available(args.postgres)
    if pg_version is None:
        results["postgresql"] = {"skipped": f"not reachable at {args.postgres}"}
    else:
        schema = f"aceh_bench_{uuid.uuid4().hex[:10]}"
        pg_store = Store(args.postgres, schema=schema, pool_size=args.threads)
        try:
            results["postgresql"] = run_backend(pg_store, threads=args.threads, seconds=seconds)
        finally:
            with pg_store.engine.begin() as conn:
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            pg_store.close()

    details = {
        "sqlite_version": sqlite3.sqlite_version, "postgresql_version": pg_version,
        "threads": args.threads,
        "concurrent_conversations": args.threads,
        "seconds_per_backend": seconds,
        "runs": 1,
        "workload": "append_exchange: user message + v2 answer (~3 KB JSON, 5 claims) + 2 memory items",
        "results": results,
    }
    path = write_result(Result(benchmark="store", figures=figures(details), data="synthetic conversations",
                               in_sample=False, command=command("store", argv), details=details),
                        quick=args.quick)

    print(f"store writes, {args.threads} concurrent conversations, {seconds:g} s per backend, 1 run")
    header = f"{'backend':<12}{'messages/s':>12}{'exchanges':>11}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
    print(header + "  errors")
    for name, r in results.items():
        if "skipped" in r:
            print(f"{name:<12}skipped: {r['skipped']}")
            continue
        lat = r["latency_ms"]
        print(f"{name:<12}{r['messages_per_s']:>12.1f}{r['exchanges']:>11}{lat['p50']:>9.2f}"
              f"{lat['p95']:>9.2f}{lat['p99']:>9.2f}  {len(r['errors'])}")
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
