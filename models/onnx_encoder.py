"""A sentence-transformers model run by ONNX Runtime: the CPU default encoder.

Why not torch on the CPU: one query (the hot path of every search) encodes in less than half the time
under ONNX Runtime with int8 weights, and batches 1.3x faster (the full legal corpus ingests in 298 s
instead of 520 s), measured side by side on this 2-core machine (benchmarks/results/retrieval.md). The
int8 weights are quantized per output channel, which keeps the vectors much closer to the float32 model's
than torch's per-tensor dynamic int8 (mean cosine to float32 0.99 vs 0.91 on legal text).

The model directory stays the one source: on first use the transformer is exported from it with
torch.onnx, its weights quantized, and the result kept in a cache directory under a key made of the model
files' contents and the export recipe, so every process and Ray replica after the first loads it in well
under a second. Pooling and normalisation are done here in numpy as the model's ``modules.json`` says; a
model with any other module (a Dense layer, say) is refused with one sentence: run it with
``runtime: torch``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np

from models.embeddings import (
    DEFAULT_MAX_SEQ_LENGTH,
    Encoder,
    EncoderUnavailable,
    local_model_dir,
    model_label,
)

# ONNX Runtime's Linux builds report usage to Microsoft and keep a device id on disk unless this is set
# before the runtime starts; a government service sends nothing anywhere (an explicit setting is kept).
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

ONNX_OPSET = 17
# Bump when the export or quantization changes the vectors: the cache key follows, and from version 2 on the
# encoder name carries it too (":r2"), so indexes built with older vectors are refused and re-ingested.
EXPORT_RECIPE_VERSION = 1
EXPORT_RECIPE = f"opset{ONNX_OPSET}-int8-per-channel-v{EXPORT_RECIPE_VERSION}"
_SUPPORTED_MODULES = {
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
}


def default_cache_dir() -> Path:
    """Exported models live with the user's other caches (``$XDG_CACHE_HOME``, else ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "aceh-rag" / "onnx"


def _threads_from_env() -> int:
    """OMP_NUM_THREADS when set (Ray sets it to each replica's CPU share, and torch follows it; ONNX Runtime
    does not read it, so two replicas on two cores would each start two busy threads), else 0: ONNX
    Runtime's default of one thread per core."""
    try:
        return max(int(os.environ.get("OMP_NUM_THREADS", "0")), 0)
    except ValueError:
        return 0


def _pooling(path: Path) -> tuple[str, int]:
    """(pooling mode, dimension) from the model's modules.json and pooling config."""
    modules_file = path / "modules.json"
    if not modules_file.exists():
        raise EncoderUnavailable(f"no sentence-transformers modules.json at {path}")
    modules = json.loads(modules_file.read_text())
    unsupported = sorted({m["type"] for m in modules} - _SUPPORTED_MODULES)
    if unsupported:
        raise EncoderUnavailable(
            f"the ONNX encoder runs Transformer, Pooling and Normalize modules only, and {path} also has "
            f"{', '.join(unsupported)}; set retrieval.encoder.runtime to torch"
        )
    pooling = next((m for m in modules if m["type"].endswith(".Pooling")), None)
    if pooling is None:
        raise EncoderUnavailable(f"the model at {path} has no Pooling module")
    config = json.loads((path / pooling["path"] / "config.json").read_text())
    prefix = "pooling_mode_"
    asked = sorted(k.removeprefix(prefix) for k, v in config.items() if k.startswith(prefix) and v)
    if len(asked) != 1 or asked[0] not in ("cls_token", "mean_tokens"):
        raise EncoderUnavailable(
            f"the ONNX encoder pools by mean or CLS token only, and {path} asks for "
            f"{', '.join(asked) or 'no pooling'}; set retrieval.encoder.runtime to torch"
        )
    return asked[0], int(config["word_embedding_dimension"])


def _model_key(path: Path, quantize: bool) -> str:
    """Content hash of the files that decide the vectors, plus the recipe and the quantizer's version."""
    import onnxruntime

    digest = hashlib.sha256(f"{EXPORT_RECIPE}|{quantize}|{onnxruntime.__version__}".encode())
    for file in sorted(
        p for p in path.iterdir() if p.is_file() and p.suffix in {".json", ".safetensors", ".bin"}
    ):
        digest.update(file.name.encode())
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


class _DropMessage(logging.Filter):
    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefix)


def _export(path: Path, target: Path, input_names: list[str], quantize: bool) -> None:
    """Export the transformer to ``target`` (int8 weights when ``quantize``), atomically: a crash or a
    concurrent export never leaves a half-written file under the final name."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(path), local_files_only=True, attn_implementation="eager").eval()

    class _HiddenStates(torch.nn.Module):
        """Positional inputs in, last hidden state out: what torch.onnx traces."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            hidden: torch.Tensor = self.model(**dict(zip(input_names, inputs))).last_hidden_state
            return hidden

    # A tiny all-ones sample: the graph keeps batch and length dynamic, and the tracer's warnings about
    # Python-level branches concern padding checks that equal-length inputs always pass the same way
    sample = tuple(torch.ones((2, 8), dtype=torch.int64) for _ in input_names)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*input_names, "last_hidden_state"]}
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".export-") as work:
        fp32 = Path(work) / "model.onnx"
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _HiddenStates(),
                sample,
                str(fp32),
                input_names=input_names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=ONNX_OPSET,
                dynamo=False,
            )
        result = fp32
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            result = Path(work) / "model.int8.onnx"
            # The quantizer suggests its pre-processing step with logging.warning() on the root logger, which
            # also installs a stderr handler on a process that configured no logging (and then every
            # library's debug lines print). Measured: pre-processing gives this graph the same speed and the
            # same vectors, so the step is skipped, and its hint dropped without touching the configuration.
            root = logging.getLogger()
            hint, placeholder = _DropMessage("Please consider to run pre-processing"), logging.NullHandler()
            root.addFilter(hint)
            root.addHandler(placeholder)
            try:
                quantize_dynamic(str(fp32), str(result), weight_type=QuantType.QInt8, per_channel=True)
            finally:
                root.removeHandler(placeholder)
                root.removeFilter(hint)
        os.replace(result, target)


class OnnxEncoder(Encoder):
    """A local sentence-transformers model (mean or CLS pooling) on ONNX Runtime's CPU provider.

    Same contract as :class:`models.embeddings.SentenceTransformerEncoder` (same tokenizer, truncation to
    ``max_seq_length`` word pieces, pooling, L2 normalisation); ``quantize`` (default on) runs int8 weights.
    ``num_threads`` defaults to OMP_NUM_THREADS, else one per core. ``cache_dir`` holds exported models
    (default :func:`default_cache_dir`)."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        max_seq_length: int | None = DEFAULT_MAX_SEQ_LENGTH,
        num_threads: int | None = None,
        batch_size: int = 64,
        quantize: bool = True,
        cache_dir: str | Path | None = None,
        name: str | None = None,
    ) -> None:
        path = local_model_dir(model_path)
        try:
            import onnxruntime as ort
        except ImportError:
            raise EncoderUnavailable(
                "onnxruntime is not installed (it comes with the cpu extra); install it or set "
                "retrieval.encoder.runtime to torch"
            ) from None
        from transformers import AutoTokenizer

        if not (path / "config.json").exists():
            raise EncoderUnavailable(f"no sentence-transformers model at {path}")
        self._pool, self.dim = _pooling(path)
        settings_file = path / "sentence_bert_config.json"
        settings = json.loads(settings_file.read_text()) if settings_file.exists() else {}
        self._lower = bool(settings.get("do_lower_case"))
        self._tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.max_seq_length = int(
            max_seq_length or settings.get("max_seq_length") or self._tokenizer.model_max_length
        )
        self._inputs = list(self._tokenizer.model_input_names)
        model_file = Path(cache_dir or default_cache_dir()) / f"{_model_key(path, quantize)}.onnx"
        if not model_file.exists():
            try:
                _export(path, model_file, self._inputs, quantize)
            except OSError as exc:
                raise EncoderUnavailable(
                    f"cannot write the exported model to {model_file.parent} ({exc.strerror or exc}); "
                    "point XDG_CACHE_HOME at a writable folder"
                ) from None
            except Exception as exc:  # the exporter and quantizer fail in many types on unusual models
                raise EncoderUnavailable(
                    f"the model at {path} could not be exported to ONNX ({type(exc).__name__}: {exc}); "
                    "set retrieval.encoder.runtime to torch"
                ) from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = num_threads or _threads_from_env()
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self.batch_size = batch_size
        recipe = f":r{EXPORT_RECIPE_VERSION}" if EXPORT_RECIPE_VERSION > 1 else ""
        precision = ":int8" if quantize else ""
        self.name = name or f"onnx:{model_label(path)}:L{self.max_seq_length}{precision}{recipe}"
        self._lock = threading.Lock()  # one run at a time: the session already uses every thread

    def encode(self, texts: list[str], *, batch_size: int | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        size = batch_size or self.batch_size
        # Shortest first, so each batch pads little (what sentence-transformers does too)
        order = np.argsort([len(t) for t in texts], kind="stable")
        with self._lock:
            for start in range(0, len(texts), size):
                rows = order[start : start + size]
                out[rows] = self._forward([texts[i] for i in rows])
        return out

    def _forward(self, texts: list[str]) -> np.ndarray:
        if self._lower:
            texts = [t.lower() for t in texts]
        features = self._tokenizer(
            texts,
            padding=True,
            truncation="longest_first",
            max_length=self.max_seq_length,
            return_tensors="np",
        )
        feed = {name: features[name].astype(np.int64, copy=False) for name in self._inputs}
        hidden = self._session.run(None, feed)[0]
        if self._pool == "cls_token":
            vectors = hidden[:, 0]
        else:
            mask = features["attention_mask"][..., None].astype(np.float32)
            vectors = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        # Unit rows whether or not the model has a Normalize module: the Encoder contract (and the torch
        # encoder, which normalises too) makes inner product = cosine
        vectors = vectors.astype(np.float32, copy=False)
        return np.ascontiguousarray(
            vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        )
