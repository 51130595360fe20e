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

* pool: N concurrent requests of one segment each go through :class:`judge.batching.BatchCollector` and
  :class:`judge.llm_judge.LLMJudge` over the openai engine (prompts framed in the chat template locally,
  models/chat_frame.py, one completions request per batch); "direct" sends pairs of the same shape as
  token-id prompts (rendered by the server's template outside the timing) straight to /v1/completions as
  one request per round. The two run in turns. Four segments share each passage (prefixes repeat).
* quality: predictions are scored by the data set's own scorer (score_judge.py); figures are in-sample
  (dev, tuned on) in the sense that the prompt was written with this set available.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from benchmarks.harness import Result, command, percentile, shared_data, write_result
from judge.batching import BatchCollector
from judge.llm_judge import LLMJudge
from judge.prompt import build_prompt
from judge.types import JudgeItem, JudgePassage
from models.openai_engine import OpenAIEngine

REPO = Path(__file__).resolve().parents[1]
LLM_CONFIG = REPO / "configs" / "llm-cpu.yaml"
SEGMENTS_PER_PASSAGE = 4


def write(part: str, figures: dict[str, Any], data: str, in_sample: bool, details: dict[str, Any]) -> Path:
    result = Result(
        benchmark=f"llm_vllm_{part}",
        figures=figures,
        data=data,
        in_sample=in_sample,
        command=command("llm_vllm", None),
        details=details,
    )
    return write_result(result)


# ---------------------------------------------------------------------------- the server


@contextmanager
def vllm_server(base_url: str | None, *, prefix_caching: bool = True) -> Iterator[tuple[str, str]]:
    """(base_url, model name) of a running server: the one named, or one started here for the block."""
    from benchmarks.service import free_port
    from models.vllm_server import VLLMServer
    from serve_app.config import load_config
    from serve_app.runtime.model_servers import provision, server_spec

    cfg = load_config(str(LLM_CONFIG), env={"ACEH_API_KEYS": "bench"})
    server_cfg = cfg.model_servers[0]
    if base_url:
        yield base_url, server_cfg.name
        return
    server_cfg = server_cfg.model_copy(update={"port": free_port(), "prefix_caching": prefix_caching})
    spec = server_spec(server_cfg, provision(server_cfg))
    log = Path(tempfile.gettempdir()) / f"aceh-bench-vllm-{os.getpid()}.log"
    started = time.perf_counter()
    with VLLMServer(spec, log_path=log):
        print(f"vLLM up in {time.perf_counter() - started:.0f} s at {spec.base_url} (log {log})", flush=True)
        yield spec.base_url, spec.served_model_name


# ---------------------------------------------------------------------------- pool vs direct


_IDENTITY: dict[str, str | int | None] = {
    "title": "Rincian Anggaran Kabupaten Contoh",
    "type": "Anggaran",
    "year": 2024,
}


def pool_items(n: int, round_no: int) -> list[JudgeItem]:
    """``n`` invented pairs, four segments per passage (passages differ per round: no cross-round cache)."""
    items = []
    for i in range(n):
        group = i // SEGMENTS_PER_PASSAGE
        passage = JudgePassage(
            "P1",
            f"Pagu belanja unit {group} putaran {round_no} tahun 2024 sebesar Rp {100 + group}.000.000, "
            f"dengan realisasi Rp {90 + group}.000.000 atau {80 + i % 10} persen dari pagu.",
            _IDENTITY,
        )
        claim = f"Realisasi belanja unit {group} mencapai {80 + (i * 7) % 13} persen."
        items.append(JudgeItem(f"r{round_no}-{i}", claim, (passage,)))
    return items


async def _direct_prompts(engine: OpenAIEngine, items: list[JudgeItem]) -> list[list[int]]:
    """The items' prompts in the server's own chat template, as token ids (built outside the timing)."""
    return [await engine._chat_token_ids(build_prompt(it), _scratch(), None) for it in items]


def run_salt() -> int:
    """A round-number offset of this run's own (from the clock), far from any other run's."""
    return int(time.time()) * 100_000


class PoolBench:
    """Pool and direct rounds at ``clients`` concurrent requests against one server. Round ``r`` judges the
    same pairs on any server (``pool_items`` of a fixed round number), so two servers compare alike."""

    def __init__(self, base_url: str, model: str, clients: int, salt: int) -> None:
        self.base_url, self.model, self.clients = base_url, model, clients
        self.engine = OpenAIEngine(base_url=base_url, model=model, timeout_s=600, chat_template=True)
        self.judge = LLMJudge(self.engine, rule_veto=False)
        self.collector = BatchCollector(self.judge, max_batch_size=64, batch_wait_timeout_s=0.05)
        self.http = httpx.AsyncClient(timeout=600)
        self.pool_s: list[float] = []
        self.pool_call_s: list[float] = []
        self.direct_s: list[float] = []
        # round numbers of their own per level and per run (``salt``): no round finds its passages in the
        # prefix cache of a server reused from an earlier level or run
        self.first = salt + 1000 * clients

    async def warm(self) -> None:
        await self.judge.judge(pool_items(2, -1))  # label ids and the chat frame learnt, server paths hot

    async def pool(self, r: int) -> None:
        items = pool_items(self.clients, self.first + r * 2)
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(self.collector.submit_many_outcomes([it]) for it in items))
        self.pool_s.append(time.perf_counter() - started)
        assert all(o[0].result.verdict in ("supported", "unsupported") for o in outcomes), outcomes
        # the engine's completions calls: every item's record carries its whole call's wall time, so the
        # distinct values are the calls (one per batch)
        calls = {rec.latency_ms for o in outcomes for rec in o[0].records}
        self.pool_call_s.append(sum(calls) / 1000)

    async def direct(self, r: int) -> None:
        # pairs of the same kind (a fresh round, same shapes: no prefix cached from the pool's turn)
        body = {
            "model": self.model,
            "prompt": await _direct_prompts(self.engine, pool_items(self.clients, self.first + r * 2 + 1)),
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": 20,
            "return_tokens_as_token_ids": True,
        }
        started = time.perf_counter()
        response = await self.http.post(self.base_url.rstrip("/") + "/completions", json=body)
        self.direct_s.append(time.perf_counter() - started)
        response.raise_for_status()

    async def both(self, r: int) -> None:
        """Pool and direct in turns (which goes first alternates), so load drift falls on both alike."""
        for turn in (self.pool, self.direct) if r % 2 == 0 else (self.direct, self.pool):
            await turn(r)

    async def close(self) -> None:
        await self.http.aclose()
        await self.engine.aclose()

    def _overhead(self) -> float:
        return (sum(self.pool_s) - sum(self.pool_call_s)) / len(self.pool_s)

    def row(self) -> dict[str, Any]:
        pool_rate = self.clients * len(self.pool_s) / sum(self.pool_s)
        direct_rate = self.clients * len(self.direct_s) / sum(self.direct_s)
        return {
            "clients": self.clients,
            "rounds": len(self.pool_s),
            "pool_pairs_per_s": round(pool_rate, 2),
            "direct_pairs_per_s": round(direct_rate, 2),
            "ratio": round(pool_rate / direct_rate, 3),
            "pool_round_s": [round(x, 2) for x in self.pool_s],
            # the pool's own cost: its wall time minus the completions calls it made (load-insensitive)
            "pool_overhead_s_per_round": round(self._overhead(), 3),
            "pool_completions_call_s": [round(x, 2) for x in self.pool_call_s],
            "direct_round_s": [round(x, 2) for x in self.direct_s],
            "chat_frame_used": self.engine._chat_frame is not None,
            "batch_sizes": list(self.collector.batch_sizes),
        }


async def _pool_round(base_url: str, model: str, clients: int, rounds: int) -> dict[str, Any]:
    bench = PoolBench(base_url, model, clients, run_salt())
    try:
        await bench.warm()
        for r in range(rounds):
            await bench.both(r)
    finally:
        await bench.close()
    return bench.row()


async def _prefix_rounds(servers: dict[bool, tuple[str, str]], rounds: int) -> list[dict[str, Any]]:
    """Caching on and off in turns, round by round (which server goes first alternates), same pairs."""
    salt = run_salt()  # one for both servers: they judge the same pairs
    benches = {caching: PoolBench(url, model, 32, salt) for caching, (url, model) in servers.items()}
    try:
        for bench in benches.values():
            await bench.warm()
        for r in range(rounds):
            for caching in (True, False) if r % 2 == 0 else (False, True):
                await benches[caching].both(r)
    finally:
        for bench in benches.values():
            await bench.close()
    return [{**bench.row(), "prefix_caching": caching} for caching, bench in benches.items()]


def _scratch() -> Any:
    from models.base import CallRecord

    return CallRecord(role="bench", engine="openai", model="")


def run_pool(args: argparse.Namespace) -> int:
    rows = []
    with vllm_server(args.base_url) as (base_url, model):
        for clients in (8, 32):
            row = asyncio.run(_pool_round(base_url, model, clients, args.rounds))
            rows.append(row)
            print(
                f"{clients:>3} concurrent: JudgePool {row['pool_pairs_per_s']:.2f} pairs/s, direct "
                f"{row['direct_pairs_per_s']:.2f} pairs/s, ratio {row['ratio']:.3f}",
                flush=True,
            )
    figures: dict[str, Any] = {f"ratio_at_{r['clients']}": r["ratio"] for r in rows}
    figures.update({f"pool_pairs_per_s_at_{r['clients']}": r["pool_pairs_per_s"] for r in rows})
    details = {"segments_per_passage": SEGMENTS_PER_PASSAGE, "rows": rows, "goal": "pool >= 0.85 x direct"}
    print("wrote", write("pool", figures, "invented budget pairs, 4 segments per passage", True, details))
    return 0


def prefix_figures(rows: list[dict[str, Any]]) -> dict[str, str]:
    """One short figure per mode (on/off pairs/s and their ratio), so the README row stays readable."""
    by = {row["prefix_caching"]: row for row in rows}
    figures = {}
    for mode in ("pool", "direct"):
        on, off = by[True][f"{mode}_pairs_per_s"], by[False][f"{mode}_pairs_per_s"]
        figures[f"{mode} on/off pairs/s"] = f"{on:.2f}/{off:.2f} ({on / off:.1f}x)"
    return figures


def run_prefix(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        # --base-url (a server with prefix caching on, as configs/llm-cpu.yaml starts it) stands for "on";
        # --off-base-url for "off"; a server not named is started here. Both run at once, rounds in turns.
        servers = {
            True: stack.enter_context(vllm_server(args.base_url, prefix_caching=True)),
            False: stack.enter_context(vllm_server(args.off_base_url, prefix_caching=False)),
        }
        rows = asyncio.run(_prefix_rounds(servers, args.rounds))
    for row in rows:
        print(
            f"prefix caching {'on ' if row['prefix_caching'] else 'off'}: JudgePool "
            f"{row['pool_pairs_per_s']:.2f} pairs/s, direct {row['direct_pairs_per_s']:.2f} pairs/s",
            flush=True,
        )
    figures = prefix_figures(rows)
    details = {"segments_per_passage": SEGMENTS_PER_PASSAGE, "clients": 32, "rows": rows}
    print("wrote", write("prefix", figures, "invented budget pairs, 4 segments per passage", True, details))
    return 0


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
