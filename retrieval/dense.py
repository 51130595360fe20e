"""Dense index: L2-normalised chunk vectors searched by inner product with faiss.

Exact search (``IndexFlatIP``) up to ``hnsw_threshold`` vectors, HNSW above it; faiss's GPU build when
asked for and present. The raw vectors are also kept as a memory-mapped ``.npy`` so a filtered search
(document scope) is an exact product over the allowed rows, and candidate rescoring needs no index."""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np

HNSW_THRESHOLD = 50_000
VECTORS_FILE = "vectors.npy"
FAISS_FILE = "dense.faiss"


class DenseUnavailable(RuntimeError):
    pass


def _to_gpu(index: faiss.Index) -> faiss.Index:
    if not hasattr(faiss, "StandardGpuResources"):
        raise DenseUnavailable(
            "faiss GPU search was requested but this faiss build has no GPU support "
            "(install faiss-gpu-cu12 instead of faiss-cpu)"
        )
    if faiss.get_num_gpus() < 1:
        raise DenseUnavailable("faiss GPU search was requested but no GPU is visible")
    resources = faiss.StandardGpuResources()
    return faiss.index_cpu_to_gpu(resources, 0, index)


class DenseIndex:
    def __init__(self, vectors: np.ndarray, index: faiss.Index, *, ef_search: int = 128) -> None:
        self.vectors = vectors
        self.index = index
        self.dim = int(vectors.shape[1]) if vectors.ndim == 2 else 0
        if isinstance(index, faiss.IndexHNSW):
            index.hnsw.efSearch = ef_search

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        *,
        hnsw_threshold: int = HNSW_THRESHOLD,
        hnsw_m: int = 32,
        ef_construction: int = 80,
    ) -> DenseIndex:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = vectors.shape[1]
        if len(vectors) > hnsw_threshold:
            hnsw = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction = ef_construction
            index: faiss.Index = hnsw
        else:
            index = faiss.IndexFlatIP(dim)
        if len(vectors):
            index.add(vectors)
        return cls(vectors, index)

    def save(self, directory: Path) -> None:
        np.save(directory / VECTORS_FILE, self.vectors)
        faiss.write_index(self.index, str(directory / FAISS_FILE))

    @classmethod
    def load(cls, directory: Path, *, use_gpu: bool = False, ef_search: int = 128) -> DenseIndex:
        vectors = np.load(directory / VECTORS_FILE, mmap_mode="r")
        index = faiss.read_index(str(directory / FAISS_FILE))
        if use_gpu:
            index = _to_gpu(index)
        return cls(vectors, index, ef_search=ef_search)

    def search(
        self, queries: np.ndarray, k: int, subset: np.ndarray | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query: (row indices, inner products), best first, at most ``k``."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        n = len(self.vectors)
        if n == 0 or k <= 0:
            return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in queries]
        if subset is not None:
            if subset.size == 0:
                return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in queries]
            sims = np.asarray(self.vectors[subset]) @ queries.T
            out = []
            for col in range(len(queries)):
                s = sims[:, col]
                kk = min(k, len(s))
                part = np.argpartition(-s, kk - 1)[:kk]
                order = part[np.argsort(-s[part], kind="stable")]
                out.append((subset[order], s[order].astype(np.float32)))
            return out
        scores, ids = self.index.search(queries, min(k, n))
        return [(ids[i][ids[i] >= 0].astype(np.int64), scores[i][ids[i] >= 0]) for i in range(len(queries))]

    def similarity(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        if rows.size == 0:
            return np.zeros(0, dtype=np.float32)
        sims: np.ndarray = (np.asarray(self.vectors[rows]) @ query).astype(np.float32)
        return sims
