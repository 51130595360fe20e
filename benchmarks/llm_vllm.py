"""The LLM roles on a real vLLM server (CPU build, SmolLM2-135M-Instruct): throughput, latency, quality.

Usage (starts its own vLLM unless --base-url names a running one; needs `make vllm model`):

    .venv/bin/python -m benchmarks.llm_vllm pool      # JudgePool -> vLLM vs direct batched completions
    .venv/bin/python -m benchmarks.llm_vllm prefix    # that workload at 32, prefix caching on vs off: two
                                                      # servers at once, rounds in turns, the same pairs
    .venv/bin/python -m benchmarks.llm_vllm query     # /query/v2 p50/p95 with every LLM role, 1 and 4 clients
    .venv/bin/python -m benchmarks.llm_vllm quality   # LLM judge on judge_numeric_dev, with and without veto
    .venv/bin/python -m benchmarks.llm_vllm answers   # legal_qa_dev: LLM writer beside the embedded one
                                                      # (benchmarks/llm_vllm_answers.py)

Each part prints a table and writes benchmarks/results/llm_vllm_<part>.json.

* pool, prefix: benchmarks/llm_vllm_pool.py (how the pool and the direct rounds are built and timed).
* quality: predictions are scored by the data set's own scorer (score_judge.py); figures are in-sample
  (dev, tuned on) in the sense that the prompt was written with this set available.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.harness import percentile, shared_data
from benchmarks.llm_vllm_pool import run_pool, run_prefix
from benchmarks.llm_vllm_server import LLM_CONFIG, REPO, vllm_server, write
from judge.llm_judge import LLMJudge
from judge.types import JudgeItem, JudgePassage
from models.openai_engine import OpenAIEngine

# ---------------------------------------------------------------------------- /query/v2


QUERIES = (
    "Apa saja kewajiban desa menurut qanun?",
    "Berapa anggaran pendidikan tahun ini?",
    "Siapa yang menetapkan peraturan tentang dana desa?",
    "Jelaskan ketentuan pajak daerah.",
)


async def _query_clients(app: Any, clients: int, per_client: int) -> tuple[list[float], list[dict[str, Any]]]:
    transport = httpx.ASGITransport(app=app)
    latencies: list[float] = []
    bodies: list[dict[str, Any]] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=600) as client:

        async def one(c: int) -> None:
            for k in range(per_client):
                query = QUERIES[(c + k) % len(QUERIES)]
                started = time.perf_counter()
                response = await client.post(
                    "/query/v2", json={"query": query}, headers={"X-API-Key": "bench"}
                )
                latencies.append(time.perf_counter() - started)
                bodies.append(
                    {
                        "status": response.status_code,
                        **(response.json() if response.status_code == 200 else {}),
                    }
                )

        await asyncio.gather(*(one(c) for c in range(clients)))
    return latencies, bodies


def run_query(args: argparse.Namespace) -> int:
    from serve_app.config import load_config
    from serve_app.runtime import factory, index_setup

    tmp = Path(tempfile.mkdtemp(prefix="aceh-bench-llm-"))
    index_dir = tmp / "index"
    rows = []
    with vllm_server(args.base_url) as (base_url, model):
        env = {
            "ACEH_API_KEYS": "bench",
            "ACEH_INDEX_DIR": str(index_dir),
            "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'aceh.db'}",
        }
        cfg = load_config(str(LLM_CONFIG), env=env)
        roles = cfg.roles.model_copy(
            update={
                name: getattr(cfg.roles, name).model_copy(update={"base_url": base_url, "model": model})
                for name in ("agent", "framing", "judge")
            }
        )
        cfg = cfg.model_copy(update={"roles": roles, "model_servers": []})
        index_setup.ingest_paths(cfg, [REPO / "configs" / "demo_corpus"], index_dir, progress=False)
        app = factory.build_inprocess_app(cfg)

        # one event loop for every level: the engines' HTTP clients belong to the loop that first used them
        async def all_levels() -> list[tuple[int, list[float], list[dict[str, Any]]]]:
            return [(c, *(await _query_clients(app, c, args.per_client))) for c in (1, 4)]

        for clients, latencies, bodies in asyncio.run(all_levels()):
            calls = [b["usage"]["model_calls"] for b in bodies if "usage" in b]
            statuses: dict[str, int] = {}
            for b in bodies:
                key = str(b["status"]) if b["status"] != 200 else (b.get("fallback_reason") or "answered")
                statuses[key] = statuses.get(key, 0) + 1
            row = {
                "clients": clients,
                "requests": len(latencies),
                "p50_s": round(percentile(latencies, 0.5), 2),
                "p95_s": round(percentile(latencies, 0.95), 2),
                "model_calls_per_answer_mean": round(sum(calls) / len(calls), 2) if calls else None,
                "outcomes": statuses,
            }
            rows.append(row)
            print(
                f"{clients} client(s): p50 {row['p50_s']} s, p95 {row['p95_s']} s, model calls/answer "
                f"{row['model_calls_per_answer_mean']}, outcomes {statuses}",
                flush=True,
            )
    # One short figure per client level, so the README row stays readable.
    figures = {
        f"p50/p95 s, calls/answer at {r['clients']}": f"{r['p50_s']:.1f}/{r['p95_s']:.1f}, "
        f"{r['model_calls_per_answer_mean']:g}"
        for r in rows
    }
    details = {"config": "configs/llm-cpu.yaml (agent, framing, judge on vLLM)", "rows": rows}
    print("wrote", write("query", figures, "configs/demo_corpus, 4 invented questions", True, details))
    return 0


# ---------------------------------------------------------------------------- quality


async def _judge_all(judge: LLMJudge, records: list[dict[str, Any]]) -> list[Any]:
    """Results in record order; items go in passage order, 16 a call, so prompts share cached prefixes."""
    items = [
        JudgeItem(r["id"], r["claim"], (JudgePassage("P1", r["passage"], {"title": r.get("source_title")}),))
        for r in records
    ]
    order = sorted(range(len(items)), key=lambda k: records[k]["passage_id"])
    results: dict[int, Any] = {}
    for start in range(0, len(order), 16):
        chunk = order[start : start + 16]
        for k, res in zip(chunk, await judge.judge([items[k] for k in chunk]), strict=True):
            results[k] = res
    return [results[k] for k in range(len(items))]


def _score(folder: Path, gold: Path, name: str, records: list[dict[str, Any]], verdicts: list[str]) -> Any:
    preds = Path(tempfile.mkdtemp()) / f"{name}.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"id": r["id"], "verdict": v}) + "\n" for r, v in zip(records, verdicts, strict=True)
        ),
        encoding="utf-8",
    )
    metrics = Path(tempfile.mkdtemp()) / f"{name}.json"
    cmd = [
        sys.executable,
        str(folder / "score_judge.py"),
        str(preds),
        "--gold",
        str(gold),
        "--json",
        str(metrics),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    return json.loads(metrics.read_text())


def run_quality(args: argparse.Namespace) -> int:
    """One pass of the LLM judge with the rule veto: the LLM's own verdict is read back from the result (a
    vetoed item was ``supported`` before the veto), so both figures come from the same model outputs."""
    folder = shared_data() / "judge_numeric_dev"
    gold = folder / "judge_numeric_dev.jsonl"
    if not gold.is_file():
        print(f"no {gold}; nothing to measure")
        return 0
    records = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: dict[str, Any] = {"items": len(records), "runs": {}}
    started = time.perf_counter()
    with vllm_server(args.base_url) as (base_url, model):
        engine = OpenAIEngine(base_url=base_url, model=model, timeout_s=900, chat_template=True)
        results = asyncio.run(_judge_all(LLMJudge(engine, rule_veto=True), records))
    out["seconds"] = round(time.perf_counter() - started, 1)
    with_veto = [r.verdict for r in results]
    alone = [
        "supported" if any(reason.startswith("rule_veto:") for reason in r.reasons) else r.verdict
        for r in results
    ]
    for name, verdicts in (("llm_alone", alone), ("llm_with_rule_veto", with_veto)):
        counts: dict[str, int] = {}
        for v in verdicts:
            counts[v] = counts.get(v, 0) + 1
        scored = _score(folder, gold, name, records, verdicts)
        out["runs"][name] = {"verdicts": counts, "scorer": scored.get("overall", scored)}
        print(
            f"{name}: verdicts {counts}; overall {json.dumps(out['runs'][name]['scorer'])[:300]}", flush=True
        )
    figures = {
        f"{name}_balanced_accuracy": run["scorer"].get("balanced_accuracy", "see details")
        for name, run in out["runs"].items()
    }
    print("wrote", write("quality", figures, "judge_numeric_dev (193 items, dev set)", True, out))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.llm_vllm", description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=("pool", "prefix", "query", "quality", "answers"))
    parser.add_argument("--base-url", help="a running vLLM (http://HOST:PORT/v1) serving the llm-cpu model")
    parser.add_argument("--off-base-url", help="prefix: a running vLLM like it with prefix caching off")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-client", type=int, default=3)
    parser.add_argument("--index", help="answers: the index (default /work/idx/full, else /work/idx/dev)")
    parser.add_argument("--limit", type=int, help="answers: only the first N questions by id")
    args = parser.parse_args(argv)
    if args.part == "answers":
        from benchmarks.llm_vllm_answers import run_answers

        return run_answers(args)
    return {"pool": run_pool, "prefix": run_prefix, "query": run_query, "quality": run_quality}[args.part](
        args
    )


if __name__ == "__main__":
    raise SystemExit(main())
