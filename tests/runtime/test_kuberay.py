"""The committed RayService manifest is what ``make kuberay`` generates from configs/serve_deploy.yaml, and it
carries every deployment and every option of that config. No Kubernetes cluster exists here: the manifest is
checked as data (and its Serve config by Ray's own schema), never applied."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from serve_app.config import ConfigError, load_config
from serve_app.runtime import kuberay

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "deploy" / "kuberay" / "rayservice.yaml"
SERVE_DEPLOY = REPO / "configs" / "serve_deploy.yaml"


def _generated(images: kuberay.Images = kuberay.Images()) -> str:
    return kuberay.manifest(SERVE_DEPLOY.read_text(encoding="utf-8"), images)


def _contains(outer: Any, inner: Any) -> bool:
    """Every key and value of ``inner`` is in ``outer`` (lists: item by item)."""
    if isinstance(inner, dict):
        return isinstance(outer, dict) and all(
            k in outer and _contains(outer[k], v) for k, v in inner.items()
        )
    if isinstance(inner, list):
        return isinstance(outer, list) and len(outer) == len(inner) and all(map(_contains, outer, inner))
    return bool(outer == inner)


def test_committed_manifest_is_the_generated_one() -> None:
    assert MANIFEST.read_text(encoding="utf-8") == _generated(), "run `make kuberay` and commit the result"


def test_every_option_of_serve_deploy_and_every_deployment_is_in_the_manifest() -> None:
    doc = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert (doc["apiVersion"], doc["kind"]) == ("ray.io/v1", "RayService")
    serve_cfg = yaml.safe_load(doc["spec"]["serveConfigV2"])
    source = yaml.safe_load(SERVE_DEPLOY.read_text(encoding="utf-8"))
    app, src_app = serve_cfg["applications"][0], source["applications"][0]
    assert _contains(serve_cfg, {k: v for k, v in source.items() if k != "applications"})
    assert _contains(app, {k: v for k, v in src_app.items() if k != "deployments"})
    for key in kuberay.CODE_SHIPPING_KEYS:  # the image holds the code: no working_dir, no uploaded modules
        assert key not in app.get("runtime_env", {})

    cfg = load_config(str(REPO / src_app["args"]["config"]), env={})
    entries = {entry["name"]: entry for entry in app["deployments"]}
    assert list(entries) == ["Ingress", "Guard", "Retriever", "Agent", "Annotator", "JudgePool"]
    for name, entry in entries.items():
        d = cfg.serve.deployment(name)
        assert d.autoscaling is not None, f"{name} has no autoscaling in {src_app['args']['config']}"
        assert entry["autoscaling_config"] == {
            "min_replicas": d.autoscaling.min_replicas,
            "max_replicas": d.autoscaling.max_replicas,
            "target_ongoing_requests": d.autoscaling.target_ongoing_requests,
            "initial_replicas": d.num_replicas,
        }
        assert entry["max_ongoing_requests"] == d.max_ongoing_requests
        assert "num_replicas" not in entry and "ray_actor_options" not in entry

    # Ray's own schema of a Serve config file accepts it as KubeRay will hand it over.
    from ray.serve.schema import ServeDeploySchema

    ServeDeploySchema.model_validate(serve_cfg)


def test_worker_groups_hold_the_deployments_at_their_bounds() -> None:
    doc = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    cluster = doc["spec"]["rayClusterConfig"]
    assert cluster["enableInTreeAutoscaling"] is True
    assert cluster["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"  # no replicas on the head
    groups = {g["groupName"]: g for g in cluster["workerGroupSpecs"]}
    cfg = load_config(str(REPO / "configs" / "gpu.yaml"), env={})
    gpus_max = cpus_max = 0.0
    for name in kuberay.deployments_of(cfg):
        d = cfg.serve.deployment(name)
        assert d.autoscaling is not None
        gpus_max += d.num_gpus * d.autoscaling.max_replicas
        cpus_max += 0 if d.num_gpus else d.num_cpus * d.autoscaling.max_replicas
    assert groups["gpu-workers"]["maxReplicas"] >= math.ceil(gpus_max)
    assert groups["cpu-workers"]["maxReplicas"] * kuberay.WORKER_CPUS >= cpus_max
    for group in groups.values():
        assert 0 < group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
    gpu_pod = groups["gpu-workers"]["template"]["spec"]["containers"][0]
    assert gpu_pod["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_images_are_parameters() -> None:
    text = _generated(kuberay.Images(cpu="registry.example/aceh:cpu-1", gpu="registry.example/aceh:gpu-1"))
    doc = yaml.safe_load(text)
    cluster = doc["spec"]["rayClusterConfig"]
    images = {c["image"] for c in cluster["headGroupSpec"]["template"]["spec"]["containers"]}
    for group in cluster["workerGroupSpecs"]:
        images |= {c["image"] for c in group["template"]["spec"]["containers"]}
    assert images == {"registry.example/aceh:cpu-1", "registry.example/aceh:gpu-1"}


def test_a_runtime_env_that_ships_code_is_refused() -> None:
    source = yaml.safe_load(SERVE_DEPLOY.read_text(encoding="utf-8"))
    source["applications"][0]["runtime_env"]["working_dir"] = "."
    with pytest.raises(ConfigError, match="working_dir"):
        kuberay.manifest(yaml.safe_dump(source), kuberay.Images())


def test_an_unknown_deployment_override_is_refused() -> None:
    source = yaml.safe_load(SERVE_DEPLOY.read_text(encoding="utf-8"))
    source["applications"][0]["deployments"] = [{"name": "Reranker", "max_ongoing_requests": 8}]
    with pytest.raises(ConfigError, match="Reranker"):
        kuberay.manifest(yaml.safe_dump(source), kuberay.Images())
