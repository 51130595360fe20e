"""BM25 over chunk terms with bm25s (Lucene BM25 variant, eager sparse scores), memory-mapped on load.

bm25s precomputes each (term, chunk) score into a CSC matrix, so a query is a sum of a few columns. The
numpy backend is used: measured on this corpus, the numba backend's JIT costs seconds at every process
start for a gain below a millisecond per query (see benchmarks/results/retrieval.md)."""

from __future__ import annotations

import math
from pathlib import Path

import bm25s
import numpy as np

TERMS_FILE = "chunk_terms.npy"
OFFSETS_FILE = "chunk_term_offsets.npy"


class LexicalIndex:
    def __init__(
        self, bm25: bm25s.BM25, terms: np.ndarray | None = None, offsets: np.ndarray | None = None
    ) -> None:
        self._bm25 = bm25
        self._vocab: dict[str, int] = bm25.vocab_dict
        self._words = [""] * (max(self._vocab.values(), default=0) + 1)
        for word, tid in self._vocab.items():
            self._words[tid] = word
        # Each chunk's analysed terms in order (flat ids + offsets), for the reranker's proximity features.
        self._terms = terms
        self._offsets = offsets
        indptr = np.asarray(bm25.scores["indptr"])
        self._df = np.diff(indptr)
        self.num_docs = int(bm25.scores["num_docs"])

    @classmethod
    def build(cls, token_lists: list[list[str]], *, k1: float = 1.2, b: float = 0.75) -> LexicalIndex:
        vocab: dict[str, int] = {"": 0}  # the empty term gives empty chunks and queries a valid id
        ids = [[vocab.setdefault(term, len(vocab)) for term in terms] or [0] for terms in token_lists]
        bm25 = bm25s.BM25(method="lucene", k1=k1, b=b, backend="numpy")
        bm25.index((ids, vocab), show_progress=False, create_empty_token=False)
        bm25.vocab_dict = vocab
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(doc) for doc in ids])
        flat = np.fromiter((t for doc in ids for t in doc), dtype=np.int32, count=int(offsets[-1]))
        return cls(bm25, flat, offsets)

    def save(self, directory: Path) -> None:
        self._bm25.save(str(directory), show_progress=False)
        if self._terms is not None and self._offsets is not None:
            np.save(directory / TERMS_FILE, self._terms)
            np.save(directory / OFFSETS_FILE, self._offsets)

    @classmethod
    def load(cls, directory: Path) -> LexicalIndex:
        bm25 = bm25s.BM25.load(str(directory), mmap=True, show_progress=False)
        terms = np.load(directory / TERMS_FILE, mmap_mode="r") if (directory / TERMS_FILE).exists() else None
        if terms is not None:
            # A plain ndarray over the same mapped pages: slicing an np.memmap builds a memmap object each
            # time, which cost more than reading the terms in the reranker's per-candidate lookups.
            terms = terms.view(np.ndarray)
        offsets = np.load(directory / OFFSETS_FILE) if (directory / OFFSETS_FILE).exists() else None
        return cls(bm25, terms, offsets)

    def row_terms(self, row: int) -> list[str] | None:
        """The analysed terms of chunk ``row``, in text order (None for an index saved without them)."""
        if self._terms is None or self._offsets is None:
            return None
        words = self._words
        return [words[t] for t in self._terms[self._offsets[row] : self._offsets[row + 1]].tolist() if t]

    def term_ids(self, terms: list[str]) -> list[int]:
        return [self._vocab[t] for t in terms if t in self._vocab and self._vocab[t] != 0]

    def scores(self, terms: list[str]) -> np.ndarray:
        """BM25 score of every chunk for the query terms (zeros when no term is known)."""
        ids = self.term_ids(terms)
        if not ids:
            return np.zeros(self.num_docs, dtype=np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)

    def idf(self, term: str) -> float:
        """Lucene BM25 idf of a term (0 for unknown terms)."""
        tid = self._vocab.get(term)
        if tid is None or tid >= len(self._df):
            return 0.0
        df = float(self._df[tid])
        return math.log(1.0 + (self.num_docs - df + 0.5) / (df + 0.5))


def top_k(scores: np.ndarray, k: int, subset: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the ``k`` best positive scores (restricted to ``subset`` rows), best first."""
    if subset is not None:
        sub_scores = scores[subset]
        idx, vals = top_k(sub_scores, k)
        return subset[idx], vals
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if positive.size > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = np.argsort(-scores[positive], kind="stable")
    chosen = positive[order]
    return chosen, scores[chosen]
