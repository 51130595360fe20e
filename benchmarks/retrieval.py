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
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import (
    QUICK,
    RECORD_FIELDS,
    RESULTS,
    Figure,
    Result,
    atomic_write,
    command,
    now,
    percentile,
    write_result,
)
from benchmarks.retrieval_quality import DATA, THREADS, bench_encoder, load_qa, quality
from benchmarks.retrieval_report import markdown as report_markdown
from models.embeddings import Encoder, SentenceTransformerEncoder
from models.onnx_encoder import OnnxEncoder
from retrieval.fusion import rrf
from retrieval.ingest import ingest
from retrieval.rerankers import FeatureReranker
from retrieval.retriever import Retriever
from retrieval.store import IncompatibleIndexError, IndexMissingError, built_encoder, read_manifest

ROOT = Path(__file__).resolve().parents[1]


# -- speed --------------------------------------------------------------------------------------------------
def _latency(fn: Any, items: list[Any], retriever: Retriever | None = None) -> dict[str, float]:
    if retriever is not None:
        retriever.clear_cache()  # every stage pays its own query encoding
    times = []
    for item in items:
        t = time.perf_counter()
        fn(item)
        times.append(time.perf_counter() - t)
    return {
        "p50_ms": round(percentile(times, 0.5) * 1000, 2),
        "p95_ms": round(percentile(times, 0.95) * 1000, 2),
        "qps": round(len(times) / sum(times), 1),
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
        built = built_encoder(read_manifest(index))
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
            out[name][f"{key}_median"] = percentile(out[name][key], 0.5)
    return out


PARTS = ("quality", "speed", "encoders", "numba")


def figures(result: dict[str, Any]) -> dict[str, Figure]:
    """Headline: hybrid + rerank against BM25 on valid questions, ingest time, query p50, the peer ratio."""
    out: dict[str, Figure] = {}
    if "quality" in result:
        valid = result["quality"]["valid"]
        best = valid.get("hybrid_rerank") or valid.get("hybrid")
        if best and "bm25" in valid:
            out["R@10 vs BM25"] = f"{best['recall@10']:.1f} / {valid['bm25']['recall@10']:.1f}"
    if "speed" in result:
        speed = result["speed"]
        out["ingest"] = f"{speed['ingest_s']:.0f} s"
        out["query p50"] = f"{speed['stages_single']['hybrid_rerank']['p50_ms']} ms"
        out["vs naive peer"] = f"{speed['speedup_qps_vs_peer']}x"
    return out


def _record(result: dict[str, Any], argv: list[str] | None) -> Result:
    """Parts measured by separate runs keep each run's date and command under ``run``; the record's date is
    the newest part's."""
    details = {k: v for k, v in result.items() if k not in RECORD_FIELDS}
    dates = [v["run"]["date"] for v in details.values() if isinstance(v, dict) and "date" in v.get("run", {})]
    return Result(
        benchmark="retrieval",
        figures=figures(details),
        in_sample=False,
        data="IDK-MRC + TyDiQA-id valid; legal corpus",
        command=command("retrieval", argv),
        details=details,
        date=max(dates, default=now()),
    )


def main(argv: list[str] | None = None) -> int:
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
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"shared data not found at {DATA}", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(THREADS)
    out_path = RESULTS / (args.out or "retrieval.json")
    if args.quick and not args.out:
        out_path = QUICK / "retrieval.json"
    result: dict[str, Any] = json.loads(out_path.read_text()) if out_path.exists() else {}
    # parts kept from an earlier run keep that run's command and date
    for part in PARTS:
        if part in result and "run" not in result[part]:
            result[part]["run"] = {k: result[k] for k in ("date", "command") if k in result}
    this_run = {"date": now(), "command": command("retrieval", argv)}

    def save() -> dict[str, Any]:
        record = _record(result, argv)
        write_result(record, out_path)
        return record.to_json()

    if args.merge:
        # Parts measured by separate runs (quality and speed ran as two processes): keep each run's header.
        other = json.loads((RESULTS / args.merge).read_text())
        for part in PARTS:
            if part in other:
                result[part] = {
                    **other[part],
                    "run": other[part].get("run") or {k: other[k] for k in ("date", "command") if k in other},
                }
    else:
        result.update({"threads": THREADS, "runs": 1})
        if args.numba_check:
            result["numba"] = {**numba_check(), "run": this_run}
        if args.encoder_check:
            result["encoders"] = {**encoder_check(), "run": this_run}
        with tempfile.TemporaryDirectory(prefix="aceh-bench-") as tmp:
            if args.part in ("quality", "all"):
                result["quality"] = {**quality(args.quick, args.tune, Path(tmp)), "run": this_run}
                save()
            if args.part in ("speed", "all"):
                keep = Path(args.keep_index) if args.keep_index else None
                result["speed"] = {**speed(args.quick, Path(tmp), keep), "run": this_run}
    markdown = report_markdown(save())
    if not args.quick:
        atomic_write(RESULTS / "retrieval.md", markdown)
    print(markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
