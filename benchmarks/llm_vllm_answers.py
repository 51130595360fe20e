"""LLM-written answers on legal_qa_dev beside the embedded writer's, scored by the data set's own scorer.

Usage (a running vLLM serving the llm-cpu model, or none: one is started for the run):

    .venv/bin/python -m benchmarks.llm_vllm answers --base-url URL [--index DIR] [--limit N]

Both arms run configs/llm-cpu.yaml over one index and one retriever, question by question through
``POST /query/v2`` of the in-process app (the routes the Ray ingress serves): ``llm`` with the file's roles
(agent, framing and judge on vLLM, the rule veto on), ``embedded`` with those three roles embedded (the
extractive writer and the rule judge). Only the roles differ. Answers are read as benchmarks/legal_qa_dev.py
reads them (figures of ``supported`` claims; refused = fallback, no claims, or 404) and scored by
``score_qa.py`` run as a script: every asked figure exact, refusals both ways, median figures per answer.

``--limit N`` takes the first N questions by id (the scorer then scores that subset only). The index is
``--index``, else /work/idx/full, else /work/idx/dev (the record names the one used). The figures are
in-sample: legal_qa_dev is a development set; the model (SmolLM2-135M) was not tuned on it.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import percentile
from benchmarks.legal_qa_dev import API_KEY, GOLD, SCORER, _answers, load_gold, score, search_ranks

DEFAULT_INDEXES = (Path("/work/idx/full"), Path("/work/idx/dev"))
ARMS = ("embedded", "llm")
LLM_ROLES = ("agent", "framing", "judge")
# What the README and the figures quote per arm (the scorer's overall block).
SCORER_KEYS = (
    "answer_all_figures_exact",
    "abstention_rate_unanswerable",
    "false_refusal_rate",
    "hallucinated_figure_rate_unanswerable",
)


def pick_index(named: str | None) -> Path | None:
    """The index to use: the one named, else the first default that holds a manifest."""
    candidates = (Path(named),) if named else DEFAULT_INDEXES
    return next((p for p in candidates if (p / "manifest.json").is_file()), None)


def subset(questions: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """The first ``limit`` questions by id (all of them without a limit)."""
    ordered = sorted(questions, key=lambda q: str(q["id"]))
    return ordered if limit is None else ordered[:limit]


def arm_config(arm: str, env: dict[str, str], base_url: str, model: str) -> Any:
    """configs/llm-cpu.yaml with the arm's roles: the file's LLM roles pointed at ``base_url``, or those
    roles embedded. No model servers are started by the app (the benchmark owns the one it uses)."""
    from benchmarks.llm_vllm_server import LLM_CONFIG
    from serve_app.config import load_config

    cfg = load_config(str(LLM_CONFIG), env=env)
    roles = cfg.roles
    if arm == "llm":
        update = {
            name: getattr(roles, name).model_copy(update={"base_url": base_url, "model": model})
            for name in LLM_ROLES
        }
    else:
        update = {name: type(getattr(roles, name))(engine="embedded") for name in LLM_ROLES}
    return cfg.model_copy(update={"roles": roles.model_copy(update=update), "model_servers": []})


def arm_summary(
    rows: list[dict[str, Any]], metrics: dict[str, Any], questions: list[dict[str, Any]]
) -> dict[str, Any]:
    """The scorer's overall figures, plus the median count of supported figures per numeric answer given
    (not refused) and the answers' latency, for one arm."""
    by_id = {r["id"]: r for r in rows}
    numeric = [q for q in questions if q["answerable"] and q["answer_figures"]]
    answered = [by_id[q["id"]] for q in numeric if not by_id[q["id"]]["refused"]]
    latencies = [r["latency_ms"] / 1000 for r in rows]
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[str(r["status"])] = statuses.get(str(r["status"]), 0) + 1
    overall = metrics["overall"]
    return {
        **{key: overall.get(key) for key in SCORER_KEYS},
        "figures_per_numeric_answer_median": (
            percentile([len(r["supported_figures"]) for r in answered], 0.5) if answered else None
        ),
        "numeric_answered": len(answered),
        "refused": sum(1 for r in rows if r["refused"]),
        "http_status": statuses,
        "latency_s_p50": round(percentile(latencies, 0.5), 1),
        "latency_s_p95": round(percentile(latencies, 0.95), 1),
    }


def _score_arm(
    rows: list[dict[str, Any]], ranks: dict[str, list[str]], gold: Path, tmp: Path, arm: str
) -> Any:
    by_id = {r["id"]: r for r in rows}
    preds = tmp / f"{arm}_preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps(
                {
                    "id": qid,
                    "retrieved_doc_paths": ranks.get(qid, []),
                    "supported_figures": row["supported_figures"],
                    "refused": row["refused"],
                }
            )
            + "\n"
            for qid, row in by_id.items()
        ),
        encoding="utf-8",
    )
    metrics, _report = score(preds, tmp / f"{arm}_metrics.json", gold=gold)
    return metrics


def run_answers(args: Any) -> int:
    from benchmarks.llm_vllm_server import vllm_server, write
    from serve_app.runtime import factory, index_setup

    index = pick_index(args.index)
    if not SCORER.is_file() or index is None:
        print(f"answers: needs {SCORER} and an index (--index, or one of {DEFAULT_INDEXES}); skipped.")
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    questions = subset(load_gold(), args.limit)
    ids = {q["id"] for q in questions}
    tmp = Path(tempfile.mkdtemp(prefix="aceh-bench-answers-"))
    # The scorer scores what its gold file holds: the subset's own lines of the data set (a temp file).
    gold = tmp / "gold.jsonl"
    gold.write_text(
        "".join(
            line + "\n"
            for line in GOLD.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["id"] in ids
        ),
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "ACEH_INDEX_DIR": str(index),
        "ACEH_API_KEYS": API_KEY,
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'store.db'}",
    }
    env.pop("ACEH_CORPUS", None)
    ranks = search_ranks(index, questions, env)
    arms: dict[str, Any] = {}
    rows_by_arm: dict[str, list[dict[str, Any]]] = {}
    started = time.perf_counter()
    with vllm_server(args.base_url) as (base_url, model):
        retriever = None
        for arm in ARMS:
            cfg = arm_config(arm, env, base_url, model)
            retriever = retriever or index_setup.build_retriever(cfg)  # one index in memory for both arms
            app = factory.build_inprocess_app(cfg, retriever=retriever)
            arm_started = time.perf_counter()
            rows = asyncio.run(_answers(app, questions))
            rows_by_arm[arm] = rows
            metrics = _score_arm(rows, ranks, gold, tmp, arm)
            arms[arm] = {
                **arm_summary(rows, metrics, questions),
                "seconds": round(time.perf_counter() - arm_started, 1),
            }
            print(f"{arm}: {json.dumps(arms[arm])}", flush=True)

    def rate(value: float | None) -> str:  # None: the subset holds no question of that kind
        return "–" if value is None else f"{value:.3f}"

    figures = {
        # short, so the README row stays readable: figures exact / unanswerable refused / answerable refused
        f"{arm} exact/abstain/false-refusal": "/".join(
            rate(a[key])
            for key in ("answer_all_figures_exact", "abstention_rate_unanswerable", "false_refusal_rate")
        )
        for arm, a in arms.items()
    }
    subset_words = f"first {len(questions)} by id" if args.limit else f"all {len(questions)}"
    details = {
        "index": str(index),
        "questions": subset_words,
        "config": "configs/llm-cpu.yaml; arm llm: agent, framing, judge on vLLM (SmolLM2-135M-Instruct); "
        "arm embedded: those roles embedded",
        "arms": arms,
        "seconds": round(time.perf_counter() - started, 1),
        "rows": {
            # no answer text or figures: the record carries no dev-set content, only what happened
            arm: [
                {
                    "id": r["id"],
                    "status": r["status"],
                    "refused": r["refused"],
                    "supported_figures": len(r["supported_figures"]),
                    "claims": r["claims"],
                    "latency_ms": r["latency_ms"],
                }
                for r in rows
            ]
            for arm, rows in rows_by_arm.items()
        },
    }
    data = f"legal_qa_dev ({subset_words}), index {index}"
    print("wrote", write("answers", figures, data, True, details))
    return 0
