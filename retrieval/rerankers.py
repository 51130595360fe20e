"""Second-stage rerankers over fused candidates, behind one interface.

Contract of :class:`Reranker`: ``rerank`` returns the given hits (no new ones), re-scored and sorted best
first, each with ``score`` set to the reranker's score and ``stages["reranked"] = {"rank", "score"}``;
the other stages are kept. ``bind`` hands the reranker the index's corpus statistics once, at load.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from models.embeddings import local_model_dir
from retrieval.legal import LegalRef, find_references
from retrieval.types import Chunk, SearchHit


class CorpusStats(Protocol):
    def idf(self, term: str) -> float: ...

    def analyze(self, text: str) -> list[str]: ...

    def chunk_terms(self, chunk: Chunk) -> list[str] | None: ...


class RerankerUnavailable(RuntimeError):
    pass


class Reranker(ABC):
    name: str = "reranker"

    def bind(self, stats: CorpusStats) -> None:  # noqa: B027 - optional hook
        """Receive the index's term statistics (idf, analyzer)."""

    @abstractmethod
    def rerank(self, query: str, hits: list[SearchHit], *, top_k: int | None = None) -> list[SearchHit]:
        """The hits re-scored, best first (the first ``top_k`` when given)."""


def _finish(hits: list[SearchHit], scores: list[float], top_k: int | None) -> list[SearchHit]:
    order = sorted(range(len(hits)), key=lambda i: -scores[i])
    if top_k is not None:
        order = order[:top_k]
    out = []
    for rank, i in enumerate(order, start=1):
        stages = dict(hits[i].stages)
        stages["reranked"] = {"rank": rank, "score": float(scores[i])}
        out.append(replace(hits[i], score=float(scores[i]), stages=stages))
    return out


def legal_match(refs: list[LegalRef], chunk: Chunk) -> tuple[float, float]:
    """(article, document) match of a chunk against the references a query names: article is 1 for the
    named Pasal (and ayat, when named) of the named regulation, 0.5 for its Penjelasan or another ayat;
    document is 1 when the chunk belongs to the named regulation."""
    article = document = 0.0
    reference = chunk.legal_reference or ""
    ident = chunk.identity
    for ref in refs:
        same_doc = ref.names_document and ref.same_document(ident.doc_type, ident.number, ident.year)
        if same_doc:
            document = 1.0
        if not ref.pasal or (ref.names_document and not same_doc):
            continue
        if not re.search(rf"\bPasal {re.escape(ref.pasal)}\b(?! sampai)", reference):
            continue
        level = 0.5 if "Penjelasan" in reference else 1.0
        if ref.ayat and f"ayat ({ref.ayat})" not in reference and " ayat (" in reference:
            level = min(level, 0.5)
        article = max(article, level)
    return article, document


# Weights fitted on 1,000 IDK-MRC/TyDiQA-id *train* questions over 4,278 pooled passages by
# `python -m benchmarks.retrieval --part quality --tune` (coordinate ascent on MRR@10; "phrases" came out 0).
# The legal weights are not fitted: they are set so that a named article outranks everything else.
DEFAULT_WEIGHTS: dict[str, float] = {
    "article": 20.0,
    "document": 4.0,
    "figures": 0.25,
    "coverage": 2.0,
    "proximity": 0.25,
    "phrases": 0.0,
    "dense": 2.0,
    "bm25": 1.0,
    "fused": 0.0,
    "title": 0.0,
    "table": 2.0,
}


class FeatureReranker(Reranker):
    """The embedded reranker: a linear model over cheap, real relevance features.

    * ``article`` / ``document``: the query names this chunk's Pasal (ayat) / regulation (see legal_match)
    * ``figures``: share of the query's numbers (amounts, years, reference numbers) present in the chunk
    * ``coverage``: idf-weighted share of the query's terms present in the chunk (text + context)
    * ``proximity``: matched distinct terms / length of the smallest window holding them all (0 if < 2)
    * ``phrases``: share of the query's adjacent term pairs that are adjacent in the chunk
    * ``dense``: cosine between query and chunk vectors; ``bm25`` and ``fused``: the first-stage scores,
      divided by their maximum over the candidates
    * ``title`` / ``table``: the query names this chunk's document by its title words / this table row by
      the words of one of its cells (the retriever's ``title`` and ``table`` stages)."""

    name = "feature-v1"

    def __init__(self, weights: dict[str, float] | None = None, *, cache_size: int = 20000) -> None:
        self.weights = {**DEFAULT_WEIGHTS, **(weights or {})}
        self._stats: CorpusStats | None = None
        self._cache: OrderedDict[str, list[str]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._local = threading.local()

    def bind(self, stats: CorpusStats) -> None:
        self._stats = stats

    def _analyze(self, text: str) -> list[str]:
        if self._stats is not None:
            return self._stats.analyze(text)
        analyzer = getattr(self._local, "analyzer", None)
        if analyzer is None:
            from retrieval.text import IndonesianAnalyzer

            analyzer = self._local.analyzer = IndonesianAnalyzer()
        return analyzer(text)

    def _chunk_terms(self, chunk: Chunk) -> list[str]:
        if self._stats is not None:
            stored = self._stats.chunk_terms(chunk)
            if stored is not None:
                return stored
        with self._lock:
            terms = self._cache.get(chunk.chunk_id)
            if terms is not None:
                self._cache.move_to_end(chunk.chunk_id)
                return terms
        terms = self._analyze(f"{chunk.context}\n{chunk.text}" if chunk.context else chunk.text)
        with self._lock:
            self._cache[chunk.chunk_id] = terms
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return terms

    def features(
        self, query: str, hits: list[SearchHit], *, all_features: bool = True
    ) -> list[dict[str, float]]:
        """Every feature of every hit (for tuning), or with ``all_features=False`` only those the weights use
        (a feature weighted 0 is 0 in the score whatever its value, so it is not computed)."""
        needed = {name for name, weight in self.weights.items() if all_features or weight}
        q_terms = list(dict.fromkeys(self._analyze(query)))
        idf = {t: (self._stats.idf(t) if self._stats else 1.0) or 0.1 for t in q_terms}
        total_idf = sum(idf.values()) or 1.0
        numbers = [t for t in q_terms if t[:1].isdigit()]
        ordered = self._analyze(query)
        q_pairs = set(zip(ordered, ordered[1:]))
        refs = [r for r in find_references(query) if r.pasal or r.names_document]
        max_bm25 = max((_stage(h, "bm25") for h in hits), default=0.0) or 1.0
        max_fused = max((_stage(h, "fused") for h in hits), default=0.0) or 1.0
        rows = []
        for hit in hits:
            terms = self._chunk_terms(hit.chunk)
            present = set(terms)
            matched = [t for t in q_terms if t in present]
            article, document = legal_match(refs, hit.chunk) if refs else (0.0, 0.0)
            rows.append(
                {
                    "article": article,
                    "document": document,
                    "figures": (sum(1 for n in numbers if n in present) / len(numbers)) if numbers else 0.0,
                    "coverage": sum(idf[t] for t in matched) / total_idf,
                    "proximity": _proximity(terms, set(matched)) if "proximity" in needed else 0.0,
                    "phrases": _phrases(q_pairs, terms) if "phrases" in needed else 0.0,
                    "dense": _stage(hit, "dense"),
                    "bm25": _stage(hit, "bm25") / max_bm25,
                    "fused": _stage(hit, "fused") / max_fused,
                    "title": _stage(hit, "title"),
                    "table": _stage(hit, "table"),
                }
            )
        return rows

    def rerank(self, query: str, hits: list[SearchHit], *, top_k: int | None = None) -> list[SearchHit]:
        rows = self.features(query, hits, all_features=False)
        scores = [sum(self.weights.get(name, 0.0) * value for name, value in row.items()) for row in rows]
        return _finish(hits, scores, top_k)


def _stage(hit: SearchHit, stage: str) -> float:
    value = hit.stages.get(stage, {}).get("score")
    return float(value) if value is not None else 0.0


def _phrases(pairs: set[tuple[str, str]], terms: list[str]) -> float:
    """Share of the query's adjacent term pairs that are adjacent in the chunk too."""
    if not pairs:
        return 0.0
    return len(pairs & set(zip(terms, terms[1:]))) / len(pairs)


def _proximity(terms: list[str], wanted: set[str]) -> float:
    if len(wanted) < 2:
        return 0.0
    positions = [(i, t) for i, t in enumerate(terms) if t in wanted]
    counts: dict[str, int] = {}
    best = len(terms) + 1
    left = 0
    for right, (pos, term) in enumerate(positions):
        counts[term] = counts.get(term, 0) + 1
        while len(counts) == len(wanted):
            best = min(best, pos - positions[left][0] + 1)
            left_term = positions[left][1]
            counts[left_term] -= 1
            if counts[left_term] == 0:
                del counts[left_term]
            left += 1
    return min(1.0, len(wanted) / best) if best <= len(terms) else 0.0


class CrossEncoderReranker(Reranker):
    """A sentence-transformers CrossEncoder loaded from a local directory (the GPU configuration).

    The score is the cross-encoder's relevance logit plus the same legal article/document bonuses as the
    embedded reranker, so a named article still comes first."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        max_length: int = 512,
        legal_weights: tuple[float, float] = (20.0, 4.0),
    ) -> None:
        path = local_model_dir(model_path)
        import torch
        from sentence_transformers import CrossEncoder

        if not (path / "config.json").exists():
            raise RerankerUnavailable(f"no cross-encoder model at {path}")
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise RerankerUnavailable(f"reranker device {device!r} requested but no CUDA GPU is visible")
        self._model = CrossEncoder(str(path), device=device, max_length=max_length, local_files_only=True)
        self.batch_size = batch_size
        self.legal_weights = legal_weights
        self.name = f"cross-encoder:{path.name}"
        self._lock = threading.Lock()

    def rerank(self, query: str, hits: list[SearchHit], *, top_k: int | None = None) -> list[SearchHit]:
        if not hits:
            return []
        pairs = [
            (query, f"{h.chunk.context}\n{h.chunk.text}" if h.chunk.context else h.chunk.text) for h in hits
        ]
        with self._lock:
            logits = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        refs = [r for r in find_references(query) if r.pasal or r.names_document]
        scores = []
        for hit, logit in zip(hits, logits):
            article, document = legal_match(refs, hit.chunk) if refs else (0.0, 0.0)
            scores.append(float(logit) + self.legal_weights[0] * article + self.legal_weights[1] * document)
        return _finish(hits, scores, top_k)
