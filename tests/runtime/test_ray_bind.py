"""`aceh-rag serve` starts Ray on loopback unless the operator names another address (issue 35).

The arguments are checked with a stand-in ``ray`` module: nothing is started."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from serve_app.config import load_config
from serve_app.runtime import serve_runner
from serve_app.runtime.ray_bind import bind_env, bind_kwargs
from tests.conftest import REPO


class FakeRay(types.ModuleType):
    def __init__(self) -> None:
        super().__init__("ray")
        self.calls: list[dict[str, Any]] = []
        self.env_at_init: dict[str, str] = {}
        # as if imported before the variable was set: Ray read its default (a cluster is possible)
        self._private = types.SimpleNamespace(ray_constants=types.SimpleNamespace(ENABLE_RAY_CLUSTER=True))

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: Any) -> None:
        self.calls.append(kwargs)
        self.env_at_init = dict(os.environ)


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> FakeRay:
    fake = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    dropped = ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    environ = {k: v for k, v in os.environ.items() if k not in dropped}
    monkeypatch.setattr(os, "environ", environ)  # init_ray's setdefault must not leak into other tests
    return fake


def test_the_default_binds_every_ray_port_to_loopback(fake_ray: FakeRay) -> None:
    serve_runner.init_ray(num_cpus=2, env={})
    (call,) = fake_ray.calls
    assert call["_node_ip_address"] == "127.0.0.1" and call["dashboard_host"] == "127.0.0.1"
    # without this Ray swaps the loopback node IP for the machine's outward address (measured: GCS and
    # raylet listened on every interface)
    assert fake_ray.env_at_init["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    assert call["runtime_env"]["env_vars"]["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    assert fake_ray._private.ray_constants.ENABLE_RAY_CLUSTER is False, "an earlier-imported Ray too"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("10.1.2.3", {"_node_ip_address": "10.1.2.3", "dashboard_host": "10.1.2.3"}),
        ("0.0.0.0", {"dashboard_host": "0.0.0.0"}),  # noqa: S104 - every interface, as the operator asked
        ("localhost", {"_node_ip_address": "127.0.0.1", "dashboard_host": "127.0.0.1"}),
    ],
)
def test_an_operator_address_is_passed_as_it_is(
    fake_ray: FakeRay, host: str, expected: dict[str, str]
) -> None:
    serve_runner.init_ray(env={}, host=host)
    (call,) = fake_ray.calls
    assert {k: call[k] for k in ("_node_ip_address", "dashboard_host") if k in call} == expected
    assert ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" in fake_ray.env_at_init) == (host == "localhost")


def test_joining_a_cluster_keeps_the_clusters_own_addresses(fake_ray: FakeRay) -> None:
    os.environ["RAY_ADDRESS"] = "ray://head:10001"
    serve_runner.init_ray(env={})
    (call,) = fake_ray.calls
    assert call["address"] == "ray://head:10001"
    assert "_node_ip_address" not in call and "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in fake_ray.env_at_init


def test_an_operators_own_environment_wins(fake_ray: FakeRay) -> None:
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "1"
    serve_runner.init_ray(env={})
    assert fake_ray.env_at_init["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "1"
    assert fake_ray._private.ray_constants.ENABLE_RAY_CLUSTER is True


def test_config_and_environment(tmp_path: Path) -> None:
    default = REPO / "configs" / "default.yaml"
    assert load_config(str(default), env={}).serve.ray_host == "127.0.0.1"
    assert load_config(str(default), env={"ACEH_RAY_HOST": "10.1.2.3"}).serve.ray_host == "10.1.2.3"
    assert bind_env("::1") == {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"} and bind_env("10.0.0.1") == {}
    assert bind_kwargs("::")["dashboard_host"] == "::"


def test_a_second_start_in_one_process_takes_its_own_body_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The body guard in Ray's proxy reads the config's limits from the environment: a graph started after
    another in the same process (the test suite does that) gets its own, while Ray's switches the operator
    set stay the operator's."""
    from serve_app.wire.body_guard import ENV_READ_DEADLINE_S

    monkeypatch.setenv(ENV_READ_DEADLINE_S, "10.0")  # what the first start left
    monkeypatch.setenv("RAY_SERVE_THROUGHPUT_OPTIMIZED", "0")  # the operator's own
    serve_runner.export_env({ENV_READ_DEADLINE_S: "300.0", "RAY_SERVE_THROUGHPUT_OPTIMIZED": "1"})
    assert os.environ[ENV_READ_DEADLINE_S] == "300.0"
    assert os.environ["RAY_SERVE_THROUGHPUT_OPTIMIZED"] == "0"
