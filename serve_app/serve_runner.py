"""``aceh-rag serve``: check the config, make sure the index exists, start Ray Serve on
127.0.0.1:$ACEH_PORT in the foreground, and stop cleanly on Ctrl-C / SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading

from serve_app import factory
from serve_app.config import AppConfig, ConfigError


def check_port_free(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            raise ConfigError(f"Port {port} on {host} is already in use; set ACEH_PORT to a free port.") from None


def start_serve(cfg: AppConfig, *, num_cpus: int | None = None) -> None:
    """Start a local Ray (or join RAY_ADDRESS) and deploy the graph; returns once it is running."""
    import ray
    from ray import serve

    from serve_app.app import build_app

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus or max(2, os.cpu_count() or 2), include_dashboard=False, log_to_driver=False)
    serve.start(http_options={"host": cfg.serve.host, "port": cfg.port})
    serve.run(build_app(cfg), name="aceh-rag", route_prefix="/", blocking=False)


def run_forever(cfg: AppConfig) -> int:
    factory.preflight(cfg)
    check_port_free(cfg.serve.host, cfg.port)
    factory.ensure_index(cfg)
    stop = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    import ray
    from ray import serve

    try:
        start_serve(cfg)
        print(f"aceh-rag: serving on http://{cfg.serve.host}:{cfg.port} (Ctrl-C stops)", file=sys.stderr, flush=True)
        stop.wait()
    finally:
        print("aceh-rag: shutting down", file=sys.stderr, flush=True)
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
    return 0
