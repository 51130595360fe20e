"""How well the embedded agent answers real legal questions: does it cite the gold document, and does it
state the asked figure?

Builds an index of the gold documents of ``benchmarks/data/legal_questions.jsonl`` plus distractors from
``indo_legal_corpus/demo_subset.txt`` (a temporary folder of links, nothing copied into the repo), runs the
embedded agent (planner, tools, extractive writer) on every question through the real retriever, and
reports per question and in total:

* ``gold_shown``: a passage of the gold document was shown to the writer (the tools found it);
* ``cites_gold``: a fact segment cites a passage of the gold document;
* ``states_figure``: a fact segment states the gold figure (same value; ``%`` and unit where the gold
  has them);
* ``figure_cited_gold``: that segment cites the gold document;
* ``not_found``: the answer is only the "not found" framing.

Run: ``.venv/bin/python -m benchmarks.agent_quality [--quick]``; writes
``benchmarks/results/agent_quality.json`` and ``benchmarks/results/agent_quality.md``.

``--demo`` instead runs the 47 questions of ``tests/data/demo_questions.jsonl`` over the demo corpus
(``configs/demo_corpus``, ingested into a temporary index) through the whole in-process pipeline, judge
included, and reports the share whose answer contains ``expected_figure``, the share citing ``gold_file``,
the share whose verification is ``full``, and the share of ``not_found`` questions answered with the
not-found framing; it writes ``benchmarks/results/agent_quality_demo.{json,md}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchmarks.harness import (
    Figure,
    Result,
    atomic_write,
    command,
    machine_summary,
    markdown_table,
    percentile,
    shared_data,
    write_first_look,
    write_result,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = shared_data()
CORPUS = DATA / "indo_legal_corpus"
QUESTIONS = ROOT / "benchmarks" / "data" / "legal_questions.jsonl"
THREADS = 2
QUICK_MAX_BYTES = 60_000

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


def _select_documents(
    questions: list[dict[str, Any]], distractors: int, *, smallest: bool = False
) -> list[str]:
    gold = list(dict.fromkeys(q["gold_path"] for q in questions))
    subset = [
        line.strip()
        for line in (CORPUS / "demo_subset.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    extra = [p for p in subset if p not in gold and (CORPUS / p).is_file()]
    if smallest:
        extra.sort(key=lambda p: (CORPUS / p).stat().st_size)
    extra = extra[:distractors]
    return [p for p in gold + extra if (CORPUS / p).is_file()]


def _link_tree(paths: list[str], root: Path) -> Path:
    """A folder of links mirroring the corpus layout, so each document's source is its corpus path."""
    tree = root / "corpus"
    for rel in paths:
        target = tree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to((CORPUS / rel).resolve())
    return tree


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


def markdown(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = [
        "# Agent quality (embedded agent, real legal corpus)",
        "",
        run_line(result) + f"index: {result['index']['documents']} documents, "
        f"{result['index']['chunks']} chunks ("
        + ("reused; " if result["index"]["reused"] else "")
        + f"ingest {result['index']['ingest_s']} s)",
        "",
        *rate_table(
            s,
            (
                ("gold_shown", "gold document shown to the writer"),
                ("cites_gold", "answer cites the gold document"),
                ("states_figure", "answer states the asked figure"),
                ("figure_cited_gold", "figure stated with a gold citation"),
                ("not_found", "answered 'not found'"),
            ),
        ),
    ]
    lines += [
        "",
        f"Fact segments per answer {s['facts_per_answer']} (mean). Refusals {s['refusals']}, errors "
        f"{s['errors']}, agent latency p50 {s['latency_ms_p50']} ms (max {s['latency_ms_max']} ms).",
        "",
        *markdown_table(
            ("id", "tool", "gold shown", "cites gold", "figure", "figure cited gold"),
            ((r["id"], r["tool"], *(MARK[r[k]] for k in MARKED)) for r in result["rows"]),
        ),
    ]
    return "\n".join(lines) + "\n"


def _write(result: Result, render: Callable[[dict[str, Any]], str], quick: bool = False) -> None:
    """The record to results/<benchmark>.json and its Markdown table next to it."""
    record = result.to_json() | {"machine": machine_summary(result.machine)}
    text = render(record)
    path = write_first_look(result) if result.first_look else write_result(result, quick=quick)
    atomic_write(path.with_suffix(".md"), text)
    print(text)


def figures(summary: dict[str, Any]) -> dict[str, Figure]:
    """Headline: hits of the total for each rate the summary holds, in reading order."""
    labels = {
        "cites_gold": "cites gold document",
        "states_figure": "states the figure",
        "verification_full": "fully verified",
        "not_found_framed": "not-found framed",
    }
    return {
        label: f"{summary[key]['hits']}/{summary[key]['total']}"
        for key, label in labels.items()
        if key in summary
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="questions on the small documents, 5 distractors"
    )
    parser.add_argument("--distractors", type=int, default=50)
    parser.add_argument("--index", type=Path, default=None, help="reuse or keep the index in this folder")
    parser.add_argument("--demo", action="store_true", help="the demo questions over configs/demo_corpus")
    parser.add_argument(
        "--full-index",
        type=Path,
        default=None,
        help="a prebuilt full-corpus index (read only): legal_qa_dev scored by its score_qa.py, then ours",
    )
    parser.add_argument("--label", default="in-sample (dev, tuned on)", help="how the figures may be read")
    parser.add_argument("--dataset", choices=("legal_qa_dev", "legal_qa_dev2"), default="legal_qa_dev",
                        help="with --full-index: the development set to score")
    parser.add_argument("--first-look", action="store_true",
                        help="with --full-index: the set's one out-of-sample record (refused once it exists)")
    args = parser.parse_args(argv)
    if args.full_index:
        from benchmarks.legal_qa_dev import run_full

        return run_full(args.full_index, args.label, argv, _write, args.dataset, args.first_look)
    if args.demo:
        from benchmarks.agent_quality_demo import demo_markdown, run_demo

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        demo = run_demo(args.index)
        # The demo questions were written with the demo corpus, and the agent was tuned on them.
        result = Result(
            benchmark="agent_quality_demo",
            figures=figures(demo["summary"]),
            in_sample=True,
            data="fictional demo corpus, its 47 questions (whole pipeline, judge included)",
            command=command("agent_quality", argv),
            details={"threads": THREADS, "runs": 1, **demo},
        )
        _write(result, demo_markdown)
        return 0
    if not QUESTIONS.is_file() or not (CORPUS / "demo_subset.txt").is_file():
        print(
            f"agent_quality: needs {QUESTIONS} and {CORPUS} (set ACEH_SHARED_DATA); skipped.", file=sys.stderr
        )
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from benchmarks.retrieval_quality import bench_encoder
    from retrieval.ingest import ingest
    from retrieval.port import LocalRetrieverPort
    from retrieval.rerankers import FeatureReranker
    from retrieval.retriever import Retriever
    from serve_app.agent.agent import Agent
    from serve_app.agent.writers.embedded import EmbeddedWriter

    questions = [
        json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    if args.quick:
        questions = [q for q in questions if (CORPUS / q["gold_path"]).stat().st_size <= QUICK_MAX_BYTES]
        args.distractors = min(args.distractors, 5)
    documents = _select_documents(questions, args.distractors, smallest=args.quick)
    encoder = bench_encoder()  # the service's CPU default
    with tempfile.TemporaryDirectory(prefix="agent-quality-") as tmp:
        index = args.index or Path(tmp) / "index"
        reused = (index / "manifest.json").is_file()
        started = time.perf_counter()
        report = ingest([_link_tree(documents, Path(tmp))], index, encoder=encoder, progress=False)
        ingest_s = round(time.perf_counter() - started, 1)
        retriever = Retriever.load(index, encoder=encoder, reranker=FeatureReranker())
        agent = Agent(LocalRetrieverPort(retriever), EmbeddedWriter())
        rows = evaluate(agent, questions)
        chunks = sum(d.chunk_count for d in retriever.documents())
    summary = summarize(rows)
    details = {
        "threads": THREADS,
        "runs": 1,
        "index": {
            "reused": reused,
            "documents": len(documents),
            "failed": len(report.failed),
            "chunks": chunks,
            "ingest_s": ingest_s,
        },
        "summary": summary,
        "rows": rows,
    }
    # The agent's planner and writer were tuned while reading these 44 questions' answers: in-sample.
    result = Result(
        benchmark="agent_quality",
        figures=figures(summary),
        in_sample=True,
        data="44 questions over 53 real statutes (gold documents + distractors)",
        command=command("agent_quality", argv),
        details=details,
    )
    _write(result, markdown, quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
