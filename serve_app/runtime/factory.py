"""Builds every component from the config: the plain objects the in-process pipeline uses and the Ray
deployments wrap. Which engine a role uses is configuration; this is the one place that reads it."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.types import JudgeItem, JudgeResult
from serve_app.config import AppConfig, ConfigError, EngineConfig
from serve_app.config.redact import redact_urls, redacted_url
from serve_app.runtime.index_setup import build_live_retriever, build_retriever

# The model-backed roles live in llm_roles; re-exported here, where every caller builds components.
from serve_app.runtime.llm_roles import ROLE_OPTIONS as ROLE_OPTIONS
from serve_app.runtime.llm_roles import build_framing as build_framing
from serve_app.runtime.llm_roles import build_judge as build_judge
from serve_app.runtime.llm_roles import build_writer as build_writer
from serve_app.runtime.llm_roles import engine_spec_dict as engine_spec_dict
from serve_app.runtime.llm_roles import model_health_check as model_health_check
from serve_app.runtime.llm_roles import role_engine as role_engine

if TYPE_CHECKING:  # imported lazily at run time: each builder loads only what its role needs
    from starlette.applications import Starlette

    from retrieval.live import LiveRetriever
    from retrieval.port import RetrieverPort
    from retrieval.retriever import Retriever
    from serve_app.agent.agent import Agent
    from serve_app.agent.writers.base import Writer
    from serve_app.answer.annotate import Annotator
    from serve_app.conversation.retention import RetentionSchedule
    from serve_app.conversation.store import Store
    from serve_app.guard.admission import GuardService
    from serve_app.guard.policy import PolicyGuard
    from serve_app.pipeline import Pipeline
    from serve_app.roles import AgentRole, AnnotatorRole, GuardRole

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


# ---------------------------------------------------------------------------- judge, annotator


def build_annotator(cfg: AppConfig, *, judge_fn: JudgeFn, split_items: bool = True) -> Annotator:
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


def build_agent(cfg: AppConfig, *, retriever_port: RetrieverPort, writer: Writer | None = None) -> Agent:
    from retrieval.legal import find_references
    from serve_app.agent.agent import Agent, ToolsConfig
    from serve_app.runtime.sources import build_live_tools

    policy = build_policy(cfg)

    # True: injected instructions, never shown to the writer. The verdict depends on the text and the policy
    # file only, and the same indexed passages come back request after request: screen each text once.
    @functools.lru_cache(maxsize=16384)
    def passage_flagged(text: str) -> bool:
        return not policy.screen_passage(text).allowed

    return Agent(
        retriever_port,
        writer if writer is not None else build_writer(cfg),
        tools=ToolsConfig(
            top_k=cfg.retrieval.agent_top_k, find_references=find_references, extra=build_live_tools(cfg)
        ),
        guard_passage_screen=passage_flagged,
    )


# ---------------------------------------------------------------------------- guard, store


def build_policy(cfg: AppConfig) -> PolicyGuard:
    from serve_app.guard.policy import PolicyGuard

    path = cfg.resolve(cfg.policy_file)
    if not path.is_file():
        raise ConfigError(f"Policy file {path} does not exist.")
    try:
        return PolicyGuard.from_file(path)
    except ValueError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None


def build_store(cfg: AppConfig) -> Store:
    from serve_app.conversation.store import Store

    url = cfg.database_url
    if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
        path = cfg.resolve(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{path}"
    limits = cfg.limits
    try:
        store = Store(
            url,
            connect_timeout_s=limits.db_connect_timeout_s,
            statement_timeout_s=limits.db_statement_timeout_s,
        )
        store.migrate()
    except ValueError as exc:
        raise ConfigError(redact_urls(str(exc)).rstrip(".") + ".") from None
    except Exception as exc:  # noqa: BLE001 - an unreachable database is a start-up problem
        raise ConfigError(
            f"The database at {redacted_url(cfg.database_url)} cannot be opened ({type(exc).__name__}); "
            "check that the server runs, the host and port, and the user and password."
        ) from None
    return store


def check_database(cfg: AppConfig) -> None:
    """A PostgreSQL store that cannot be reached fails start-up here, in one sentence with the password
    hidden, not as a deployment failure of the Ingress with the URL in Ray's controller log."""
    if not cfg.database_url.startswith("postgresql"):
        return  # SQLite: the file is created on first use
    from sqlalchemy import text

    from serve_app.conversation.store import Store

    try:
        store = Store(cfg.database_url, connect_timeout_s=cfg.limits.db_connect_timeout_s)
    except ValueError as exc:
        raise ConfigError(redact_urls(str(exc)).rstrip(".") + ".") from None
    try:
        with store.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the operator's to fix
        raise ConfigError(
            f"The database at {redacted_url(cfg.database_url)} cannot be reached ({type(exc).__name__}); "
            "check that the server runs, the host and port, and the user and password."
        ) from None
    finally:
        store.engine.dispose()


def build_guard(cfg: AppConfig, *, store: Store, processes: int = 1) -> GuardService:
    """``processes``: how many guard processes share the traffic (each keeps its share of the rate limits)."""
    from serve_app.guard.admission import GuardService
    from serve_app.guard.auth import Authenticator
    from serve_app.guard.ratelimit import RateLimit, RateLimiter

    try:
        authenticator = Authenticator.from_env(cfg.api_keys, cfg.partners_file, cfg.api_key_hashes)
    except ValueError as exc:
        raise ConfigError(str(exc).rstrip(".") + ".") from None
    return GuardService(
        authenticator=authenticator,
        policy=build_policy(cfg),
        limiter=RateLimiter(per_minute=cfg.limits.requests_per_minute, processes=processes),
        principal_limiter=RateLimiter(
            per_minute=cfg.limits.principal_requests_per_minute,
            per_key={
                issuer: RateLimit(requests=n, per_seconds=60.0)
                for issuer, n in cfg.limits.partner_requests_per_minute.items()
            },
            processes=processes,
        ),
        store=store,
        playground_per_minute=cfg.limits.playground_per_minute,
    )


# ---------------------------------------------------------------------------- pipeline


@dataclass
class Components:
    """What a pipeline is made of. A role left None is built here from the config; the Ray graph passes
    the adapters of its handles, tests pass fakes. ``writer`` goes into a built agent; ``judge_fn`` into a
    built annotator (one call per pass, as the JudgePool takes it; None: the in-process batching judge)."""

    store: Store | None = None
    retriever: RetrieverPort | None = None  # the pipeline's and the built agent's
    guard: GuardRole | None = None
    agent: AgentRole | None = None
    annotator: AnnotatorRole | None = None
    writer: Writer | None = None
    judge_fn: JudgeFn | None = None


def build_pipeline(
    cfg: AppConfig,
    parts: Components | None = None,
    *,
    guard_processes: int = 1,
    on_judge_batch: Callable[[int], None] | None = None,
) -> Pipeline:
    """The pipeline of one process (CLI ``ask``, most tests, each Ingress replica): same classes as the Ray
    graph. ``guard_processes`` and ``on_judge_batch`` apply to a guard and a judge built here."""
    from retrieval.port import LocalRetrieverPort
    from serve_app.pipeline import Pipeline

    parts = parts or Components()
    store = parts.store if parts.store is not None else build_store(cfg)
    port = parts.retriever if parts.retriever is not None else LocalRetrieverPort(build_live_retriever(cfg))
    guard = parts.guard
    if guard is None:
        guard = build_guard(cfg, store=store, processes=guard_processes)
    agent = parts.agent
    if agent is None:
        agent = build_agent(cfg, retriever_port=port, writer=parts.writer)
    annotator = parts.annotator
    if annotator is None:
        if parts.judge_fn is None:  # the local collector batches across requests; it wants items one by one
            annotator = build_annotator(cfg, judge_fn=local_judge_fn(cfg, on_batch=on_judge_batch))
        else:
            annotator = build_annotator(cfg, judge_fn=parts.judge_fn, split_items=False)
    return Pipeline(
        config=cfg,
        retriever=port,
        agent=agent,
        annotator=annotator,
        guard=guard,
        store=store,
        models_info=models_info(cfg),
        retention=build_retention(cfg, store),
    )


def build_retention(cfg: AppConfig, store: object) -> RetentionSchedule | None:
    """The after-write pruning of a store, when the config sets a retention age (else None: keep all)."""
    from serve_app.conversation.retention import RetentionPolicy, RetentionSchedule
    from serve_app.conversation.store import Store

    conv = cfg.conversations
    policy = RetentionPolicy(conv.retention_days, conv.memory_retention_days)
    if policy.empty or not isinstance(store, Store):
        return None
    return RetentionSchedule(store, policy, interval_s=conv.prune_interval_s)


def build_inprocess(
    cfg: AppConfig, *, retriever: Retriever | LiveRetriever | None = None, store: Store | None = None
) -> Pipeline:
    """The whole pipeline in one process over ``retriever`` (loaded from the config when None)."""
    from retrieval.port import LocalRetrieverPort

    if cfg.ray_serve_llm is not None:
        raise ConfigError(
            "ray_serve_llm runs the model inside the Ray Serve graph, which the in-process app does not "
            "start; serve it with `aceh-rag serve`, or point the roles at a vLLM server instead."
        )

    port = LocalRetrieverPort(retriever if retriever is not None else build_retriever(cfg))
    return build_pipeline(cfg, Components(store=store, retriever=port))


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
    check_database(cfg)
    from serve_app.runtime.sources import build_live_tools

    build_live_tools(cfg)  # an unusable source fails here, with one sentence, not inside a replica
    if cfg.partners_file and not Path(cfg.partners_file).is_file():
        raise ConfigError(f"Partners file {cfg.partners_file} does not exist.")
    if not cfg.api_keys and not cfg.api_key_hashes:
        raise ConfigError("No API key is configured; set ACEH_API_KEYS (comma-separated).")
    if cfg.ray_serve_llm is not None:
        from serve_app.runtime.ray_llm import check_environment

        check_environment(cfg.ray_serve_llm)  # vLLM's Python lacks Ray or pyarrow: say so before starting


def build_inprocess_app(
    cfg: AppConfig, *, retriever: Retriever | LiveRetriever | None = None, store: Store | None = None,
    pipeline: Pipeline | None = None, sse_keepalive_s: float = 15.0,
) -> Starlette:
    """The Starlette app over the in-process pipeline (tests; the same routes the Ray ingress serves).
    ``sse_keepalive_s``: how long a stream stays silent before a keep-alive comment."""
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
        max_body_bytes=cfg.limits.max_body_bytes,
        metrics=Metrics(),
        health=health,
        model_health=model_health_check(cfg),
        sse_keepalive_s=sse_keepalive_s,
    )
    app = ingress.app()
    app.state.pipeline = pipeline
    return app
