"""``aceh-rag serve``: check the config, make sure the index exists, start Ray Serve on
127.0.0.1:$ACEH_PORT in the foreground (the graph's driver is a child process), and stop cleanly on Ctrl-C /
SIGTERM."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading

from serve_app.config import AppConfig, ConfigError
from serve_app.runtime import factory, index_setup
from serve_app.runtime.ray_bind import apply_to_loaded_ray, bind_env, bind_kwargs
from serve_app.wire.body_guard import BodyLimits


def check_port_free(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            raise ConfigError(
                f"Port {port} on {host} is already in use; set ACEH_PORT to a free port."
            ) from None


# Environment of every Ray process we start. Ray Serve's throughput-optimised mode runs user code on the
# replica's main loop and logs less; measured here it is what keeps the graph's overhead small on a
# 2-core machine. Offline flags: replicas must never try to download a model.
RAY_ENV: dict[str, str] = {
    "RAY_SERVE_THROUGHPUT_OPTIMIZED": "1",
    # That mode also opens every Ingress replica's own HTTP port for a load balancer in front (direct
    # ingress), and then holds each replica for a 30 s draining period at shutdown, so every stop took
    # 30 s. Without a load balancer Ray's proxy serves the port anyway: off, except behind HAProxy.
    "RAY_SERVE_ENABLE_DIRECT_INGRESS": "0",
    # A request whose Ingress replica dies under it: the contract's 503 from the proxy, not Ray's bare 500.
    "RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH": "serve_app.wire.proxy_errors:middlewares",
    # Ray Serve kills a proxy that is not ready within 5 s of its start (then serve.start fails with
    # ActorDiedError): on a loaded 2-core machine the proxy's worker takes longer (measured under a running
    # ingest). serve.start itself waits 60 s for it (HTTP_PROXY_TIMEOUT, fixed): give the proxy as long.
    "RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "60",
    "RAY_USAGE_STATS_ENABLED": "0",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


HAPROXY_DRAINING_PERIOD_S = "5"


def ray_env(cfg: AppConfig | None = None) -> dict[str, str]:
    """:data:`RAY_ENV`, plus Ray Serve's HAProxy switches when ``serve.haproxy`` is on."""
    env = dict(RAY_ENV)
    if cfg is not None:  # the body guard in Ray's proxy (wire/body_guard.py) reads its limits from these
        env.update(body_limits(cfg).env())
    if cfg is not None and cfg.serve.haproxy:
        binary = os.environ.get("RAY_SERVE_HAPROXY_BINARY_PATH") or shutil.which("haproxy")
        if not binary:
            raise ConfigError(
                "serve.haproxy is on but no haproxy program was found; install HAProxy "
                "(apt-get install haproxy) or set serve.haproxy to false."
            )
        env.update(
            RAY_SERVE_ENABLE_HA_PROXY="1",
            RAY_SERVE_HAPROXY_BINARY_PATH=binary,
            RAY_SERVE_ENABLE_DIRECT_INGRESS="1",  # HAProxy sends to the replicas' own ports
            # Direct ingress holds every stopping Ingress replica at least this long (30 s by default) so
            # that an outside load balancer can deregister it; the serve-process test saw each stop then
            # outlast serve.shutdown()'s own 30 s and leave the controller unfinished. Serve's HAProxy is
            # reconfigured by the controller itself when replicas change, so a short hold is enough here;
            # an operator's own value (environment) still wins (init_ray uses setdefault).
            RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S=HAPROXY_DRAINING_PERIOD_S,
        )
    return env


def body_limits(cfg: AppConfig) -> BodyLimits:
    return BodyLimits.of(cfg.limits)


# The config's own limits, handed to Ray's proxy through its environment: the config decides them, so a
# value that an earlier start in this process left behind must not win (a second graph kept the first's).
CONFIG_ENV_KEYS = frozenset(BodyLimits().env())


def export_env(env: dict[str, str]) -> None:
    """Put ``env`` into this process's environment before ray.serve is imported (its constants read them
    once): the config's own keys are set, every other (Ray's switches) only where the operator has not."""
    for key, value in env.items():
        if key in CONFIG_ENV_KEYS:
            os.environ[key] = value
        else:
            os.environ.setdefault(key, value)


def init_ray(
    *, num_cpus: int | None = None, env: dict[str, str] | None = None, host: str = "127.0.0.1"
) -> None:
    """Join ``RAY_ADDRESS`` when it is set, else start a local Ray with :func:`ray_env`'s variables (a
    cluster that is joined keeps its own: set them where it starts), bound to ``host`` (ray_bind.py)."""
    env = env if env is not None else ray_env()
    address = os.environ.get("RAY_ADDRESS")
    if not address:
        env = {**bind_env(host), **env}
    export_env(env)
    import ray

    if ray.is_initialized():
        return
    env = {k: os.environ[k] for k in env}
    if address:
        ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": env})
    else:
        apply_to_loaded_ray(ray)
        ray.init(
            num_cpus=num_cpus or max(2, os.cpu_count() or 2),
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": env},
            **bind_kwargs(host),
        )


def start_serve(cfg: AppConfig, *, num_cpus: int | None = None) -> None:
    """Start a local Ray (or join RAY_ADDRESS) and deploy the graph; returns once it is running."""
    init_ray(num_cpus=num_cpus, env=ray_env(cfg), host=cfg.serve.ray_host)
    from ray import serve

    from serve_app.app import build_app

    serve.start(
        http_options={
            "host": cfg.serve.host,
            "port": cfg.port,
            "keep_alive_timeout_s": cfg.limits.keep_alive_s,  # uvicorn's idle keep-alive in the proxy
        }
    )
    serve.run(build_app(cfg), name="aceh-rag", route_prefix="/", blocking=False)


# Set in the environment of the process that runs the graph, so it does not start another one.
GRAPH_PROCESS_ENV = "ACEH_SERVE_GRAPH_PROCESS"


def run_forever(cfg: AppConfig, *, config_arg: str | None = None) -> int:
    """Check everything a user can fix (one sentence each), then run the graph in a child process until
    Ctrl-C or SIGTERM. The child is needed because Ray's C++ failure-signal handler turns a SIGTERM that
    reaches a Ray driver into an abort a few seconds later (ray-project/ray#64830), before the graph has
    shut down; this process translates SIGTERM into the SIGINT the child stops cleanly on.

    The child runs in a session of its own, so a terminal's Ctrl-C (SIGINT to the whole foreground process
    group) reaches only this process, which passes one SIGINT on: when the Ray processes the child started
    got it too, the controller died first and shutdown waited 30 s for it. SIGHUP (the terminal closing)
    is passed on the same way, since the child no longer gets the terminal's signals."""
    factory.preflight(cfg)
    ray_env(cfg)  # a missing HAProxy stops start-up before any work
    if os.environ.get(GRAPH_PROCESS_ENV) == "1":
        return _serve_until_stopped(cfg)
    check_port_free(cfg.serve.host, cfg.port)
    index_setup.ensure_index(cfg)
    config = ["--config", config_arg] if config_arg else []
    command = [sys.executable, "-m", "serve_app.runtime.cli", *config, "serve"]
    child = subprocess.Popen(command, env={**os.environ, GRAPH_PROCESS_ENV: "1"}, start_new_session=True)

    def _forward(signum: int, frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _forward)
    code = child.wait()
    return code if code >= 0 else 128 - code


def _serve_until_stopped(cfg: AppConfig) -> int:
    stop = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    import ray
    from ray import serve

    try:
        start_serve(cfg)
        print(
            f"aceh-rag: serving on http://{cfg.serve.host}:{cfg.port} (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
        stop.wait()
    finally:
        print("aceh-rag: shutting down", file=sys.stderr, flush=True)
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
    return 0
