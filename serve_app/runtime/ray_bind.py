"""Which address a local Ray binds: loopback unless the operator says otherwise (``serve.ray_host``,
``ACEH_RAY_HOST``).

Ray's GCS, raylet, object manager, dashboard agent and workers listen on the node's IP address, and
``ray.init`` on Linux swaps a loopback ``_node_ip_address`` for the machine's outward address
(``services.resolve_ip_for_localhost``): a single-machine ``make serve`` then had every Ray port open on the
network, with no authentication in front. Ray keeps the loopback address only when it is told this is no
cluster (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, the switch Ray itself uses on laptops); that is what a
loopback ``ray_host`` sets. The HTTP port of the service is ``serve.host`` and is not affected.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

LOOPBACK_NAMES = frozenset({"localhost"})
# Read by ray._private.ray_constants at import: False makes Ray's node IP the loopback address.
SINGLE_NODE_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
SINGLE_NODE_ENV = {SINGLE_NODE_VAR: "0"}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_any_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def bind_env(host: str) -> dict[str, str]:
    """Environment to set before ``import ray`` so that a loopback host really stays loopback."""
    return dict(SINGLE_NODE_ENV) if is_loopback(host) else {}


def apply_to_loaded_ray(ray_module: Any) -> None:
    """Ray reads ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` once, when it is first imported: a process that
    imported it before :func:`bind_env`'s variable was set (a test, a benchmark) would still swap loopback
    for the outward address (measured). Give the loaded constant the value the environment now says."""
    value = os.environ.get(SINGLE_NODE_VAR)
    constants = getattr(getattr(ray_module, "_private", None), "ray_constants", None)
    if value is not None and constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = value.lower() in ("1", "true")  # as Ray's env_bool reads it


def bind_kwargs(host: str) -> dict[str, Any]:
    """``ray.init`` arguments for a local Ray on ``host``: its node IP and its dashboard's host.
    ``0.0.0.0`` / ``::`` (every interface) leaves the node IP to Ray (its outward address)."""
    if is_loopback(host):
        return {"_node_ip_address": "127.0.0.1", "dashboard_host": "127.0.0.1"}
    if is_any_address(host):
        return {"dashboard_host": host}
    return {"_node_ip_address": host, "dashboard_host": host}
