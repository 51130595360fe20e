"""Every metric, defined once, so operators scrape one place: the ingress's ``/metrics``.

In the Ray Serve graph every replica records into prometheus-client's multiprocess files in one folder per
application and node (``PROMETHEUS_MULTIPROC_DIR``, set by the graph builder), and ``/metrics`` sums them:
all replicas of all deployments on the node that answers the scrape, whichever Ingress replica that is.
Without that folder (a graph started by hand) the ingress re-exports one replica's text per deployment
handle instead (:class:`ForeignMetrics`, ``deployment`` label added). Every metric is a counter or a
histogram, which the multiprocess mode sums without further settings."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from models.base import CallRecord

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)


# Model calls, per role: defined once per process (unregistered) because the engines that record them are
# built by the factory, wherever a role runs; every Metrics registry exports them, and in multiprocess mode
# their values go to the shared folder like every other metric's.
MODEL_CALLS = Counter(
    "aceh_model_calls_total",
    "Calls to a model server by role and outcome",
    ["role", "engine", "outcome"],
    registry=None,
)
MODEL_TOKENS = Counter(
    "aceh_model_tokens_total",
    "Prompt and completion tokens of model calls",
    ["role", "kind"],
    registry=None,
)
MODEL_LATENCY = Histogram(
    "aceh_model_call_duration_seconds",
    "Model call latency by role",
    ["role"],
    buckets=LATENCY_BUCKETS,
    registry=None,
)
MODEL_FAILURES = Counter(
    "aceh_model_call_failures_total",
    "Failed model calls by role and error code",
    ["role", "error"],
    registry=None,
)
# The judge's reasons for each unsupported claim verdict, counted where verdicts are produced
# (serve_app.answer.annotate), in whichever replica that runs: the judge library itself knows no metrics.
JUDGE_UNSUPPORTED_REASONS = Counter(
    "aceh_judge_unsupported_reasons_total",
    "Reason codes of unsupported claim verdicts (one verdict may carry several)",
    ["reason"],
    registry=None,
)
MODEL_COLLECTORS = (MODEL_CALLS, MODEL_TOKENS, MODEL_LATENCY, MODEL_FAILURES, JUDGE_UNSUPPORTED_REASONS)
_REASON_RE = re.compile(r"[a-z][a-z_]{0,47}")


def observe_model_call(record: CallRecord) -> None:
    """Count one model call (a batched classify is one call) from its record."""
    MODEL_CALLS.labels(record.role, record.engine, "ok" if record.ok else "error").inc()
    MODEL_TOKENS.labels(record.role, "prompt").inc(record.prompt_tokens)
    MODEL_TOKENS.labels(record.role, "completion").inc(record.completion_tokens)
    MODEL_LATENCY.labels(record.role).observe(record.latency_ms / 1000)
    if not record.ok:
        MODEL_FAILURES.labels(record.role, record.error or "unknown").inc()


def observe_unsupported(reasons: Iterable[str]) -> None:
    """Count the reason codes of one unsupported verdict; a reason that is no code (free text from a model
    judge) counts as ``other``, so the label's values stay few."""
    for reason in dict.fromkeys(reasons) or ("none",):
        JUDGE_UNSUPPORTED_REASONS.labels(reason if _REASON_RE.fullmatch(reason) else "other").inc()


def shared_dir() -> str | None:
    """The multiprocess folder of this process, or None (prometheus-client reads the variable itself)."""
    return os.environ.get(MULTIPROC_ENV) or None


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        folder = shared_dir()
        if folder:  # must exist before the first value is written; a replica on a new node makes it
            os.makedirs(folder, exist_ok=True)
        self.registry = registry or CollectorRegistry()
        for collector in MODEL_COLLECTORS:
            self.registry.register(collector)
        self.requests = self._counter(
            "aceh_http_requests_total", "HTTP requests by route and status", "route", "status"
        )
        self.latency = self._histogram(
            "aceh_http_request_duration_seconds", "HTTP request latency by route", "route"
        )
        self.calls = self._histogram(
            "aceh_deployment_call_duration_seconds",
            "Time spent in a deployment method",
            "deployment",
            "method",
        )
        self.judge_batch = self._histogram(
            "aceh_judge_batch_size", "Judge items per engine batch", buckets=BATCH_BUCKETS
        )
        self.verdicts = self._counter("aceh_claim_verdicts_total", "Published claim verdicts", "verdict")
        self.unverified = self._counter(
            "aceh_unverified_claims_total",
            "Published claims marked unverified, by unverified_reason",
            "reason",
        )
        self.answers = self._counter(
            "aceh_answers_total", "Published answers by verification (full, partial, none)", "verification"
        )
        self.node_responses = self._counter(
            "aceh_node_responses_total",
            "HTTP responses by the Ray node of the Ingress replica that answered (graph only)",
            "node",
        )
        self.refusals = self._counter("aceh_refusals_total", "Published refusals by reason", "reason")

    # One way to make each metric: registered in this registry; a histogram's buckets are latency ones unless
    # it counts something else.
    def _counter(self, name: str, documentation: str, *labels: str) -> Counter:
        return Counter(name, documentation, labels, registry=self.registry)

    def _histogram(
        self, name: str, documentation: str, *labels: str, buckets: tuple[float, ...] = LATENCY_BUCKETS
    ) -> Histogram:
        return Histogram(name, documentation, labels, buckets=buckets, registry=self.registry)

    def text(self) -> str:
        """This process's metrics, or, in multiprocess mode, the sum over every process of the folder."""
        folder = shared_dir()
        if not folder:
            return generate_latest(self.registry).decode()
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=folder)
        return generate_latest(merged).decode()


class ForeignMetrics:
    """A collector re-exporting other processes' exposition text with a ``deployment`` label."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def collect(self) -> Iterable[Metric]:
        merged: dict[str, Metric] = {}
        for deployment, text in sorted(self.texts.items()):
            for family in text_string_to_metric_families(text):
                out = merged.get(family.name)
                if out is None:
                    out = Metric(family.name, family.documentation, family.type)
                    merged[family.name] = out
                for s in family.samples:
                    labels = dict(s.labels, deployment=deployment)
                    out.add_sample(s.name, labels, s.value, s.timestamp, s.exemplar)
        yield from merged.values()
