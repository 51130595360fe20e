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
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.agent_quality_demo import demo_markdown, run_demo
from benchmarks.answer_scoring import MARK, MARKED, QUESTIONS, evaluate, rate_table, run_line, summarize
from benchmarks.harness import (
    Figure,
    Result,
    atomic_write,
    command,
    machine_summary,
    markdown_table,
    shared_data,
    write_first_look,
    write_result,
)
from benchmarks.legal_qa_dev import run_full

DATA = shared_data()
CORPUS = DATA / "indo_legal_corpus"
THREADS = 2
QUICK_MAX_BYTES = 60_000


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
        return run_full(args.full_index, args.label, argv, _write, args.dataset, args.first_look)
    if args.demo:
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
