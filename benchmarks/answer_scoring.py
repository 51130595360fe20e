"""What the answer benchmarks share: the project's question file, whether a text states a gold figure, one
run of the embedded agent per question, and the rates and tables of its per-question rows.

``agent_quality`` (the project's questions, the demo questions) and ``legal_qa_dev`` (the development sets
over a full-corpus index) both read these, so neither imports the other.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.harness import markdown_table, percentile

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "benchmarks" / "data" / "legal_questions.jsonl"

_QUALIFIERS = re.compile(
    r"^(?:paling\s+(?:sedikit|tinggi|banyak|lambat|rendah)|sekurang-kurangnya|maksimal|minimal|sebesar|\s)+",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"Rp\s?[\d.,]*\d|\d+(?:[.,]\d+)*\s?(?:%|persen|per\s?seratus|perseratus)?", re.IGNORECASE
)
_UNITS = ("tahun", "bulan", "hari", "orang", "kali")


def figure_key(gold: str) -> tuple[float, bool, str | None] | str:
    """(value, is_percent, unit word) of the gold figure's first number, or its text when it has none."""
    from serve_app.agent.text import parse_number

    core = _QUALIFIERS.sub("", gold).strip()
    m = _NUMBER.search(core)
    if m is None:
        return core.lower()
    raw = m.group(0)
    percent = bool(re.search(r"%|persen|seratus", raw, re.IGNORECASE))
    value = parse_number(re.sub(r"(?i)\s?(%|persen|per\s?seratus|perseratus)$", "", raw))
    after = core[m.end() :].lower()
    after = re.sub(r"^\s*\([^)]*\)", "", after)  # "20 (dua puluh) tahun" → " tahun"
    unit = next((u for u in _UNITS if re.match(rf"\s*{u}\b", after)), None)
    return (value if value is not None else -1.0, percent, unit)


def states_figure(text: str, gold: str) -> bool:
    from serve_app.agent.text import parse_number

    key = figure_key(gold)
    if isinstance(key, str):
        return key in text.lower()
    value, percent, unit = key
    for m in _NUMBER.finditer(text):
        raw = m.group(0)
        is_percent = bool(re.search(r"%|persen|seratus", raw, re.IGNORECASE))
        number = parse_number(re.sub(r"(?i)\s?(%|persen|per\s?seratus|perseratus)$", "", raw))
        if number is None or abs(number - value) > 1e-6 or is_percent != percent:
            continue
        if unit is None:
            return True
        after = re.sub(r"^\s*\([^)]*\)", "", text[m.end() :].lower())
        if re.match(rf"\s*{unit}\b", after):
            return True
    return False


async def _ask(agent: Any, question: str) -> tuple[Any, float]:
    from serve_app.agent.agent import AgentRequest
    from serve_app.budget import RequestBudget

    budget = RequestBudget(deadline=time.time() + 60, model_calls=64, context_tokens=12000)
    started = time.perf_counter()
    outcome = await agent.run(AgentRequest(query=question), budget=budget)
    return outcome, (time.perf_counter() - started) * 1000


def evaluate(agent: Any, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from serve_app.answer.compose import compose
    from serve_app.answer.refusals import FRAMINGS_EN, NOT_FOUND_FRAMING

    rows = []
    for q in questions:
        outcome, latency_ms = asyncio.run(_ask(agent, q["question"]))
        gold = q["gold_path"]
        gold_keys = {k for k, p in outcome.passages.items() if p.chunk is not None and p.chunk.source == gold}
        facts = [s for s in outcome.segments if s.kind == "fact"]
        figure = q.get("gold_figure")
        stating = [s for s in facts if figure and states_figure(s.text, figure)]
        answer = compose(outcome.segments).answer if outcome.segments else (outcome.refusal_text or "")
        rows.append(
            {
                "id": q["id"],
                "question": q["question"],
                "gold_path": gold,
                "gold_figure": figure,
                "tool": outcome.tool,
                "refusal": outcome.refusal,
                "error": outcome.error,
                "passages": len(outcome.passages),
                "facts": len(facts),
                "gold_shown": bool(gold_keys),
                "cites_gold": any(set(s.cites) & gold_keys for s in facts),
                "states_figure": bool(stating) if figure else None,
                "figure_cited_gold": any(set(s.cites) & gold_keys for s in stating) if figure else None,
                "not_found": [s.text for s in outcome.segments]
                in ([NOT_FOUND_FRAMING], [FRAMINGS_EN[NOT_FOUND_FRAMING]]),
                "latency_ms": round(latency_ms, 1),
                "answer": answer,
            }
        )
    return rows


def rate(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    values = [r[key] for r in rows if r[key] is not None]
    hits = sum(bool(v) for v in values)
    return {
        "hits": hits,
        "total": len(values),
        "rate": round(100.0 * hits / len(values), 1) if values else None,
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = [r["latency_ms"] for r in rows]
    return {
        "questions": len(rows),
        **{
            k: rate(rows, k)
            for k in ("gold_shown", "cites_gold", "states_figure", "figure_cited_gold", "not_found")
        },
        "facts_per_answer": round(statistics.mean(r["facts"] for r in rows), 2) if rows else None,
        "refusals": sum(r["refusal"] is not None for r in rows),
        "errors": sum(r["error"] is not None for r in rows),
        "latency_ms_p50": round(percentile(latencies, 0.5), 1) if latencies else None,
        "latency_ms_max": max(latencies) if latencies else None,
    }


# A yes/no/not-asked cell of the per-question tables (agent_quality and agent_quality_demo).
MARK = {True: "yes", False: "no", None: "–"}
MARKED = ("gold_shown", "cites_gold", "states_figure", "figure_cited_gold")


def rate_table(summary: dict[str, Any], labels: Iterable[tuple[str, str]]) -> list[str]:
    """Markdown rows: one per (summary key, label), with hits, total and rate."""
    rows = []
    for key, label in labels:
        m = summary[key]
        rows.append((label, m["hits"], m["total"], f"{m['rate']}%"))
    return markdown_table(("metric", "hits", "of", "rate"), rows)


def run_line(result: dict[str, Any]) -> str:
    """The start of a report's second line: when, where, the command, threads and runs."""
    return (
        f"{result['date']} · {result['machine']} · `{result['command']}` · {result['threads']} threads · "
        f"{result['runs']} run · "
    )
