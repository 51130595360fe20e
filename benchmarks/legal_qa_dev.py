"""legal_qa_dev over a prebuilt full-corpus index: retrieval ranks from ``aceh-rag search``, answers from
``POST /query/v2``, scored by the dataset's own ``score_qa.py`` (run as a script, never copied).

* Retrieval: ``aceh-rag search --queries FILE --top-k 10 --json`` in a subprocess (the command a user runs),
  reduced to documents in rank order, each document once at its first chunk. A document is named by its path
  relative to the data folder it came from (``uu/2014/27.md`` under ``indo_legal_corpus/``; the APBA table as
  ``apba_aceh_2025/MASTER_01_RINCIAN_APBD.csv``, with ``#row=N`` when its first chunk is one table row).
* Answers: the service's Starlette app over the in-process pipeline (the routes the Ray ingress serves, not
  the Ray graph: starting the graph next to a full index does not fit this machine's memory and cores), one
  HTTP request per question through ``httpx.ASGITransport``.
* Figures: numbers stated in claims whose verdict is ``supported``, read with the judge's figure extractor
  (references such as ``Pasal 18``, ``ayat (2)``, ``11/2006`` and periods such as years are not figures; a
  spelled twin "5 (lima)" counts once). Refused: ``fallback_used``, or no claims and verification ``none``,
  or a 404.

The labels come from the dataset, not from our code; figures measured after tuning on it are in-sample.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.answer_scoring import QUESTIONS, evaluate, rate_table, summarize
from benchmarks.claim_readability import readability
from benchmarks.harness import Figure, Result, command, percentile, shared_data

ROOT = Path(__file__).resolve().parents[1]
DATA = shared_data()
DEV = DATA / "legal_qa_dev"
GOLD = DEV / "legal_qa_dev.jsonl"
SCORER = DEV / "score_qa.py"
# The second development set (other laws, other questions; same fields and scorer). Its first run, before any
# retrieval, agent or writer change made against it, is the out-of-sample record (--first-look).
DATASETS = ("legal_qa_dev", "legal_qa_dev2")


def gold_file(dataset: str) -> Path:
    return DATA / dataset / f"{dataset}.jsonl"
CORPUS = DATA / "indo_legal_corpus"
TOP_K = 10
API_KEY = "bench-legal-qa-dev"


def load_gold(path: Path = GOLD) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def data_path(source: str) -> str:
    """The scorer's name for an indexed source: corpus statutes relative to the corpus folder, any other
    file relative to the shared data folder (the folder that holds it is found by its file name)."""
    if (CORPUS / source).is_file():
        return source
    if "/" not in source:
        for folder in sorted(p for p in DATA.iterdir() if p.is_dir()) if DATA.is_dir() else []:
            if (folder / source).is_file():
                return f"{folder.name}/{source}"
    return source


def table_rows(index_dir: Path) -> dict[str, int]:
    """chunk id -> 1-based table row for the chunks of ingested tables (one chunk per row, in row order; the
    APBA CSV's ``row_id`` column counts the same way)."""
    from retrieval.store import read_jsonl

    tables = {row["document_id"] for row in read_jsonl(index_dir / "documents.jsonl") if row.get("tables")}
    return {
        row["chunk_id"]: int(row["ordinal"]) + 1
        for row in read_jsonl(index_dir / "chunks.jsonl")
        if row["document_id"] in tables
    }


def ranked_documents(results: list[dict[str, Any]], rows: dict[str, int]) -> list[str]:
    """Documents in rank order, each once at its first chunk (a table with the row of that chunk)."""
    out: list[str] = []
    seen: set[str] = set()
    for r in results:
        path = data_path(str(r["source"]))
        if path in seen:
            continue
        seen.add(path)
        row = rows.get(str(r["chunk_id"]))
        out.append(f"{path}#row={row}" if row is not None else path)
    return out


def search_ranks(
    index_dir: Path, questions: list[dict[str, Any]], env: dict[str, str]
) -> dict[str, list[str]]:
    """Per question id: ranked documents from ``aceh-rag search --queries FILE --top-k 10 --json``."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps({"id": q["id"], "query": q["question"]}, ensure_ascii=False) + "\n")
        queries = f.name
    try:
        cli = Path(sys.executable).parent / "aceh-rag"
        command = [str(cli), "search", "--queries", queries, "--top-k", str(TOP_K), "--json"]
        proc = subprocess.run(
            command,
            env={**env, "ACEH_INDEX_DIR": str(index_dir)},
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        os.unlink(queries)
    if proc.returncode != 0:
        raise RuntimeError(f"aceh-rag search failed ({proc.returncode}): {proc.stderr[-2000:]}")
    rows = table_rows(index_dir)
    ranks = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            obj = json.loads(line)
            ranks[str(obj["id"])] = ranked_documents(obj["results"], rows)
    return ranks


def claim_figures(text: str) -> list[Decimal]:
    """Distinct quantities a claim states (no periods, no references; a spelled twin counts once)."""
    from language.numbers import PERIOD_KINDS, extract_figures

    values: list[Decimal] = []
    for fig in extract_figures(text):
        if fig.kind in PERIOD_KINDS or fig.kind == "ratio":
            continue
        value = fig.value.normalize()
        if value not in values:
            values.append(value)
    return values


def as_json_number(value: Decimal) -> int | float:
    """An int for whole values, else a float (the scorer reads a float through its repr, exactly)."""
    return int(value) if value == value.to_integral_value() else float(value)


def refused(status: int, body: dict[str, Any]) -> bool:
    if status == 404:
        return True
    if body.get("fallback_used"):
        return True
    verification = (body.get("faithfulness") or {}).get("verification")
    return not body.get("claims") and verification == "none"


async def _answers(app: Any, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import httpx

    transport = httpx.ASGITransport(app=app)
    rows = []
    async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=120) as client:
        for q in questions:
            started = time.perf_counter()
            resp = await client.post(
                "/query/v2", json={"query": q["question"]}, headers={"X-API-Key": API_KEY}
            )
            latency = (time.perf_counter() - started) * 1000
            body = resp.json() if resp.headers.get("content-type", "").startswith("application/json") else {}
            supported = [c for c in body.get("claims", []) if c.get("verdict") == "supported"]
            figures: list[Decimal] = []
            for claim in supported:
                figures += [v for v in claim_figures(str(claim.get("text", ""))) if v not in figures]
            rows.append(
                {
                    "id": q["id"],
                    "status": resp.status_code,
                    "refused": refused(resp.status_code, body),
                    "supported_figures": [as_json_number(v) for v in figures],
                    "claims": [c.get("verdict") for c in body.get("claims", [])],
                    "supported_claims": [str(c.get("text", "")) for c in supported],
                    "answer": body.get("answer", ""),
                    "latency_ms": round(latency, 1),
                }
            )
    return rows


def run_answers(index_dir: Path, questions: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    from serve_app.config import load_config
    from serve_app.runtime import factory

    env = {
        **os.environ,
        "ACEH_INDEX_DIR": str(index_dir),
        "ACEH_API_KEYS": API_KEY,
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'store.db'}",
    }
    env.pop("ACEH_CORPUS", None)
    cfg = load_config(env=env)
    app = factory.build_inprocess_app(cfg)
    return asyncio.run(_answers(app, questions))


def score(preds: Path, metrics: Path, *, gold: Path = GOLD) -> tuple[dict[str, Any], str]:
    """The dataset's scorer, run as its own script on ``gold`` (the whole set, or a subset's own lines);
    (metrics, printed report)."""
    proc = subprocess.run(
        [sys.executable, str(SCORER), str(preds), "--gold", str(gold), "--json", str(metrics)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(metrics.read_text(encoding="utf-8")), proc.stdout


def run(index_dir: Path, out_dir: Path, *, answers: bool = True, gold: Path = GOLD) -> dict[str, Any]:
    """Retrieval (and, with ``answers``, the /query/v2 answers) for every question of ``gold``, scored by the
    dataset's scorer (legal_qa_dev's; legal_qa_dev2 ships an unchanged copy)."""
    questions = load_gold(gold)
    ranks = search_ranks(index_dir, questions, dict(os.environ))
    with tempfile.TemporaryDirectory(prefix="legal-qa-dev-") as tmp:
        rows = run_answers(index_dir, questions, Path(tmp)) if answers else []
    by_id = {r["id"]: r for r in rows}
    preds = []
    for q in questions:
        row = by_id.get(q["id"], {})
        preds.append(
            {
                "id": q["id"],
                "retrieved_doc_paths": ranks.get(q["id"], []),
                "supported_figures": row.get("supported_figures", []),
                "refused": row.get("refused", False),
            }
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    pred_file = out_dir / "legal_qa_dev_preds.jsonl"
    pred_file.write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    metrics, report = score(pred_file, out_dir / "legal_qa_dev_metrics.json", gold=gold)
    numeric = [q for q in questions if q["answerable"] and q["answer_figures"]]
    counts = [len(by_id[q["id"]]["supported_figures"]) for q in numeric if q["id"] in by_id]
    counts_answered = [
        len(by_id[q["id"]]["supported_figures"])
        for q in numeric
        if q["id"] in by_id and not by_id[q["id"]]["refused"]
    ]
    latencies = [r["latency_ms"] for r in rows]
    extra = {
        "figures_per_numeric_answer_median": percentile(counts_answered, 0.5) if counts_answered else None,
        "figures_per_numeric_question_median": percentile(counts, 0.5) if counts else None,
        "answer_latency_ms_p50": round(percentile(latencies, 0.5), 1) if latencies else None,
        # what a reader sees: page furniture in supported claims (none is the goal), claim length
        **readability((r["id"], r.get("supported_claims", [])) for r in rows),
    }
    return {"metrics": metrics, "extra": extra, "scorer_report": report, "rows": rows, "preds": preds}


def markdown(result: dict[str, Any]) -> str:
    """Headline table from the scorer's figures (overall and per language)."""
    m = result["metrics"]
    keys = (
        ("retrieval_hit@5", "gold doc in top 5 (answerable)"),
        ("retrieval_MRR@10", "MRR@10"),
        ("answer_all_figures_exact", "every asked figure in a supported claim (numeric)"),
        ("abstention_rate_unanswerable", "unanswerable refused"),
        ("false_refusal_rate", "answerable refused"),
        ("hallucinated_figure_rate_unanswerable", "unanswerable answered with figures"),
        ("overall_success", "overall success"),
    )
    blocks = [("all", m["overall"])] + [(f"lang={k}", v) for k, v in m["by_lang"].items()]
    lines = [
        "| metric (score_qa.py) | " + " | ".join(name for name, _ in blocks) + " |",
        "| --- |" + " --- |" * len(blocks),
    ]
    for key, label in keys:
        cells = [(f"{b[key]:.3f}") if isinstance(b.get(key), float) else "–" for _, b in blocks]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    e = result["extra"]
    lines += [
        "",
        f"Median figures per numeric answer (not refused): {e['figures_per_numeric_answer_median']}; "
        f"APBA row hit@5 {m.get('apba_csv_row_hit@5', '–')}; /query/v2 in-process p50 "
        f"{e['answer_latency_ms_p50']} ms (one client).",
        f"Supported claims: {e.get('supported_claims')}, with page furniture "
        f"{e.get('supported_claims_with_furniture')}, median {e.get('supported_claim_chars_median')} chars, "
        f"over 400 chars {e.get('supported_claims_over_400_chars')}.",
    ]
    return "\n".join(lines) + "\n"


def project_questions(index_dir: Path) -> dict[str, Any]:
    """The project's own questions (benchmarks/data/legal_questions.jsonl) through the embedded agent over
    the same index (second table)."""
    from retrieval.port import LocalRetrieverPort
    from serve_app.agent.agent import Agent
    from serve_app.agent.writers.embedded import EmbeddedWriter
    from serve_app.config import load_config
    from serve_app.runtime import index_setup

    cfg = load_config(env={**os.environ, "ACEH_INDEX_DIR": str(index_dir), "ACEH_API_KEYS": API_KEY})
    retriever = index_setup.build_retriever(cfg)
    questions = [
        json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    rows = evaluate(Agent(LocalRetrieverPort(retriever), EmbeddedWriter()), questions)
    return {"summary": summarize(rows), "rows": rows}


PROJECT_RATES = ("gold_shown", "cites_gold", "states_figure", "figure_cited_gold", "not_found")
FIRST_LOOK_LABEL = "first look (out of sample): before any change made against this set"


def full_markdown(result: dict[str, Any]) -> str:
    dataset = result.get("dataset", "legal_qa_dev")
    lines = [
        f"# Agent quality over the full corpus ({dataset}, scored by its score_qa.py)",
        "",
        f"{result['date']} · {result['machine']} · `{result['command']}` · index {result['index']} "
        f"({result['documents']} documents, {result['chunks']} chunks) · {result['label']}",
        "",
        markdown(result[dataset]),
        "Scorer output:",
        "",
        "```",
        result[dataset]["scorer_report"].rstrip(),
        "```",
    ]
    if "project_questions" in result:
        own = result["project_questions"]["summary"]
        lines += [
            "",
            "## The project's own questions (benchmarks/data/legal_questions.jsonl), same index",
            "",
            *rate_table(own, ((key, key) for key in PROJECT_RATES)),
        ]
    return "\n".join(lines) + "\n"


def figures(metrics: dict[str, Any]) -> dict[str, Figure]:
    """Headline: the scorer's overall retrieval hit@5 and MRR@10, exact figures, overall success."""
    overall = metrics["overall"]
    keys = (("retrieval_hit@5", "hit@5"), ("retrieval_MRR@10", "MRR@10"),
            ("answer_all_figures_exact", "all figures exact"), ("overall_success", "overall success"))
    return {label: round(overall[key], 3) for key, label in keys if isinstance(overall.get(key), float)}


def run_full(index: Path, label: str, argv: list[str] | None,
             write: Callable[[Result, Callable[[dict[str, Any]], str]], None],
             dataset: str = "legal_qa_dev", first_look: bool = False) -> int:
    """``dataset`` (first table) and, for legal_qa_dev, the project's questions (second table) over a prebuilt
    index. ``first_look`` writes the set's one out-of-sample record (refused once it exists)."""
    gold = gold_file(dataset)
    if not SCORER.is_file() or not gold.is_file() or not (index / "manifest.json").is_file():
        print(f"agent_quality: needs {SCORER}, {gold} and an index in {index}; skipped.", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from retrieval.store import read_jsonl

    documents = read_jsonl(index / "documents.jsonl")
    with tempfile.TemporaryDirectory(prefix="legal-qa-dev-") as tmp:  # preds and metrics live in the record
        qa = run(index, Path(tmp), gold=gold)
    details: dict[str, Any] = {
        "index": str(index),
        "documents": len(documents),
        "chunks": sum(d["chunk_end"] - d["chunk_start"] for d in documents),
        "label": FIRST_LOOK_LABEL if first_look else label,
        "dataset": dataset,
        dataset: qa,
    }
    if dataset == "legal_qa_dev":
        details["project_questions"] = project_questions(index)
    # The labels are the dataset's; the figures are in-sample once the code was tuned on it (--label says).
    name = f"{dataset}_first_look" if first_look else (
        "agent_quality_full" if dataset == "legal_qa_dev" else f"agent_quality_full_{dataset}")
    result = Result(benchmark=name, figures=figures(qa["metrics"]),
                    data=f"{dataset} over the full corpus, its labels and scorer",
                    in_sample=not first_look and label.startswith("in-sample"),
                    command=command("agent_quality", argv), details=details, first_look=first_look)
    write(result, full_markdown)
    return 0
