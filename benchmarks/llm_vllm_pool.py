"""``benchmarks.llm_vllm pool`` and ``prefix``: JudgePool -> vLLM against direct batched completions.

* pool: N concurrent requests of one segment each go through :class:`judge.batching.BatchCollector` and
  :class:`judge.llm_judge.LLMJudge` over the openai engine (prompts framed in the chat template locally,
  models/chat_frame.py, one completions request per batch); "direct" sends pairs of the same shape as
  token-id prompts (rendered by the server's template outside the timing) straight to /v1/completions as
  one request per round. The two run in turns. Four segments share each passage (prefixes repeat).
* prefix: that workload at 32 clients, prefix caching on vs off: two servers at once, rounds in turns, the
  same pairs on both.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from typing import Any

import httpx

from benchmarks.llm_vllm_server import vllm_server, write
from judge.batching import BatchCollector
from judge.llm_judge import LLMJudge
from judge.prompt import build_prompt
from judge.types import JudgeItem, JudgePassage
from models.openai_engine import OpenAIEngine

SEGMENTS_PER_PASSAGE = 4


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
