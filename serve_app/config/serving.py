"""How the Ray Serve graph is placed: replicas, autoscaling, resources per deployment, and which roles run
inside the Ingress replicas."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, model_validator

from serve_app.config.base import StrictModel


class AutoscalingConfig(StrictModel):
    """Ray Serve's replica autoscaling for one deployment (its ``autoscaling_config``): replicas are added
    while the average ongoing requests per replica stay above the target, removed while below."""

    min_replicas: int = Field(ge=1)
    max_replicas: int = Field(ge=1)
    target_ongoing_requests: float = Field(gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> AutoscalingConfig:
        if self.max_replicas < self.min_replicas:
            raise ValueError(
                f"max_replicas ({self.max_replicas}) is below min_replicas ({self.min_replicas})"
            )
        return self


class DeploymentConfig(StrictModel):
    # With `autoscaling`, num_replicas is the count it starts with (Ray's initial_replicas).
    num_replicas: int = Field(default=1, ge=1)
    num_cpus: float = 0.1
    num_gpus: float = 0.0
    max_ongoing_requests: int = 64
    autoscaling: AutoscalingConfig | None = None
    # Custom Ray resources each replica needs (pins replicas to the nodes that offer them).
    resources: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _replicas_within_bounds(self) -> DeploymentConfig:
        scale = self.autoscaling
        if scale is not None and not scale.min_replicas <= self.num_replicas <= scale.max_replicas:
            raise ValueError(
                f"num_replicas ({self.num_replicas}) is the count an autoscaled deployment starts with and "
                f"must lie between autoscaling.min_replicas ({scale.min_replicas}) and max_replicas "
                f"({scale.max_replicas})"
            )
        return self

    def guard_processes(self) -> int:
        """How many replicas share the per-key rate limits: the fewest an autoscaled deployment runs, so the
        configured limit holds at that size (more replicas raise it in proportion)."""
        return self.autoscaling.min_replicas if self.autoscaling is not None else self.num_replicas


Role = Literal["Guard", "Retriever", "Agent", "Annotator", "JudgePool"]
# Every deployment behind the Ingress, in the order the Ingress takes their handles.
ROLES: tuple[str, ...] = get_args(Role)
# A role that calls another: the callee must be reachable from where the caller runs.
_CALLS: dict[str, str] = {"Agent": "Retriever", "Annotator": "JudgePool"}


class ServeConfig(StrictModel):
    host: str = "127.0.0.1"
    # The address a local Ray binds its own ports to (GCS, raylet, object manager, dashboard): loopback on
    # one machine; a node's address (or 0.0.0.0) only for a cluster (runtime/ray_bind.py, README "Cluster").
    # ACEH_RAY_HOST overrides it. Ignored when RAY_ADDRESS joins a running cluster.
    ray_host: str = Field(default="127.0.0.1", min_length=1)
    deployments: dict[str, DeploymentConfig] = Field(default_factory=dict)
    # Roles built inside each Ingress replica instead of as deployments of their own. Every hop between
    # replicas costs CPU (serialisation, an actor call, an event-loop turn on each side); on a small machine
    # that costs more than the role itself, while on a cluster separate deployments scale and place apart.
    colocate: list[Role] = Field(default_factory=list)
    # Ray Serve's HAProxy mode: HAProxy (a C program, installed separately) in front of the Ingress replicas'
    # own HTTP servers instead of Ray's Python proxy. Ray then binds those servers on all interfaces.
    haproxy: bool = False

    @model_validator(mode="after")
    def _placement(self) -> ServeConfig:
        here = set(self.colocate)
        for caller, callee in _CALLS.items():
            if callee in here and caller not in here:
                raise ValueError(
                    f"{caller} runs as its own deployment but calls {callee}, which is colocated in the "
                    f"Ingress; colocate {caller} too or run {callee} as a deployment"
                )
        return self

    def deployment(self, name: str) -> DeploymentConfig:
        return self.deployments.get(name, DeploymentConfig())

    def is_colocated(self, role: str) -> bool:
        return role in self.colocate
