"""Model servers: the vLLM servers ``aceh-rag serve`` starts itself (config ``model_servers``), and the health
of every OpenAI-compatible server a role uses, for ``/healthz``."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx

from models.vllm_server import ServerStartError, VLLMServer, VLLMServerSpec
from serve_app.config import REPO_ROOT, AppConfig, ConfigError, ModelServerConfig, RayServeLLMConfig
from serve_app.runtime.ray_llm import in_graph_client, is_in_graph

HEALTH_TIMEOUT_S = 3.0


def model_server_urls(cfg: AppConfig) -> dict[str, list[str]]:
    """Each OpenAI-compatible server a role uses (base_url without a trailing slash) -> the roles on it."""
    out: dict[str, list[str]] = {}
    for role in ("agent", "framing", "judge", "guard"):
        spec = getattr(cfg.roles, role)
        if spec.engine == "openai" and spec.base_url:
            out.setdefault(spec.base_url.rstrip("/"), []).append(role)
    return out


async def probe_model_servers(cfg: AppConfig, client: httpx.AsyncClient | None = None) -> dict[str, str]:
    """``{base_url: "ok" | "unavailable"}``: a server is ok when it lists its models within a few seconds."""
    urls = list(model_server_urls(cfg))
    if not urls:
        return {}
    own = client is None
    http = client or httpx.AsyncClient(timeout=HEALTH_TIMEOUT_S)

    async def probe(url: str) -> tuple[str, str]:
        root = url if url.endswith("/v1") else url + "/v1"
        # The in-graph deployment answers through its handle (its health check runs vLLM's)
        through = in_graph_client(url, timeout_s=HEALTH_TIMEOUT_S) if is_in_graph(url) else http
        try:
            response = await asyncio.wait_for(through.get(root + "/models"), HEALTH_TIMEOUT_S)
            return url, "ok" if response.status_code == 200 else "unavailable"
        except Exception:  # noqa: BLE001 - any failure to answer means down
            return url, "unavailable"
        finally:
            if through is not http:
                await through.aclose()

    try:
        return dict(await asyncio.gather(*(probe(u) for u in urls)))
    finally:
        if own:
            await http.aclose()


def provision(server: ModelServerConfig | RayServeLLMConfig) -> Path:
    """The server's model directory, built (or found in the cache) by models/provision.py in vLLM's Python,
    which has the GGUF reader."""
    python = REPO_ROOT / server.python
    if not python.is_file():
        raise ConfigError(f"No Python at {python}; run `make vllm` to install vLLM for CPUs.")
    done = subprocess.run(
        [str(python), "-m", "models.provision", server.source],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ConfigError(f"The model for server '{server.name}' could not be built: {last}")
    return Path(done.stdout.strip().splitlines()[-1])


# The settings a server's config hands to its vLLM spec unchanged (same names on both sides).
SPEC_FIELDS = frozenset(
    {"host", "port", "max_logprobs", "prefix_caching", "max_model_len", "max_num_seqs", "kv_cache_gib",
     "enforce_eager"}
)  # fmt: skip


def server_spec(server: ModelServerConfig, model_dir: Path) -> VLLMServerSpec:
    return VLLMServerSpec(
        model_dir=str(model_dir),
        served_model_name=server.name,
        python=str(REPO_ROOT / server.python),
        **server.model_dump(include=set(SPEC_FIELDS)),
    )


@contextlib.contextmanager
def running_model_servers(cfg: AppConfig, *, log_dir: Path) -> Iterator[None]:
    """Start every configured vLLM server and wait until each answers; stop them all on the way out."""
    started: list[VLLMServer] = []
    try:
        for server in cfg.model_servers:
            model_dir = provision(server)
            spec = server_spec(server, model_dir)
            print(
                f"aceh-rag: starting vLLM '{server.name}' at {server.base_url} (model {model_dir}); "
                f"this takes a few minutes on a CPU"
            )
            process = VLLMServer(spec, log_path=log_dir / f"vllm-{server.name}.log")
            started.append(process)
            try:
                process.start(timeout_s=server.start_timeout_s)
            except ServerStartError as exc:
                raise ConfigError(str(exc).rstrip(".") + ".") from None
            print(f"aceh-rag: vLLM '{server.name}' answers at {server.base_url}")
        yield
    finally:
        for process in reversed(started):
            process.stop()
