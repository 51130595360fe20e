"""serve_app/config/: the deployment options a cluster needs (autoscaling, custom resources) and where
relative paths resolve in a source checkout and in an installed wheel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from serve_app import config as config_module
from serve_app.config import DeploymentConfig, load_config
from serve_app.config import paths as config_paths

REPO = Path(__file__).resolve().parents[2]


def test_autoscaling_bounds_are_checked() -> None:
    scale = {"min_replicas": 2, "max_replicas": 4, "target_ongoing_requests": 8}
    d = DeploymentConfig.model_validate({"num_replicas": 3, "autoscaling": scale})
    assert d.guard_processes() == 2  # rate limits split over the fewest replicas that run
    assert DeploymentConfig(num_replicas=3).guard_processes() == 3
    with pytest.raises(ValidationError, match="between autoscaling.min_replicas"):
        DeploymentConfig.model_validate({"num_replicas": 5, "autoscaling": scale})
    with pytest.raises(ValidationError, match="below min_replicas"):
        DeploymentConfig.model_validate({"autoscaling": {**scale, "max_replicas": 1}})
    with pytest.raises(ValidationError):
        DeploymentConfig.model_validate({"autoscaling": {**scale, "target_ongoing_requests": 0}})


def test_deployment_options_carry_autoscaling_and_resources() -> None:
    from serve_app.app import deployment_options

    cfg = load_config(str(REPO / "configs" / "gpu.yaml"), env={})
    judge = deployment_options(cfg, "JudgePool", env_vars={"X": "1"})
    assert "num_replicas" not in judge
    assert judge["autoscaling_config"] == {
        "min_replicas": 2,
        "max_replicas": 8,
        "target_ongoing_requests": 128.0,
        "initial_replicas": 4,
    }
    pin = {"autoscaling": None, "resources": {"slot": 1}}
    pinned = cfg.serve.deployment("Ingress").model_copy(update=pin)
    deployments = {**cfg.serve.deployments, "Ingress": pinned}
    serve = cfg.serve.model_copy(update={"deployments": deployments})
    ingress: dict[str, Any] = deployment_options(  # read deep here, as a test
        cfg.model_copy(update={"serve": serve}), "Ingress", env_vars={}
    )
    assert ingress["num_replicas"] == 2 and "autoscaling_config" not in ingress
    assert ingress["ray_actor_options"]["resources"] == {"slot": 1}


def test_relative_paths_from_the_checkout_or_the_installed_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert config_module.resolve_path("configs/policy.yaml") == REPO / "configs" / "policy.yaml"
    # Installed: the files the wheel ships come from the package, the operator's paths from the cwd.
    packaged = tmp_path / "site" / "serve_app" / "_data"
    (packaged / "configs").mkdir(parents=True)
    (packaged / "configs" / "gpu.yaml").write_text((REPO / "configs" / "gpu.yaml").read_text())
    monkeypatch.setattr(config_paths, "PACKAGED_ROOT", packaged)
    monkeypatch.setattr(config_paths, "INSTALLED", True)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert config_module.resolve_path("configs/gpu.yaml") == packaged / "configs" / "gpu.yaml"
    assert config_module.resolve_path(".aceh/index") == work / ".aceh" / "index"
    assert config_module.resolve_path("/abs/index") == Path("/abs/index")
    # serve_deploy.yaml's `args.config: configs/gpu.yaml` names the shipped file from any working directory
    assert load_config("configs/gpu.yaml", env={}).serve.deployment("JudgePool").num_replicas == 4
    with pytest.raises(config_module.ConfigError, match="Config file configs/nope.yaml does not exist"):
        load_config("configs/nope.yaml", env={})


def test_rule_veto_is_refused_where_it_would_do_nothing(tmp_path: Path) -> None:
    """The embedded judge is the rules themselves: ``judge.rule_veto: false`` there asks for something it
    cannot do, so loading refuses it; ``true`` describes it as it is; an LLM judge takes either."""
    embedded = tmp_path / "embedded.yaml"
    embedded.write_text("roles:\n  judge: {engine: embedded}\njudge:\n  rule_veto: false\n")
    refused = "judge.rule_veto: false applies only to an LLM judge"
    with pytest.raises(config_module.ConfigError, match=refused):
        load_config(str(embedded), env={})
    embedded.write_text("roles:\n  judge: {engine: embedded}\njudge:\n  rule_veto: true\n")
    assert load_config(str(embedded), env={}).judge.rule_veto is True
    embedded.write_text("roles:\n  judge: {engine: embedded}\njudge:\n  max_batch_size: 8\n")
    assert load_config(str(embedded), env={}).judge.max_batch_size == 8
    llm = tmp_path / "llm.yaml"
    llm.write_text(
        "roles:\n  judge: {engine: openai, base_url: 'http://127.0.0.1:9/v1', model: m}\n"
        "judge:\n  rule_veto: false\n"
    )
    assert load_config(str(llm), env={}).judge.rule_veto is False
    # the shipped configs load: the LLM ones keep the veto, the embedded ones no longer name it
    for name in ("default.yaml", "demo_sources.yaml", "llm-cpu.yaml", "gpu.yaml"):
        load_config(str(REPO / "configs" / name), env={})


def test_a_loaded_config_validates_again_from_its_dump() -> None:
    """The graph hands every replica ``cfg.model_dump(mode="json")`` and each validates it again: a rule that
    looks at which fields were set (rather than their values) would pass on load and fail in every replica."""
    from serve_app.config import AppConfig

    checked = []
    for path in sorted((REPO / "configs").glob("*.yaml")):
        try:
            cfg = load_config(str(path), env={})
        except config_module.ConfigError:
            continue  # not an application config (e.g. a Ray Serve deploy file)
        checked.append(path.name)
        again = AppConfig.model_validate(cfg.model_dump(mode="json"))
        assert again.model_dump(mode="json") == cfg.model_dump(mode="json"), path.name
    assert {"default.yaml", "gpu.yaml", "llm-cpu.yaml"} <= set(checked)
