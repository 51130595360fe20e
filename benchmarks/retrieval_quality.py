"""The quality part of benchmarks/retrieval.py: IDK-MRC + TyDiQA-id passages and questions, Recall@k, MRR@10
and nDCG@10 per stage, optional tuning on train; and the encoder every retrieval benchmark uses."""

from __future__ import annotations

import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

from benchmarks.harness import shared_data
from models.embeddings import DEFAULT_MAX_SEQ_LENGTH, Encoder, SentenceTransformerEncoder
from models.onnx_encoder import OnnxEncoder
from retrieval.ingest import ingest
from retrieval.rerankers import DEFAULT_WEIGHTS, FeatureReranker
from retrieval.retriever import DEFAULT_RRF_K, Retriever

DATA = shared_data()
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
