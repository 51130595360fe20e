"""The Ray Serve graph: every ``.bind()`` in one place, built by one typed builder from the config.

HTTP → Ingress (Starlette; calls Guard first) → Agent (→ Retriever) → Annotator (→ JudgePool) → Guard.
Each deployment wraps the same plain object the in-process pipeline uses
(see :mod:`serve_app.runtime.factory`).
Replica counts, CPUs/GPUs and batch settings come from the YAML config, and so does placement: a role named
in ``serve.colocate`` is built inside each Ingress replica instead of as a deployment of its own.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict
from ray import serve
from ray.serve import Application
from ray.serve.handle import DeploymentHandle
from starlette.applications import Starlette

from judge.types import JudgeItem, JudgeResult
from models.json_types import JSONObject
from retrieval.live import version_of
from retrieval.port import LocalRetrieverPort
from retrieval.retriever import Retriever
from retrieval.types import SearchHit
from serve_app.agent.agent import AgentOutcome, AgentRequest
from serve_app.agent.tools.base import EventSink, ToolEvent
from serve_app.answer.annotation import Annotation
from serve_app.answer.segments import AnnotationRequest
from serve_app.budget import RequestBudget
from serve_app.config import ROLES, AppConfig, load_config
from serve_app.guard.admission import Admission
from serve_app.guard.auth import Principal
from serve_app.guard.policy import GuardDecision
from serve_app.metrics import MULTIPROC_ENV, ForeignMetrics, Metrics, shared_dir
from serve_app.runtime import factory, index_setup, ray_llm
from serve_app.runtime.ports import (
    RemoteAgent,
    RemoteAnnotator,
    RemoteGuard,
    RemoteJudgePool,
    RemoteRetriever,
)
from serve_app.wire.relay import Done, relay
from serve_app.wire.tracing import configure_logging

T = TypeVar("T")
# What each deployment's constructor gets from ``.bind()``: the AppConfig dumped to JSON (Ray pickles it).
RawConfig = dict[str, Any]


class AppArgs(BaseModel):
    """Arguments of :func:`app_builder` (``serve run serve_app.app:app_builder config=...``)."""

    model_config = ConfigDict(extra="forbid")
    config: str | None = None


class _Component:
    """Shared bits of every deployment: a health probe and this replica's metrics text."""

    name = "component"

    def _init_component(self, config: RawConfig) -> AppConfig:
        """What every deployment's constructor starts with: logging, metrics and its validated config."""
        configure_logging()  # every replica: JSON log lines with the request's ids
        self.metrics = Metrics()
        return AppConfig.model_validate(config)

    async def health(self) -> str:
        return "ok"

    async def metrics_text(self) -> str:
        return self.metrics.text()

    async def _timed(self, method: str, coro: Awaitable[T]) -> T:
        started = time.perf_counter()
        try:
            return await coro
        finally:
            self.metrics.calls.labels(self.name, method).observe(time.perf_counter() - started)


@serve.deployment(name="Retriever")
class RetrieverDeployment(_Component, LocalRetrieverPort):
    """The retriever's async methods (retrieval.port.LocalRetrieverPort: each runs in a worker thread) over
    the index version the request pinned here; reached through runtime/ports.RemoteRetriever."""

    name = "Retriever"

    def __init__(self, config: RawConfig) -> None:
        from retrieval.live import RequestPins

        live = index_setup.build_live_retriever(self._init_component(config))
        LocalRetrieverPort.__init__(self, live)
        self.pins = RequestPins(live)

    @property
    def retriever(self) -> Retriever:
        """The version this request pinned at its first call here (every call of one request, from the
        Ingress or the Agent, carries Ray's internal id of that request), so one answer reads one version."""
        from ray.serve import context

        ctx = context._serve_request_context.get()
        return self.pins.get(getattr(ctx, "_internal_request_id", None))

    async def pin(self) -> str:
        return version_of(self.retriever)

    async def index_version(self) -> str:
        return self.pins.live.version

    async def search(self, query: str, **options: Any) -> list[SearchHit]:
        return await self._timed("search", super().search(query, **options))


@serve.deployment(name="JudgePool")
class JudgePoolDeployment(_Component):
    """Collects judge items across concurrent requests with ``@serve.batch``; the batching logic itself
    (deadline, grouping by passage, per-item failures) is the Ray-free ``judge_batch``."""

    name = "JudgePool"

    def __init__(self, config: RawConfig) -> None:
        from judge.batching import judge_batch

        cfg = self._init_component(config)
        self.judge = factory.build_judge(cfg)
        self._judge_batch = judge_batch
        # serve.batch adds these setters to the method at run time; its type hints do not show them
        self.judge_items.set_max_batch_size(cfg.judge.max_batch_size)  # type: ignore[attr-defined]
        self.judge_items.set_batch_wait_timeout_s(cfg.judge.batch_wait_timeout_s)  # type: ignore[attr-defined]

    @serve.batch(max_batch_size=32, batch_wait_timeout_s=0.005)
    async def judge_items(self, items: list[JudgeItem]) -> list[JudgeResult]:
        self.metrics.judge_batch.observe(len(items))
        return await self._judge_batch(self.judge, items)

    async def judge_many(self, items: list[JudgeItem]) -> list[JudgeResult]:
        """One request's items enter the shared batch queue; batches that come back before the request's
        deadline keep their verdicts, the rest come back ``unverified``/``deadline``."""
        from judge.batching import unverified

        tasks = [asyncio.ensure_future(self.judge_items(item)) for item in items]
        deadlines = [item.deadline for item in items if item.deadline is not None]
        timeout = max(0.0, max(deadlines) - time.time()) if len(deadlines) == len(items) else None
        try:
            done, pending = await asyncio.wait(tasks, timeout=timeout) if tasks else (set(), set())
        finally:
            for task in tasks:  # a cancelled request (or the deadline) frees its items
                if not task.done():
                    task.cancel()
        results = []
        for item, task in zip(items, tasks, strict=True):
            if task in done and task.exception() is None:
                results.append(task.result())
            else:
                results.append(unverified(item, "deadline" if task in pending else "judge_unavailable"))
        return results


@serve.deployment(name="Annotator")
class AnnotatorDeployment(_Component):
    name = "Annotator"

    def __init__(self, config: RawConfig, judge_pool: DeploymentHandle[JudgePoolDeployment]) -> None:
        cfg = self._init_component(config)
        # One JudgePool call per pass: the pool batches across requests and keeps the verdicts of batches
        # that return before the deadline, so the per-item split (for the in-process collector) is not needed.
        self.annotator = factory.build_annotator(
            cfg, judge_fn=RemoteJudgePool(judge_pool).judge_many, split_items=False
        )

    async def annotate(self, request: AnnotationRequest, *, budget: RequestBudget) -> Annotation:
        """The annotation carries back the budget this replica charged."""
        return await self._timed("annotate", self.annotator.annotate(request, budget=budget))


@serve.deployment(name="Agent")
class AgentDeployment(_Component):
    name = "Agent"

    def __init__(self, config: RawConfig, retriever: DeploymentHandle[RetrieverDeployment]) -> None:
        cfg = self._init_component(config)
        self.agent = factory.build_agent(cfg, retriever_port=RemoteRetriever(retriever))

    async def run(self, req: AgentRequest, budget: RequestBudget) -> AgentOutcome:
        """JSON routes need no tool events: one call, one reply (cheaper than a streaming handle). The
        outcome carries back the budget this replica charged."""
        return await self._timed("run", self.agent.run(req, budget=budget))

    async def run_stream(
        self, req: AgentRequest, budget: RequestBudget
    ) -> AsyncIterator[ToolEvent | Done[AgentOutcome]]:
        """The agent's tool events as they come, then the outcome (a closed stream cancels the run)."""

        def run(on_event: EventSink) -> Awaitable[AgentOutcome]:
            return self.agent.run(req, budget=budget, on_event=on_event)

        async for item in relay(run):
            yield item


@serve.deployment(name="Guard")
class GuardDeployment(_Component):
    name = "Guard"

    def __init__(self, config: RawConfig) -> None:
        cfg = self._init_component(config)
        replicas = cfg.serve.deployment("Guard").guard_processes()
        self.guard = factory.build_guard(cfg, store=factory.build_store(cfg), processes=replicas)

    # The methods of roles.GuardRole, reached through runtime/ports.RemoteGuard.
    async def admit(self, headers: Mapping[str, str], question: str | None = None) -> Admission:
        return await self._timed("admit", self.guard.admit(headers, question))

    async def verified_identity_enabled(self) -> bool:
        return await self.guard.verified_identity_enabled()

    async def playground_limit(self, principal: Principal) -> str | None:
        return await self.guard.playground_limit(principal)

    async def screen_request(self, query: str, history: Sequence[str] = ()) -> GuardDecision:
        return await self.guard.screen_request(query, history)

    async def check_answer(self, answer: str, passages: Sequence[str] = ()) -> GuardDecision:
        return await self.guard.check_answer(answer, passages)

    async def refusal_text(self, kind: str) -> str:
        return await self.guard.refusal_text(kind)


if TYPE_CHECKING:  # Ray's handles are generic in the deployment class; at run time these are Deployments
    # The handle of any role: each has the _Component probes (health, metrics_text).
    RoleHandle = (
        DeploymentHandle[GuardDeployment]
        | DeploymentHandle[RetrieverDeployment]
        | DeploymentHandle[AgentDeployment]
        | DeploymentHandle[AnnotatorDeployment]
        | DeploymentHandle[JudgePoolDeployment]
    )


@serve.deployment(name="Ingress")
@serve.ingress()
class IngressDeployment(_Component):
    name = "Ingress"

    def __init__(
        self,
        config: RawConfig,
        guard: DeploymentHandle[GuardDeployment] | None,
        retriever: DeploymentHandle[RetrieverDeployment] | None,
        agent: DeploymentHandle[AgentDeployment] | None,
        annotator: DeploymentHandle[AnnotatorDeployment] | None,
        judge_pool: DeploymentHandle[JudgePoolDeployment] | None,
        llm: DeploymentHandle[Any] | None = None,
    ) -> None:
        """Each handle is None when its role is colocated (built in this replica). ``llm`` (the in-graph Ray
        Serve LLM deployment, config ray_serve_llm) is bound here so that it is part of this application; the
        roles reach it by name from whichever replica builds them (serve_app/runtime/ray_llm.py), and
        /healthz probes it like a model server."""
        del llm
        cfg = self._init_component(config)
        remote = dict(zip(ROLES, (guard, retriever, agent, annotator, judge_pool), strict=True))
        # Colocated roles have no handle: they are plain objects in this replica, healthy while it is.
        self.handles: dict[str, RoleHandle] = {
            name: handle for name, handle in remote.items() if handle is not None
        }
        self.colocated = [name for name, handle in remote.items() if handle is None]
        parts = factory.Components(
            store=factory.build_store(cfg),
            guard=RemoteGuard(guard) if guard is not None else None,
            retriever=RemoteRetriever(retriever) if retriever is not None else None,
            agent=RemoteAgent(agent) if agent is not None else None,
            annotator=RemoteAnnotator(annotator) if annotator is not None else None,
            judge_fn=RemoteJudgePool(judge_pool).judge_many if judge_pool is not None else None,
        )
        self.pipeline = factory.build_pipeline(
            cfg,
            parts,
            guard_processes=cfg.serve.deployment("Ingress").guard_processes(),
            on_judge_batch=self.metrics.judge_batch.observe,
        )
        self.foreign = ForeignMetrics()
        self.metrics.registry.register(self.foreign)
        import ray

        self.node_id: str = ray.get_runtime_context().get_node_id()

    async def _health(self) -> dict[str, str]:
        async def probe(name: str, handle: RoleHandle) -> tuple[str, str]:
            try:
                return name, await asyncio.wait_for(handle.health.remote(), timeout=5)
            except Exception:  # noqa: BLE001
                return name, "unavailable"

        results = await asyncio.gather(*(probe(n, h) for n, h in self.handles.items()))
        return {"Ingress": "ok", **{name: "ok" for name in self.colocated}, **dict(results)}

    async def _metrics_text(self) -> str:
        if shared_dir():
            return self.metrics.text()  # every replica on this node, from the shared folder
        for name, handle in self.handles.items():
            try:
                self.foreign.texts[name] = await asyncio.wait_for(handle.metrics_text.remote(), timeout=5)
            except Exception:  # noqa: BLE001 - a missing replica must not break the scrape
                continue
        return self.metrics.text()

    def __serve_build_asgi_app__(self) -> Starlette:
        from serve_app.ingress import Ingress

        ingress = Ingress(
            self.pipeline,
            max_body_bytes=self.pipeline.config.limits.max_body_bytes,
            metrics=self.metrics,
            health=self._health,
            metrics_text=self._metrics_text,
            model_health=factory.model_health_check(self.pipeline.config),
            behind_ray_proxy=True,
            node_id=self.node_id,
        )
        return ingress.app()


def deployment_options(cfg: AppConfig, name: str, *, env_vars: dict[str, str]) -> JSONObject:
    """Ray Serve's options for one deployment, from its ``serve.deployments`` entry (also what
    :mod:`serve_app.runtime.kuberay` writes into a RayService). ``env_vars`` join the application's
    runtime_env (Ray merges them)."""
    d = cfg.serve.deployment(name)
    actor: JSONObject = {"num_cpus": d.num_cpus, "runtime_env": {"env_vars": env_vars}}
    if d.num_gpus:
        actor["num_gpus"] = d.num_gpus
    if d.resources:
        actor["resources"] = dict(d.resources)
    options: JSONObject = {
        "ray_actor_options": actor,
        "max_ongoing_requests": d.max_ongoing_requests,
        # Requests here end within the configured deadline; Ctrl-C need not wait Serve's default 20 s.
        "graceful_shutdown_timeout_s": cfg.budgets.deadline_s + 2,
        "graceful_shutdown_wait_loop_s": 0.5,
    }
    if d.autoscaling is None:
        options["num_replicas"] = d.num_replicas
    else:
        options["autoscaling_config"] = {
            **d.autoscaling.model_dump(),
            "initial_replicas": d.num_replicas,
        }
    return options


def build_app(cfg: AppConfig) -> Application:
    """Bind every deployment with its YAML options and compose them with handles."""
    raw = cfg.model_dump(mode="json")
    # One metrics folder per application build: replicas of every deployment write there, /metrics sums it.
    metrics_dir = os.path.join(tempfile.gettempdir(), f"aceh-metrics-{uuid.uuid4().hex[:12]}")

    def opts(name: str) -> JSONObject:
        return deployment_options(cfg, name, env_vars={MULTIPROC_ENV: metrics_dir})

    def bind(name: str, deployment: Any, *args: Any) -> Any:
        """A colocated role is built inside the Ingress replica: no deployment, no handle (None)."""
        return None if cfg.serve.is_colocated(name) else deployment.options(**opts(name)).bind(raw, *args)

    retriever = bind("Retriever", RetrieverDeployment)
    judge_pool = bind("JudgePool", JudgePoolDeployment)
    annotator = bind("Annotator", AnnotatorDeployment, judge_pool)
    agent = bind("Agent", AgentDeployment, retriever)
    guard = bind("Guard", GuardDeployment)
    llm = ray_llm.bind_llm(cfg, env_vars={MULTIPROC_ENV: metrics_dir})
    # serve.deployment turns the class into a Deployment, which mypy cannot see through the decorator
    app: Application = IngressDeployment.options(**opts("Ingress")).bind(  # type: ignore[attr-defined]
        raw, guard, retriever, agent, annotator, judge_pool, llm
    )
    return app


def app_builder(args: dict[str, Any]) -> Application:
    """Entry point for ``serve run`` / ``serve deploy`` (see configs/serve_deploy.yaml)."""
    parsed = AppArgs.model_validate(args)
    return build_app(load_config(parsed.config))
