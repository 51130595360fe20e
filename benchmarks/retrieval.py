"""Retrieval benchmark: quality on Indonesian QA passages, speed on the full Indonesian legal corpus.

    .venv/bin/python -m benchmarks.retrieval [--part quality|speed|all] [--quick] [--tune]

quality: the gold passages of the IDK-MRC and TyDiQA-GoldP-id *valid* splits pooled as the corpus, each
answerable question's own passage as its single relevant item; Recall@1/5/10, MRR@10, nDCG@10 for BM25,
dense, RRF hybrid and hybrid + rerank. ``--tune`` first picks the RRF k / dense weight and the reranker
weights on a sample of the *train* split (coordinate ascent on MRR@10), then reports valid with them.
speed: ingest of ../shared/data/indo_legal_corpus (throughput, index size, peak memory), then per-stage
query latency (single and batched) against a naive peer (rank_bm25 + brute-force numpy cosine + the same
RRF) on the same chunks and vectors. ``--encoder-check``: the torch and ONNX Runtime CPU encoders side by
side. Writes benchmarks/results/retrieval.json and retrieval.md (with retrieval_notes.md appended).
The encoder is the service's CPU default; ACEH_BENCH_RUNTIME=torch, ACEH_BENCH_SEQ=N and ACEH_BENCH_INT8=0
change it for side-by-side experiments.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import resource
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from models.embeddings import DEFAULT_MAX_SEQ_LENGTH, Encoder, SentenceTransformerEncoder
from models.onnx_encoder import OnnxEncoder
from models.rerankers import DEFAULT_WEIGHTS, FeatureReranker
from retrieval.fusion import rrf
from retrieval.ingest import ingest
from retrieval.retriever import DEFAULT_RRF_K, Retriever
from retrieval.store import IncompatibleIndexError, IndexMissingError, read_manifest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ACEH_SHARED_DATA", ROOT / ".." / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results"
# word pieces the encoder keeps: the service default unless ACEH_BENCH_SEQ says otherwise (experiments)
ENCODER_SEQ = int(os.environ.get("ACEH_BENCH_SEQ", DEFAULT_MAX_SEQ_LENGTH))
THREADS = 2


QUANTIZE = os.environ.get("ACEH_BENCH_INT8", "1") == "1"  # the encoder's CPU default; 0 for float32
# what runs the encoder: onnx (the service's CPU default) or torch (for side-by-side runs)
RUNTIME = os.environ.get("ACEH_BENCH_RUNTIME", "onnx")


def bench_encoder() -> Encoder:
    """The service's CPU encoder (or the one ACEH_BENCH_RUNTIME / _SEQ / _INT8 ask for)."""
    if RUNTIME == "torch":
        return SentenceTransformerEncoder(max_seq_length=ENCODER_SEQ, num_threads=THREADS, quantize=QUANTIZE)
    return OnnxEncoder(max_seq_length=ENCODER_SEQ, num_threads=THREADS, quantize=QUANTIZE)


# -- quality ------------------------------------------------------------------------------------------------
def load_qa(split: str) -> tuple[list[str], list[tuple[str, int]]]:
    passages: dict[str, int] = {}
    questions: dict[str, tuple[str, int]] = {}
    for name in ("idk_mrc", "tydiqa_id_goldp"):
        for item in json.loads((DATA / "qa_idk_mrc_tydiqa_id" / name / f"{split}.json").read_text()):
            pid = passages.setdefault(item["context"].strip(), len(passages))
            for qa in item["qas"]:
                if not qa.get("is_impossible") and qa["id"] not in questions:
                    questions[qa["id"]] = (qa["question"], pid)
    return list(passages), list(questions.values())


def metrics(ranked: list[list[int]], gold: list[int]) -> dict[str, float]:
    out = {"recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.0, "mrr@10": 0.0, "ndcg@10": 0.0}
    for ranks, g in zip(ranked, gold):
        pos = ranks.index(g) + 1 if g in ranks[:10] else None
        if pos:
            out["recall@1"] += pos <= 1
            out["recall@5"] += pos <= 5
            out["recall@10"] += 1
            out["mrr@10"] += 1 / pos
            out["ndcg@10"] += 1 / math.log2(pos + 1)
    return {k: round(100 * v / len(gold), 2) for k, v in out.items()}


def _passage_ranks(hits_lists: list[list[Any]]) -> list[list[int]]:
    out = []
    for hits in hits_lists:
        seen: list[int] = []
        for hit in hits:
            pid = int(Path(hit.chunk.source).stem[1:])
            if pid not in seen:
                seen.append(pid)
        out.append(seen)
    return out


def _build_qa_index(passages: list[str], work: Path, encoder: Encoder) -> Path:
    corpus = work / "corpus"
    corpus.mkdir(parents=True)
    for i, text in enumerate(passages):
        (corpus / f"p{i:05d}.txt").write_text(text + "\n", encoding="utf-8")
    index = work / "index"
    ingest([corpus], index, encoder=encoder, progress=True)
    return index


def _evaluate(retriever: Retriever, questions: list[tuple[str, int]]) -> dict[str, dict[str, float]]:
    queries = [q for q, _ in questions]
    gold = [g for _, g in questions]
    out = {}
    for label, kwargs in (
        ("bm25", {"mode": "bm25"}),
        ("dense", {"mode": "dense"}),
        ("hybrid_rrf", {"rerank": False}),
        ("hybrid_rerank", {}),
    ):
        hits = []
        for start in range(0, len(queries), 64):
            hits.extend(retriever.search_many(queries[start : start + 64], top_k=20, **kwargs))
        out[label] = metrics(_passage_ranks(hits), gold)
    return out


def _tune(retriever: Retriever, questions: list[tuple[str, int]]) -> dict[str, Any]:
    """RRF k and dense weight by grid, then reranker weights by coordinate ascent, all on MRR@10."""
    queries = [q for q, _ in questions]
    gold = [g for _, g in questions]
    best: tuple[float, int, float] = (-1.0, 60, 1.0)
    for k in (5, 10, 20, 60):
        for w in (0.1, 0.2, 0.3, 0.5, 1.0):
            retriever.rrf_k, retriever.weights["dense"] = k, w
            hits = retriever.search_many(queries, top_k=20, rerank=False)
            score = metrics(_passage_ranks(hits), gold)["mrr@10"]
            if score > best[0]:
                best = (score, k, w)
    retriever.rrf_k, retriever.weights["dense"] = best[1], best[2]
    candidates = retriever.search_many(queries, top_k=retriever.candidates, rerank=False, provenance=True)
    reranker = retriever.reranker
    assert isinstance(reranker, FeatureReranker)
    feats = [reranker.features(q, hits) for q, hits in zip(queries, candidates)]
    names = ["figures", "coverage", "proximity", "phrases", "dense", "bm25", "fused"]

    def mrr(weights: dict[str, float]) -> float:
        ranks = []
        for hits, rows in zip(candidates, feats):
            scores = [sum(weights[n] * row[n] for n in names) for row in rows]
            order = sorted(range(len(hits)), key=lambda i: -scores[i])
            ranks.append([hits[i] for i in order])
        return metrics(_passage_ranks(ranks), gold)["mrr@10"]

    weights = {n: DEFAULT_WEIGHTS[n] for n in names}
    current = mrr(weights)
    for _round in range(3):
        for n in names:
            for value in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0):
                trial = {**weights, n: value}
                score = mrr(trial)
                if score > current + 1e-9:
                    weights, current = trial, score
    return {
        "rrf_k": best[1],
        "dense_weight": best[2],
        "rrf_mrr@10": best[0],
        "reranker_weights": weights,
        "rerank_mrr@10": current,
    }


def quality(quick: bool, tune: bool, work: Path) -> dict[str, Any]:
    """Valid questions against the valid passages (the specified setting), and, unless quick, against the
    train + valid passages pooled (about 20x more distractors, so Recall@10 is not saturated). With
    ``tune``, fusion and reranker weights are first fitted on 1,000 train questions over that big pool."""
    encoder = bench_encoder()
    result: dict[str, Any] = {"encoder": encoder.name}
    valid_passages, valid_questions = load_qa("valid")
    if quick:
        valid_questions = valid_questions[:200]
    params: dict[str, Any] = {}
    big: Retriever | None = None
    big_questions: list[tuple[str, int]] = []
    if not quick:
        train_passages, train_questions = load_qa("train")
        pool = list(dict.fromkeys(valid_passages + train_passages))
        where = {text: i for i, text in enumerate(pool)}
        big_questions = [(q, where[valid_passages[g]]) for q, g in valid_questions]
        big = Retriever.load(
            _build_qa_index(pool, work / "pool", encoder),
            encoder=encoder,
            reranker=FeatureReranker(),
            candidates=50,
        )
        if tune:
            sample = random.Random(7).sample(train_questions, 1000)
            params = _tune(big, [(q, where[train_passages[g]]) for q, g in sample])
            print("tuned on train:", json.dumps(params), file=sys.stderr)
            result["tuning_train"] = {**params, "questions": len(sample), "passages": len(pool)}
    reranker = FeatureReranker(params.get("reranker_weights"))
    weights = {"dense": params["dense_weight"]} if params else None
    rrf_k = params.get("rrf_k", DEFAULT_RRF_K)  # untuned: the service's defaults
    retriever = Retriever.load(
        _build_qa_index(valid_passages, work / "valid", encoder),
        encoder=encoder,
        reranker=reranker,
        rrf_k=rrf_k,
        weights=weights,
        candidates=50,
    )
    result.update(
        {
            "passages": len(valid_passages),
            "questions": len(valid_questions),
            "rrf_k": rrf_k,
            "weights": retriever.weights,
            "reranker_weights": reranker.weights,
            "valid": _evaluate(retriever, valid_questions),
        }
    )
    if big is not None:
        big.reranker, big.rrf_k, big.weights = reranker, rrf_k, retriever.weights
        reranker.bind(big)
        result["pooled"] = {
            "passages": len(big.documents()),
            "questions": len(big_questions),
            "valid": _evaluate(big, big_questions),
        }
    return result


# -- speed --------------------------------------------------------------------------------------------------
def _latency(fn: Any, items: list[Any], retriever: Retriever | None = None) -> dict[str, float]:
    if retriever is not None:
        retriever.clear_cache()  # every stage pays its own query encoding
    times = []
    for item in items:
        t = time.perf_counter()
        fn(item)
        times.append(time.perf_counter() - t)
    arr = np.array(times) * 1000
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "qps": round(len(times) / (arr.sum() / 1000), 1),
        "n": len(times),
    }


def _queries(retriever: Retriever, n: int) -> list[str]:
    rng = random.Random(11)
    fixed = [
        "Pasal 183 UU 11/2006",
        "dana otonomi khusus Aceh",
        "Qanun Aceh tentang pemerintahan Aceh",
        "Undang-Undang Nomor 33 Tahun 2004 Pasal 10",
        "penerimaan perpajakan APBN 2023",
        "kewenangan pemerintah yang bersifat nasional di Aceh",
        "pajak daerah dan retribusi daerah",
        "pengelolaan keuangan daerah",
        "Badan Pusat Statistik",
        "keterbukaan informasi publik",
    ]
    docs = retriever.documents()
    out = list(fixed)
    while len(out) < n:
        doc = rng.choice(docs)
        chunks = retriever.document_chunks(doc.document_id)
        words = rng.choice(chunks).text.split()
        if len(words) > 12:
            start = rng.randrange(0, len(words) - 8)
            out.append(" ".join(words[start : start + rng.randrange(4, 9)]))
    return out[:n]


def _built_by(index: Path) -> str | None:
    """The encoder name in the manifest of the index at ``index``, or None when there is no readable one."""
    try:
        built = read_manifest(index).get("encoder") or {}
    except (IndexMissingError, IncompatibleIndexError):
        return None
    name = built.get("name")
    return str(name) if name else None


def speed(quick: bool, work: Path, keep_index: Path | None = None) -> dict[str, Any]:
    """``keep_index``: build the index there, or reuse one a previous run left (with its ingest figures)."""
    from rank_bm25 import BM25Okapi

    corpus = DATA / "indo_legal_corpus"
    paths: list[Path] = [corpus]
    if quick:
        paths = [
            corpus / line.strip()
            for line in (corpus / "demo_subset.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")
        ][:8]
    encoder = bench_encoder()
    index = keep_index or work / "legal_index"
    stats_file = index.parent / f"{index.name}.ingest.json"
    built_by = _built_by(index)
    if keep_index and stats_file.exists() and built_by == encoder.name:
        ingest_s, docs, chunks, failed = json.loads(stats_file.read_text())
    else:
        if index.exists():
            # An update would reuse the old chunks (and, with the same encoder, the vectors), but the figure
            # must be a whole ingest: an index without this encoder's recorded figures is built from nothing
            print(f"retrieval: rebuilding {index} (built by {built_by}) with {encoder.name}", file=sys.stderr)
            shutil.rmtree(index)
        t0 = time.perf_counter()
        report = ingest(paths, index, encoder=encoder, progress=True)
        ingest_s = time.perf_counter() - t0
        docs = len(report.added) + len(report.updated) + len(report.unchanged)
        chunks, failed = report.chunks, len(report.failed)
        stats_file.write_text(json.dumps([ingest_s, docs, chunks, failed]))
    ingest_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = sum(f.stat().st_size for f in index.rglob("*") if f.is_file())
    t0 = time.perf_counter()
    reingest = ingest(paths, index, encoder=encoder, progress=False)
    reingest_s = time.perf_counter() - t0
    assert not reingest.written and reingest.encoded == 0
    t0 = time.perf_counter()
    retriever = Retriever.load(index, encoder=encoder, reranker=FeatureReranker())
    load_s = time.perf_counter() - t0
    queries = _queries(retriever, 60 if quick else 200)
    for q in queries[:5]:
        retriever.search(q)  # warm caches
    stages = {
        "encode_query": _latency(lambda q: encoder.encode_queries([q]), queries),
        "bm25": _latency(lambda q: retriever.search(q, mode="bm25"), queries, retriever),
        "dense": _latency(lambda q: retriever.search(q, mode="dense"), queries, retriever),
        "hybrid_rrf": _latency(lambda q: retriever.search(q, rerank=False), queries, retriever),
        "hybrid_rerank": _latency(lambda q: retriever.search(q), queries, retriever),
    }
    retriever.clear_cache()
    t = time.perf_counter()
    for start in range(0, len(queries), 32):
        retriever.search_many(queries[start : start + 32])
    batched_qps = len(queries) / (time.perf_counter() - t)

    # Naive peer on the same chunks and vectors: rank_bm25 + numpy brute force + the same RRF.
    peer_chunks = [
        retriever.chunk(c.chunk_id)
        for d in retriever.documents()
        for c in retriever.document_chunks(d.document_id)
    ]
    t = time.perf_counter()
    peer_bm25 = BM25Okapi([retriever.analyze(f"{c.context}\n{c.text}") or [""] for c in peer_chunks])  # type: ignore[union-attr]
    peer_build_s = time.perf_counter() - t
    vectors = np.array(retriever.dense.vectors)

    def peer(q: str) -> list[int]:
        scores = peer_bm25.get_scores(retriever.analyze(q))
        bm = np.argsort(-scores)[:50].tolist()
        sims = vectors @ encoder.encode_queries([q])[0]
        de = np.argsort(-sims)[:50].tolist()
        return [j for j, _ in rrf({"bm25": bm, "dense": de}, k=60)[:10]]

    peer_q = queries[: 20 if not quick else 10]
    peer_lat = _latency(peer, peer_q)
    ours = stages["hybrid_rerank"]
    return {
        "corpus": "indo_legal_corpus" + (" (demo_subset)" if quick else ""),
        "encoder": encoder.name,
        "documents": docs,
        "failed": failed,
        "chunks": chunks,
        "ingest_s": round(ingest_s, 1),
        "docs_per_s": round(docs / ingest_s, 2),
        "chunks_per_s": round(chunks / ingest_s, 1),
        "reingest_unchanged_s": round(reingest_s, 2),
        "index_mb": round(size / 1e6, 1),
        "load_s": round(load_s, 2),
        "dense_index": retriever.manifest["dense_index"],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "ingest_peak_rss_mb": round(ingest_rss, 1),
        "stages_single": stages,
        "hybrid_rerank_batched_qps": round(batched_qps, 1),
        "peer": {"build_s": round(peer_build_s, 1), **peer_lat},
        "speedup_qps_vs_peer": round(ours["qps"] / peer_lat["qps"], 1),
    }


def numba_check() -> dict[str, float]:
    """bm25s numba backend vs numpy on a synthetic 20,000-document corpus: first-query JIT cost and the
    per-query time after it (the JIT is paid again by every new process)."""
    import bm25s

    rng = np.random.default_rng(0)
    docs = [[str(x) for x in rng.integers(0, 5000, 80)] for _ in range(20000)]
    queries = [[str(x) for x in rng.integers(0, 5000, 5)] for _ in range(50)]
    out: dict[str, float] = {}
    for backend in ("numpy", "numba"):
        model = bm25s.BM25(backend=backend)
        model.index(docs, show_progress=False)
        t = time.perf_counter()
        model.retrieve(queries[:1], k=50, show_progress=False)
        out[f"{backend}_first_query_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        model.retrieve(queries, k=50, show_progress=False)
        out[f"{backend}_ms_per_query"] = round((time.perf_counter() - t) / len(queries) * 1000, 3)
    return out


def encoder_check(rounds: int = 3) -> dict[str, Any]:
    """The CPU encoders side by side, rounds interleaved (this host is shared and noisy): one question at a
    time (the query path) and passages in batches (ingest), plus how close each int8 encoder's vectors are
    to the float32 model's (cosine, the same text)."""
    passages, questions = load_qa("valid")
    texts, queries = passages[:512], [q for q, _ in questions[:200]]
    encoders: dict[str, Encoder] = {
        "torch int8": SentenceTransformerEncoder(num_threads=THREADS),
        "onnx int8": OnnxEncoder(num_threads=THREADS),
    }
    reference = SentenceTransformerEncoder(num_threads=THREADS, quantize=False).encode(texts)
    out: dict[str, Any] = {"texts": len(texts), "queries": len(queries), "rounds": rounds}
    for name, enc in encoders.items():
        cos = (enc.encode(texts) * reference).sum(axis=1)
        out[name] = {
            "cos_to_fp32_mean": round(float(cos.mean()), 4),
            "cos_to_fp32_min": round(float(cos.min()), 4),
            "query_p50_ms": [],
            "batch_texts_per_s": [],
        }
    for _ in range(rounds):
        for name, enc in encoders.items():
            out[name]["query_p50_ms"].append(
                _latency(lambda q, e=enc: e.encode_queries([q]), queries)["p50_ms"]
            )
            t = time.perf_counter()
            enc.encode(texts)
            out[name]["batch_texts_per_s"].append(round(len(texts) / (time.perf_counter() - t), 1))
    for name in encoders:
        for key in ("query_p50_ms", "batch_texts_per_s"):
            out[name][f"{key}_median"] = float(np.median(out[name][key]))
    return out


def _markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Retrieval benchmark\n\n`{result['command']}` on {result['machine']}, {result['threads']} torch "
        f"threads, {result['date']}, one run.\n"
    ]
    q = result.get("quality")
    if q:
        if "run" in q:
            lines.append(f"Quality measured by `{q['run'].get('command')}` at {q['run'].get('date')}.\n")
        lines.append(
            f"## Quality (IDK-MRC + TyDiQA-id valid: {q['passages']} pooled passages, {q['questions']} "
            f"answerable questions; encoder {q['encoder']}; rrf_k={q['rrf_k']}, weights={q['weights']})\n"
        )
        lines.append("| stage | R@1 | R@5 | R@10 | MRR@10 | nDCG@10 |\n|---|---|---|---|---|---|")
        for stage, m in q["valid"].items():
            lines.append(
                f"| {stage} | {m['recall@1']} | {m['recall@5']} | {m['recall@10']} | {m['mrr@10']} | "
                f"{m['ndcg@10']} |"
            )
        if "pooled" in q:
            pooled = q["pooled"]
            lines.append(
                f"\nSame questions, train + valid passages pooled ({pooled['passages']} passages):\n"
            )
            lines.append("| stage | R@1 | R@5 | R@10 | MRR@10 | nDCG@10 |\n|---|---|---|---|---|---|")
            for stage, m in pooled["valid"].items():
                lines.append(
                    f"| {stage} | {m['recall@1']} | {m['recall@5']} | {m['recall@10']} | {m['mrr@10']} | "
                    f"{m['ndcg@10']} |"
                )
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=("quality", "speed", "all", "none"), default="all")
    parser.add_argument("--quick", action="store_true", help="small subsets, under a minute or two")
    parser.add_argument("--tune", action="store_true", help="tune fusion and reranker weights on train first")
    parser.add_argument("--numba-check", action="store_true", help="measure bm25s numba vs numpy backends")
    parser.add_argument("--encoder-check", action="store_true", help="torch vs ONNX Runtime encoders")
    parser.add_argument("--keep-index", default=None, help="speed: build the legal index here, or reuse it")
    parser.add_argument("--out", default=None, help="results JSON name (default retrieval.json)")
    parser.add_argument(
        "--merge", default=None, help="copy the parts of this results JSON in, redo the table"
    )
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"shared data not found at {DATA}")
    import torch

    torch.set_num_threads(THREADS)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out_path = RESULTS / (args.out or ("retrieval_quick.json" if args.quick else "retrieval.json"))
    result: dict[str, Any] = json.loads(out_path.read_text()) if out_path.exists() else {}
    # parts kept from an earlier run keep that run's command and date
    for part in ("quality", "speed", "encoders"):
        if part in result and "run" not in result[part]:
            result[part]["run"] = {k: result[k] for k in ("date", "command") if k in result}
    if args.merge:
        # Parts measured by separate runs (quality and speed ran as two processes): keep each run's header.
        other = json.loads((RESULTS / args.merge).read_text())
        for part in ("quality", "speed", "encoders"):
            if part in other:
                result[part] = {
                    **other[part],
                    "run": {k: other[k] for k in ("date", "command") if k in other},
                }
        out_path.write_text(json.dumps(result, indent=1, ensure_ascii=False))
        (RESULTS / "retrieval.md").write_text(_markdown(result))
        print(_markdown(result))
        return
    result.update(
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}",
            "command": " ".join(["python -m benchmarks.retrieval", *sys.argv[1:]]),
            "threads": THREADS,
            "runs": 1,
        }
    )
    if args.numba_check:
        result["numba"] = numba_check()
    if args.encoder_check:
        result["encoders"] = encoder_check()
    with tempfile.TemporaryDirectory(prefix="aceh-bench-") as tmp:
        if args.part in ("quality", "all"):
            result["quality"] = quality(args.quick, args.tune, Path(tmp))
            (out_path).write_text(json.dumps(result, indent=1, ensure_ascii=False))
        if args.part in ("speed", "all"):
            keep = Path(args.keep_index) if args.keep_index else None
            result["speed"] = speed(args.quick, Path(tmp), keep)
    out_path.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    markdown = _markdown(result)
    if not args.quick:
        (RESULTS / "retrieval.md").write_text(markdown)
    print(markdown)


if __name__ == "__main__":
    main()
