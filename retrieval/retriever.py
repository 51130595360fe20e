"""Hybrid search over a built index: BM25 + dense, fused with RRF, reranked; exact legal lookups.

Thread-safe for concurrent reads: the index is immutable once loaded, analyzers are per thread, and the
encoder and reranker guard their own state."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from models.embeddings import Encoder
from models.json_types import JSON, json_objects
from retrieval.budget_years import BudgetLaws
from retrieval.dense import DenseIndex
from retrieval.documents import with_opening_title, with_path_identity
from retrieval.extract import CELL_SEPARATOR
from retrieval.fusion import rrf
from retrieval.legal import find_references
from retrieval.lexical import LexicalIndex
from retrieval.lexical import top_k as best_rows
from retrieval.lookups import DocumentLookups
from retrieval.querying import corpus_query, diversify
from retrieval.rerankers import Reranker, legal_match
from retrieval.store import (
    ArticleRow,
    DocumentRow,
    RefRow,
    check_encoder,
    chunk_from_row,
    identity_from_row,
    identity_to_row,
    read_document_rows,
    read_jsonl,
    read_manifest,
    read_ref_rows,
)
from retrieval.table_rows import RowNames
from retrieval.text import IndonesianAnalyzer
from retrieval.titles import TitleIndex, build_title_index, title_query
from retrieval.types import Chunk, DocumentInfo, SearchHit

MODES = ("hybrid", "bm25", "dense")
QUERY_CACHE_SIZE = 4096
# Fusion defaults fitted on the IDK-MRC/TyDiQA-id train split (benchmarks/results/retrieval.md): an
# English encoder on Indonesian text earns a low dense weight, and a small k trusts the top ranks.
DEFAULT_RRF_K = 5
DEFAULT_WEIGHTS = {"bm25": 1.0, "dense": 0.3, "legal": 1.0, "title": 0.5, "table": 1.0, "budget": 1.0}
DEFAULT_DIVERSE_SHARE = 0.5  # share of a result list kept for the best chunks of distinct documents
NAMED_DOCUMENT_CANDIDATES = 10
NAMED_DIVERSE_SHARE = 0.6  # of diverse_share, when the query names a regulation or article
TITLE_DOCUMENT_CANDIDATES = 5  # best BM25 chunks of each document a query names by its title


class Retriever(DocumentLookups):
    def __init__(
        self,
        index_dir: Path,
        manifest: JSON,
        documents: list[DocumentRow],
        chunks: list[Chunk],
        articles: list[ArticleRow],
        refs: list[RefRow],
        lexical: LexicalIndex,
        dense: DenseIndex,
        *,
        encoder: Encoder,
        reranker: Reranker | None,
        rrf_k: int,
        weights: dict[str, float] | None,
        candidates: int,
        diverse_share: float = DEFAULT_DIVERSE_SHARE,
    ) -> None:
        self.index_dir = index_dir
        self.manifest = manifest
        self._docs = {row["document_id"]: row for row in documents}
        self._chunks = chunks
        self._articles = articles
        self._refs = refs
        self._by_id = {chunk.chunk_id: i for i, chunk in enumerate(chunks)}
        self._pasal_rows: dict[str, list[int]] = {}
        for i, article in enumerate(articles):
            pasal = article.get("pasal")
            if pasal:
                self._pasal_rows.setdefault(pasal, []).append(i)
        self.lexical = lexical
        self.dense = dense
        self.encoder = encoder
        self.reranker = reranker
        self.rrf_k = rrf_k
        self.weights = {**DEFAULT_WEIGHTS, **(weights or {})}
        self.candidates = candidates
        self.diverse_share = diverse_share
        self._local = threading.local()
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._infos = {
            row["document_id"]: DocumentInfo(
                row["document_id"],
                identity_from_row(row["identity"]),
                row["source"],
                row["chunk_end"] - row["chunk_start"],
            )
            for row in documents
        }
        self.titles: TitleIndex = build_title_index(
            {d: info.identity.title for d, info in self._infos.items()}, self.analyze
        )
        self.budget_laws = BudgetLaws({d: info.identity.title for d, info in self._infos.items()})
        self.row_names = RowNames(
            (
                (i, cell)
                for i, chunk in enumerate(chunks)
                if chunk.kind == "table"
                for cell in chunk.text.split(CELL_SEPARATOR)
            ),
            self.analyze,
        )
        if reranker is not None:
            reranker.bind(self)

    @classmethod
    def load(
        cls,
        index_dir: Path,
        *,
        encoder: Encoder,
        reranker: Reranker | None = None,
        rrf_k: int = DEFAULT_RRF_K,
        weights: dict[str, float] | None = None,
        candidates: int = 50,
        diverse_share: float = DEFAULT_DIVERSE_SHARE,
        use_gpu: bool = False,
    ) -> Retriever:
        """Open the index in ``index_dir``. Raises IndexMissingError when there is none, and
        IncompatibleIndexError when it was built by another format version or another encoder."""
        index_dir = Path(index_dir)
        manifest = read_manifest(index_dir)
        check_encoder(manifest, encoder.name, encoder.dim, index_dir)
        documents = read_document_rows(index_dir)
        rows = read_jsonl(index_dir / "chunks.jsonl")
        openings = {row["document_id"]: row["text"] for row in rows if row["ordinal"] == 0}
        for row in documents:
            # an index built before ingest read a regulation's identity from its path (or its heading placed
            # after "Menimbang") gets it here
            fixed = with_path_identity(identity_from_row(row["identity"]), row["source"])
            fixed = with_opening_title(fixed, openings.get(row["document_id"], ""))
            row["identity"] = {**row["identity"], **identity_to_row(fixed)}
        identities = {row["document_id"]: identity_from_row(row["identity"]) for row in documents}
        chunks = [chunk_from_row(row, identities[row["document_id"]]) for row in rows]
        articles = [row["article"] for row in rows]
        refs = read_ref_rows(index_dir)
        lexical = LexicalIndex.load(index_dir / "bm25")
        dense = DenseIndex.load(index_dir, use_gpu=use_gpu)
        return cls(
            index_dir,
            manifest,
            documents,
            chunks,
            articles,
            refs,
            lexical,
            dense,
            encoder=encoder,
            reranker=reranker,
            rrf_k=rrf_k,
            weights=weights,
            candidates=candidates,
            diverse_share=diverse_share,
        )

    # -- corpus statistics (the reranker's CorpusStats) ---------------------------------------------------
    def analyze(self, text: str) -> list[str]:
        analyzer = getattr(self._local, "analyzer", None)
        if analyzer is None:
            analyzer = self._local.analyzer = IndonesianAnalyzer()
        return analyzer(text)

    def idf(self, term: str) -> float:
        return self.lexical.idf(term)

    def chunk_terms(self, chunk: Chunk) -> list[str] | None:
        """The terms BM25 indexed for ``chunk`` (title, section, context and text), in order."""
        row = self._by_id.get(chunk.chunk_id)
        return self.lexical.row_terms(row) if row is not None else None

    # -- search -------------------------------------------------------------------------------------------
    def _subset(self, document_ids: Collection[str] | None) -> np.ndarray | None:
        if document_ids is None:
            return None
        ranges = [
            np.arange(self._docs[d]["chunk_start"], self._docs[d]["chunk_end"])
            for d in sorted(set(document_ids))
            if d in self._docs
        ]
        return np.concatenate(ranges).astype(np.int64) if ranges else np.zeros(0, dtype=np.int64)

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        document_ids: Collection[str] | None = None,
        provenance: bool = False,
        mode: str = "hybrid",
        rerank: bool = True,
    ) -> list[SearchHit]:
        """The ``top_k`` best chunks for ``query``, best first. ``document_ids`` limits the scope (unknown ids
        are ignored; none left gives no results). Chunks of a regulation or article the query names come
        first. ``score`` is the final score; ``stages`` (with ``provenance``) has each stage's rank and score.
        ``mode="bm25"`` or ``"dense"`` runs one first stage alone; ``rerank=False`` stops at the fusion.
        An English query reaches BM25 and the reranker with the Indonesian words of its lexicon terms added;
        hybrid results keep the best chunk of each of the first ``diverse_share * top_k`` documents
        (:mod:`retrieval.querying`)."""
        return self.search_many(
            [query], top_k=top_k, document_ids=document_ids, provenance=provenance, mode=mode, rerank=rerank
        )[0]

    def search_many(
        self,
        queries: Sequence[str],
        *,
        top_k: int = 10,
        document_ids: Collection[str] | None = None,
        provenance: bool = False,
        mode: str = "hybrid",
        rerank: bool = True,
    ) -> list[list[SearchHit]]:
        """``search`` for several queries, with one batched encoder call."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        subset = self._subset(document_ids)
        if (subset is not None and subset.size == 0) or not self._chunks or not queries:
            return [[] for _ in queries]
        depth = max(self.candidates, top_k)
        qvecs = self._query_vectors(list(queries)) if mode != "bm25" else None
        dense_lists = self.dense.search(qvecs, depth, subset) if qvecs is not None else None
        results = []
        for i, query in enumerate(queries):
            if mode == "dense":
                assert dense_lists is not None  # encoded above for every mode but bm25
                dense_idx, dense_vals = dense_lists[i]
                results.append(
                    [
                        self._hit(int(j), float(v), {"dense": {"rank": r + 1, "score": float(v)}}, provenance)
                        for r, (j, v) in enumerate(zip(dense_idx[:top_k], dense_vals[:top_k]))
                    ]
                )
                continue
            lexical_query = corpus_query(query)
            bm25_scores = self.lexical.scores(self.analyze(lexical_query))
            bm25_idx, _ = best_rows(bm25_scores, depth, subset)
            if mode == "bm25":
                results.append(
                    [
                        self._hit(
                            j,
                            float(bm25_scores[j]),
                            {"bm25": {"rank": r + 1, "score": float(bm25_scores[j])}},
                            provenance,
                        )
                        for r, j in enumerate(bm25_idx[:top_k])
                    ]
                )
                continue
            assert qvecs is not None and dense_lists is not None
            dense_idx = dense_lists[i][0]
            results.append(
                self._hybrid(
                    query,
                    lexical_query,
                    qvecs[i],
                    bm25_scores,
                    bm25_idx,
                    dense_idx,
                    subset,
                    top_k,
                    provenance,
                    rerank,
                )
            )
        return results

    def clear_cache(self) -> None:
        """Forget cached query vectors (benchmarks measure cold queries)."""
        with self._cache_lock:
            self._qcache.clear()

    def _subset_docs(self, subset: np.ndarray | None) -> set[str] | None:
        if subset is None:
            return None
        return {self._chunks[j].document_id for j in subset.tolist()}

    def _query_vectors(self, queries: list[str]) -> np.ndarray:
        """Query vectors, from a small LRU cache when the same query text was seen recently."""
        with self._cache_lock:
            cached = {q: self._qcache[q] for q in queries if q in self._qcache}
            for q in cached:
                self._qcache.move_to_end(q)
        missing = list(dict.fromkeys(q for q in queries if q not in cached))
        if missing:
            fresh = self.encoder.encode_queries(missing)
            with self._cache_lock:
                for q, vec in zip(missing, fresh):
                    cached[q] = self._qcache[q] = vec
                while len(self._qcache) > QUERY_CACHE_SIZE:
                    self._qcache.popitem(last=False)
        return np.stack([cached[q] for q in queries]).astype(np.float32, copy=False)

    def _hybrid(
        self,
        query: str,
        lexical_query: str,
        qvec: np.ndarray,
        bm25_scores: np.ndarray,
        bm25_idx: np.ndarray,
        dense_idx: np.ndarray,
        subset: np.ndarray | None,
        k: int,
        provenance: bool,
        rerank: bool,
    ) -> list[SearchHit]:
        refs = [r for r in find_references(lexical_query) if r.pasal or r.names_document]
        allowed = set(subset.tolist()) if subset is not None else None
        # Exact article lookups join the candidates for a named regulation, or for a bare "Pasal N" when the
        # scope is limited to some documents (across a whole corpus a bare article number is ambiguous).
        exact = [
            self._by_id[c.chunk_id]
            for ref in refs
            if ref.pasal and (ref.names_document or subset is not None)
            for c in self.lookup_article(ref, document_ids=self._subset_docs(subset))
        ]
        # A regulation named without an article: its best BM25 chunks join the candidates too (a corpus-wide
        # top 50 may hold none of them when other statutes repeat the question's words).
        named = [r for r in refs if r.names_document and not r.pasal]
        docs = {d for r in named for d in self._matching_documents(r.doc_type, r.number, r.year)}
        if docs:
            exact += best_rows(bm25_scores, NAMED_DOCUMENT_CANDIDATES, self._subset(docs))[0].tolist()
        exact = [j for j in dict.fromkeys(exact) if allowed is None or j in allowed]
        rankings = {"bm25": bm25_idx.tolist(), "dense": dense_idx.tolist()}
        if exact:
            rankings["legal"] = exact
        # A fiscal year asked without a law number ("APBN-P 2015"): that year's budget laws by title identity
        # (retrieval.budget_years); their best chunks join the candidates and come first after the reranker.
        budget = {} if any(r.names_document for r in refs) else self.budget_laws.tiers(lexical_query)
        if budget:
            best_tier = [d for d, t in budget.items() if t == max(budget.values())]
            rows_of = best_rows(bm25_scores, NAMED_DOCUMENT_CANDIDATES, self._subset(best_tier))[0].tolist()
            rankings["budget"] = [j for j in rows_of if allowed is None or j in allowed]
        if not docs:
            titled = self._titled_rows(lexical_query, bm25_scores, subset)
            if titled:
                rankings["title"] = titled
        if not refs:
            named_rows = [
                j
                for j in self.row_names.named(self.analyze(lexical_query))
                if allowed is None or j in allowed
            ]
            if named_rows:
                best = np.argsort(-bm25_scores[named_rows], kind="stable")[:NAMED_DOCUMENT_CANDIDATES]
                rankings["table"] = [named_rows[int(i)] for i in best]
        fused = rrf(rankings, k=self.rrf_k, weights=self.weights)[: max(self.candidates, k)]
        rows = np.array([j for j, _ in fused], dtype=np.int64)
        dense_sims = self.dense.similarity(qvec, rows)
        bm25_rank = {j: r + 1 for r, j in enumerate(rankings["bm25"])}
        named_rank = {
            name: {j: r + 1 for r, j in enumerate(rankings.get(name, []))} for name in ("title", "table")
        }
        dense_rank = {j: r + 1 for r, j in enumerate(rankings["dense"])}
        hits = []
        for pos, (j, fused_score) in enumerate(fused):
            stages: dict[str, dict[str, float | int | None]] = {
                "bm25": {"rank": bm25_rank.get(j), "score": float(bm25_scores[j])},
                "dense": {"rank": dense_rank.get(j), "score": float(dense_sims[pos])},
                "fused": {"rank": pos + 1, "score": float(fused_score)},
            }
            for name in ("title", "table"):  # the reranker reads these: the query names this document or row
                if j in named_rank[name]:
                    stages[name] = {"rank": named_rank[name][j], "score": 1.0}
            hits.append(SearchHit(self._chunks[j], float(fused_score), stages))
        if rerank and self.reranker is not None:
            hits = self.reranker.rerank(lexical_query, hits)
        if budget:
            hits.sort(key=lambda h: -budget.get(h.chunk.document_id, 0))  # stable: the ranker's order within
        if refs:
            # A named article or regulation is an exact request: its chunks come first
            tiers = [legal_match(refs, hit.chunk) for hit in hits]
            order = sorted(
                range(len(hits)),
                key=lambda i: (
                    -tiers[i][0],
                    -tiers[i][1],
                    hits[i].chunk.ordinal if tiers[i][0] == 1.0 else 0,
                ),
            )
            hits = [hits[i] for i in order]
        # A query naming a regulation or article asks for that document: it keeps most places, and a few
        # other documents stay in view (the query's words in other statutes, an amending law).
        share = NAMED_DIVERSE_SHARE * self.diverse_share if refs else self.diverse_share
        hits = diversify(hits, lambda h: h.chunk.document_id, share, k)
        if not provenance:
            hits = [SearchHit(h.chunk, h.score, {}) for h in hits]
        return hits

    def _titled_rows(
        self, lexical_query: str, bm25_scores: np.ndarray, subset: np.ndarray | None
    ) -> list[int]:
        """The best BM25 chunks of the documents the query names by their title words, interleaved (the
        first chunk of each, then the second ...), within ``subset``."""
        named = self.titles.named(self.analyze(title_query(lexical_query)))
        allowed = self._subset_docs(subset)
        per_doc = [
            best_rows(bm25_scores, TITLE_DOCUMENT_CANDIDATES, self._subset([d]))[0].tolist()
            for d, _ in named
            if allowed is None or d in allowed
        ]
        return [rows[i] for i in range(TITLE_DOCUMENT_CANDIDATES) for rows in per_doc if i < len(rows)]

    def _hit(
        self, j: int, score: float, stages: dict[str, dict[str, float | int | None]], provenance: bool
    ) -> SearchHit:
        return SearchHit(self._chunks[int(j)], score, stages if provenance else {})

    @property
    def fingerprint(self) -> str:
        return str(self.manifest["fingerprint"])

    @property
    def corpus_sources(self) -> list[str]:
        return [str(entry["source"]) for entry in json_objects(self.manifest["sources"])]
