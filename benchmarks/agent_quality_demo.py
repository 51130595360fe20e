"""``agent_quality --demo``: the 47 demo questions over the fictional demo corpus through the whole
in-process pipeline, judge included (see benchmarks/agent_quality.py)."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.answer_scoring import MARK, ROOT, rate, rate_table, run_line
from benchmarks.harness import markdown_table, percentile
from models.json_types import json_field, json_objects, json_text

DEMO_CORPUS = ROOT / "configs" / "demo_corpus"
DEMO_QUESTIONS = ROOT / "tests" / "data" / "demo_questions.jsonl"


def run_demo(index: Path | None) -> dict[str, Any]:
    """The demo questions through the in-process pipeline (guard, agent, composer, judge)."""
    from serve_app.answer.refusals import NOT_FOUND_FRAMING
    from serve_app.config import load_config
    from serve_app.guard.auth import Principal
    from serve_app.runtime import factory, index_setup
    from serve_app.wire.schemas import QueryV2Request

    questions = [json.loads(line) for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line]
    with tempfile.TemporaryDirectory(prefix="agent-quality-demo-") as tmp:
        index_dir = index or Path(tmp) / "index"
        env = {
            **os.environ,
            "ACEH_INDEX_DIR": str(index_dir),
            "ACEH_API_KEYS": "bench",
            "ACEH_DATABASE_URL": f"sqlite:///{Path(tmp) / 'store.db'}",
        }
        env.pop("ACEH_CORPUS", None)
        cfg = load_config(env=env)
        started = time.perf_counter()
        index_setup.ingest_paths(cfg, [DEMO_CORPUS], index_dir, progress=False)
        ingest_s = round(time.perf_counter() - started, 1)
        pipeline = factory.build_inprocess(cfg)

        async def ask_all() -> list[dict[str, Any]]:
            rows = []
            for q in questions:
                t0 = time.perf_counter()
                request = QueryV2Request(query=q["question"])
                body = (await pipeline.answer(request, Principal.anonymous(), route="v2")).json_body()
                answer = json_text(body.get("answer"))
                sources = [json_text(c.get("source")) for c in json_objects(body.get("citations"))]
                figure, gold = q["expected_figure"], q["gold_file"]
                rows.append(
                    {
                        "id": q["id"],
                        "kind": q["kind"],
                        "question": q["question"],
                        "expected_figure": figure,
                        "gold_file": gold,
                        "states_figure": (figure in answer) if figure else None,
                        "cites_gold": any(s and s.endswith(gold) for s in sources) if gold else None,
                        "verification": json_field(body.get("faithfulness"), "verification"),
                        "not_found": NOT_FOUND_FRAMING in answer if q["kind"] == "not_found" else None,
                        "claims": [c.get("verdict") for c in json_objects(body.get("claims"))],
                        "latency_ms": round((time.perf_counter() - t0) * 1000, 1),
                        "answer": answer,
                    }
                )
            return rows

        rows = asyncio.run(ask_all())
    full = [r["verification"] == "full" for r in rows]
    full_rate = round(100.0 * sum(full) / len(full), 1)
    summary = {
        "questions": len(rows),
        "states_figure": rate(rows, "states_figure"),
        "cites_gold": rate(rows, "cites_gold"),
        "verification_full": {"hits": sum(full), "total": len(full), "rate": full_rate},
        "not_found_framed": rate(rows, "not_found"),
        "claims_per_answer": round(statistics.mean(len(r["claims"]) for r in rows), 2),
        "unsupported_claims": sum(c != "supported" for r in rows for c in r["claims"]),
        "latency_ms_p50": round(percentile([r["latency_ms"] for r in rows], 0.5), 1),
    }
    return {"ingest_s": ingest_s, "summary": summary, "rows": rows}


def demo_markdown(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = [
        "# Agent quality on the demo corpus (embedded agent and judge, whole pipeline)",
        "",
        run_line(result) + f"ingest {result['ingest_s']} s",
        "",
        *rate_table(
            s,
            (
                ("states_figure", "answer contains expected_figure"),
                ("cites_gold", "answer cites gold_file"),
                ("verification_full", "verification 'full'"),
                ("not_found_framed", "not_found questions answered with the not-found framing"),
            ),
        ),
    ]
    lines += [
        "",
        f"Claims per answer {s['claims_per_answer']} (mean), unsupported claims {s['unsupported_claims']}, "
        f"latency p50 {s['latency_ms_p50']} ms.",
        "",
        *markdown_table(
            ("id", "figure", "cites gold", "verification", "claims"),
            ((r["id"], *_marks(r), r["verification"], _verdicts(r["claims"])) for r in result["rows"]),
        ),
    ]
    return "\n".join(lines) + "\n"


def _marks(row: dict[str, Any]) -> list[str]:
    return [MARK[row["states_figure"]], MARK[row["cites_gold"]]]


def _verdicts(claims: list[str]) -> str:
    return " ".join("✓" if c == "supported" else "✗" for c in claims) or "–"
