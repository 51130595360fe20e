"""The KubeRay ``RayService`` manifest, generated from ``configs/serve_deploy.yaml`` (``make kuberay``).

``serveConfigV2`` is that Ray Serve config as it stands, plus one ``deployments`` entry per deployment of
the graph with the options the graph builder sets from the aceh-rag YAML its ``args.config`` names
(replicas or ``autoscaling_config``, ``max_ongoing_requests``, shutdown timings), so an operator sees and
tunes them in the RayService. Ray applies config-file options over the builder's, so values left as
generated change nothing; ``ray_actor_options`` are left to the builder, because a config-file entry would
replace them whole and drop the metrics folder it sets. The Ray cluster has a head (no replicas: ``num-cpus``
0; the Serve controller and a proxy), a CPU worker group and a GPU worker group, each sized from the
deployments' autoscaling bounds. No ``working_dir`` or ``py_modules``: the image carries the installed wheel
(deploy/Dockerfile.cpu, deploy/Dockerfile.gpu), and the config refuses a runtime_env that ships code.

    python -m serve_app.runtime.kuberay [--image-cpu IMAGE] [--image-gpu IMAGE] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from serve_app.app import deployment_options
from serve_app.config import DATA_ROOT, ROLES, AppConfig, ConfigError, load_config
from serve_app.runtime.serve_runner import RAY_ENV

SERVE_DEPLOY = DATA_ROOT / "configs" / "serve_deploy.yaml"
DEFAULT_OUT = Path("deploy/kuberay/rayservice.yaml")
# runtime_env keys that ship code or a source path into the cluster: the image holds the package instead.
CODE_SHIPPING_KEYS = ("working_dir", "py_modules", "py_executable")
INDEX_MOUNT = "/srv/aceh/index"
WORKER_CPUS = 8  # logical CPUs of one CPU worker pod (and of one GPU pod, next to its one GPU)
HEAD_PORTS = [("gcs-server", 6379), ("dashboard", 8265), ("client", 10001), ("serve", 8000)]


@dataclass(frozen=True)
class Images:
    cpu: str = "aceh-rag:0.1.0-cpu"
    gpu: str = "aceh-rag:0.1.0-gpu"


class _Literal(str):
    """Dumped as a YAML block (``|``), so serveConfigV2 reads as the YAML it holds."""


def _literal(dumper: yaml.SafeDumper, value: _Literal) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style="|")


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML's classes are untyped here
    pass


_Dumper.add_representer(_Literal, _literal)


def _dump(data: Any) -> str:
    text: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=110, allow_unicode=True)
    return text


def deployments_of(cfg: AppConfig) -> list[str]:
    """The graph's deployments for this config, in build order (a colocated role is no deployment)."""
    return ["Ingress", *(role for role in ROLES if not cfg.serve.is_colocated(role))]


def serve_config(serve_deploy: dict[str, Any]) -> tuple[dict[str, Any], AppConfig]:
    """The Ray Serve config with each deployment's options written out, and the aceh-rag config behind it."""
    apps = serve_deploy.get("applications") or []
    if len(apps) != 1:
        raise ConfigError("serve_deploy.yaml must hold exactly one application (the aceh-rag graph).")
    app = apps[0]
    shipped = [key for key in CODE_SHIPPING_KEYS if key in (app.get("runtime_env") or {})]
    if shipped:
        raise ConfigError(
            f"serve_deploy.yaml's runtime_env sets {', '.join(shipped)}; the image carries the installed "
            "package, so no code or working directory is shipped."
        )
    cfg = load_config((app.get("args") or {}).get("config"), env={})
    given = {entry["name"]: entry for entry in app.get("deployments") or []}
    unknown = sorted(set(given) - set(deployments_of(cfg)))
    if unknown:
        raise ConfigError(
            f"serve_deploy.yaml names deployments the graph does not have: {', '.join(unknown)}."
        )
    entries = []
    for name in deployments_of(cfg):
        options = deployment_options(cfg, name, env_vars={})
        options.pop("ray_actor_options")
        entries.append({"name": name, **options, **given.get(name, {})})
    out = {**serve_deploy, "applications": [{**app, "deployments": entries}]}
    return out, cfg


def _replica_bounds(cfg: AppConfig, name: str) -> tuple[int, int]:
    d = cfg.serve.deployment(name)
    if d.autoscaling is None:
        return d.num_replicas, d.num_replicas
    return d.autoscaling.min_replicas, d.autoscaling.max_replicas


def worker_groups(cfg: AppConfig, images: Images) -> list[dict[str, Any]]:
    """A CPU group for deployments without GPUs and a GPU group (one GPU a pod) for those with, each sized
    to hold its deployments at their min and max replica counts."""
    need: dict[str, list[float]] = {"cpu": [0.0, 0.0], "gpu_cpu": [0.0, 0.0], "gpu": [0.0, 0.0]}
    for name in deployments_of(cfg):
        d = cfg.serve.deployment(name)
        low, high = _replica_bounds(cfg, name)
        cpu_key = "gpu_cpu" if d.num_gpus else "cpu"
        need[cpu_key][0] += low * d.num_cpus
        need[cpu_key][1] += high * d.num_cpus
        need["gpu"][0] += low * d.num_gpus
        need["gpu"][1] += high * d.num_gpus

    def pods(cpus: float, gpus: float = 0.0) -> int:
        return max(math.ceil(round(cpus / WORKER_CPUS, 6)), math.ceil(round(gpus, 6)))

    cpu_min, cpu_max = pods(need["cpu"][0]), pods(need["cpu"][1])
    gpu_min = pods(need["gpu_cpu"][0], need["gpu"][0])
    gpu_max = pods(need["gpu_cpu"][1], need["gpu"][1])
    return [
        _group("cpu-workers", images.cpu, cpu_min, cpu_max, gpus=0),
        _group("gpu-workers", images.gpu, gpu_min, gpu_max, gpus=1),
    ]


def _group(name: str, image: str, low: int, high: int, *, gpus: int) -> dict[str, Any]:
    limits: dict[str, Any] = {"cpu": str(WORKER_CPUS), "memory": "32Gi"}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    container = _container("ray-worker", image, limits)
    spec: dict[str, Any] = {"containers": [container], "volumes": _volumes()}
    if gpus:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return {
        "groupName": name,
        "replicas": low,
        "minReplicas": low,
        "maxReplicas": high,
        "rayStartParams": {},
        "template": {"spec": spec},
    }


def _container(name: str, image: str, limits: dict[str, Any], ports: Sequence[tuple[str, int]] = ()) -> Any:
    # Ray reads its RAY_* switches once per process: they belong where each node starts, not in runtime_env.
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in RAY_ENV.items()]
    env += [
        {"name": "ACEH_INDEX_DIR", "value": INDEX_MOUNT},
        _secret("ACEH_API_KEYS", "api-keys"),
        # Ingress replicas on several nodes share conversations and playground limits: PostgreSQL.
        _secret("ACEH_DATABASE_URL", "database-url"),
    ]
    container: dict[str, Any] = {
        "name": name,
        "image": image,
        "env": env,
        "resources": {"limits": limits, "requests": dict(limits)},
        "volumeMounts": [
            {"name": "index", "mountPath": INDEX_MOUNT, "readOnly": True},
            {"name": "shm", "mountPath": "/dev/shm"},
        ],
    }
    if ports:
        container["ports"] = [{"name": n, "containerPort": p} for n, p in ports]
    return container


def _secret(variable: str, key: str) -> dict[str, Any]:
    return {"name": variable, "valueFrom": {"secretKeyRef": {"name": "aceh-rag", "key": key}}}


def _volumes() -> list[dict[str, Any]]:
    return [
        # The index built by `aceh-rag ingest` on shared storage, read by every Retriever replica.
        {"name": "index", "persistentVolumeClaim": {"claimName": "aceh-index", "readOnly": True}},
        {"name": "shm", "emptyDir": {"medium": "Memory"}},  # Ray's object store
    ]


def manifest(serve_deploy_text: str, images: Images) -> str:
    """The RayService manifest (YAML text) for the Serve config text ``serve_deploy_text``."""
    serve_deploy = yaml.safe_load(serve_deploy_text)
    if not isinstance(serve_deploy, dict):
        raise ConfigError("serve_deploy.yaml must hold a mapping at the top level.")
    serve_cfg, cfg = serve_config(serve_deploy)
    head = _container("ray-head", images.cpu, {"cpu": "2", "memory": "8Gi"}, HEAD_PORTS)
    doc = {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "aceh-rag"},
        "spec": {
            "serveConfigV2": _Literal(_dump(serve_cfg)),
            "rayClusterConfig": {
                "rayVersion": metadata.version("ray"),
                # KubeRay's autoscaler adds worker pods when Serve's replicas do not fit, removes idle ones.
                "enableInTreeAutoscaling": True,
                "autoscalerOptions": {"upscalingMode": "Default", "idleTimeoutSeconds": 120},
                "headGroupSpec": {
                    "rayStartParams": {"num-cpus": "0", "dashboard-host": "0.0.0.0"},
                    "template": {"spec": {"containers": [head], "volumes": _volumes()}},
                },
                "workerGroupSpecs": worker_groups(cfg, images),
            },
        },
    }
    header = (
        "# Generated by `make kuberay` (python -m serve_app.runtime.kuberay) from\n"
        "# configs/serve_deploy.yaml and the aceh-rag config it names; edit those and regenerate\n"
        "# (tests/runtime/test_kuberay.py compares).\n"
        "# Needs: a Secret `aceh-rag` (keys api-keys, database-url: postgresql://...), a ReadOnlyMany PVC\n"
        "# `aceh-index` holding the index, the vLLM services named in the aceh-rag config, images built\n"
        "# from deploy/Dockerfile.cpu and deploy/Dockerfile.gpu.\n"
    )
    return header + _dump(doc)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m serve_app.runtime.kuberay", description=__doc__)
    p.add_argument("--serve-deploy", default=str(SERVE_DEPLOY), help="the Ray Serve config to wrap")
    p.add_argument("--image-cpu", default=Images.cpu, help="image of the head and the CPU workers")
    p.add_argument("--image-gpu", default=Images.gpu, help="image of the GPU workers")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="where to write the manifest ('-': stdout)")
    args = p.parse_args(argv)
    try:
        source = Path(args.serve_deploy).read_text(encoding="utf-8")
        text = manifest(source, Images(args.image_cpu, args.image_gpu))
    except (ConfigError, OSError) as exc:
        print(f"aceh-rag: {exc}", file=sys.stderr)
        return 2
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
