"""The Markdown report of benchmarks/retrieval.py (results/retrieval.md): its tables, then the hand-written
notes of results/retrieval_notes.md."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.harness import RESULTS, machine_summary


def _stage_table(by_stage: dict[str, dict[str, float]]) -> list[str]:
    lines = ["| stage | R@1 | R@5 | R@10 | MRR@10 | nDCG@10 |\n|---|---|---|---|---|---|"]
    for stage, m in by_stage.items():
        cells = [m[key] for key in ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")]
        lines.append(f"| {stage} | " + " | ".join(str(c) for c in cells) + " |")
    return lines


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Retrieval benchmark\n\n`{result['command']}` on {machine_summary(result['machine'])}, "
        f"{result['threads']} torch threads, {result['date']}, one run.\n"
    ]
    q = result.get("quality")
    if q:
        if "run" in q:
            lines.append(f"Quality measured by `{q['run'].get('command')}` at {q['run'].get('date')}.\n")
        lines.append(
            f"## Quality (IDK-MRC + TyDiQA-id valid: {q['passages']} pooled passages, {q['questions']} "
            f"answerable questions; encoder {q['encoder']}; rrf_k={q['rrf_k']}, weights={q['weights']})\n"
        )
        lines += _stage_table(q["valid"])
        if "pooled" in q:
            pooled = q["pooled"]
            lines.append(
                f"\nSame questions, train + valid passages pooled ({pooled['passages']} passages):\n"
            )
            lines += _stage_table(pooled["valid"])
        if "tuning_train" in q:
            lines.append(f"\nTuned on a train sample: `{json.dumps(q['tuning_train'])}`\n")
    s = result.get("speed")
    if s:
        if "run" in s:
            lines.append(f"\nSpeed measured by `{s['run'].get('command')}` at {s['run'].get('date')}.")
        lines.append(f"\n## Speed ({s['corpus']}: {s['documents']} documents, {s['chunks']} chunks)\n")
        lines.append(
            f"Ingest {s['ingest_s']} s ({s['docs_per_s']} docs/s, {s['chunks_per_s']} chunks/s), "
            f"re-ingest unchanged {s['reingest_unchanged_s']} s, index {s['index_mb']} MB "
            f"({s['dense_index']}), load {s['load_s']} s, peak RSS {s['peak_rss_mb']} MB.\n"
        )
        lines.append("| stage (single query) | p50 ms | p95 ms | queries/s |\n|---|---|---|---|")
        for stage, m in s["stages_single"].items():
            lines.append(f"| {stage} | {m['p50_ms']} | {m['p95_ms']} | {m['qps']} |")
        p = s["peer"]
        lines.append(f"| naive peer (rank_bm25 + numpy + RRF) | {p['p50_ms']} | {p['p95_ms']} | {p['qps']} |")
        lines.append(
            f"\nHybrid + rerank batched (32 per call): {s['hybrid_rerank_batched_qps']} queries/s; "
            f"single-query speed-up over the peer: {s['speedup_qps_vs_peer']}x.\n"
        )
    n = result.get("numba")
    if n:
        lines.append(
            f"\nbm25s backends (20,000 synthetic documents): numpy {n['numpy_ms_per_query']} ms/query; "
            f"numba {n['numba_ms_per_query']} ms/query after a first query of {n['numba_first_query_s']} s "
            "(JIT, paid by every new process), so the index uses numpy.\n"
        )
    e = result.get("encoders")
    if e:
        lines.append(
            f"\n## CPU encoders side by side ({e['queries']} questions one at a time, {e['texts']} passages "
            f"in batches, {e['rounds']} interleaved rounds, medians)\n"
        )
        if "run" in e:
            lines.append(f"Measured by `{e['run'].get('command')}` at {e['run'].get('date')}.\n")
        lines.append(
            "| encoder | query p50 ms | passages/s | cosine to float32 (mean / min) |\n|---|---|---|---|"
        )
        for name in ("torch int8", "onnx int8"):
            m = e[name]
            lines.append(
                f"| {name} | {m['query_p50_ms_median']} | {m['batch_texts_per_s_median']} | "
                f"{m['cos_to_fp32_mean']} / {m['cos_to_fp32_min']} |"
            )
    notes = RESULTS / "retrieval_notes.md"  # written by hand: what the tables mean, and their caveats
    if notes.is_file():
        lines.append("\n" + notes.read_text(encoding="utf-8").rstrip())
    return "\n".join(lines) + "\n"
