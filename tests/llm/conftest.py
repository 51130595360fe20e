"""One real vLLM server (CPU build, SmolLM2-135M-Instruct) for the whole test run, started once.

``make test`` installs vLLM (.venv-vllm) and builds the model first. When either is missing these tests FAIL
with the command to run: they never skip, because CI must not pass without having talked to a real server.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from models.openai_engine import OpenAIEngine
from models.vllm_server import VLLMServer, VLLMServerSpec
from tests.conftest import API_KEY, REPO
from tests.support.net import free_port

LLM_CONFIG = REPO / "configs" / "llm-cpu.yaml"
START_TIMEOUT_S = 480.0
# The first completion on a just-started CPU server pays vLLM's warm-up (over 60 s once under load in CI,
# where a test's 60 s engine timeout then saw ``timeout``): the fixture pays it once, before any test.
WARM_UP_TIMEOUT_S = 300.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/llm/" in item.nodeid or item.nodeid.startswith("llm/"):
            item.add_marker(pytest.mark.llm)


@dataclass
class RunningVLLM:
    server: VLLMServer
    spec: VLLMServerSpec
    model_dir: Path

    @property
    def base_url(self) -> str:
        return self.spec.base_url

    @property
    def model(self) -> str:
        return self.spec.served_model_name

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """vLLM stopped (SIGSTOP on its process group: server and engine core) until the block ends."""
        process = self.server.process
        assert process is not None and process.poll() is None, "the vLLM server is not running"
        os.killpg(process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.killpg(process.pid, signal.SIGCONT)


@pytest.fixture(scope="session")
def vllm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningVLLM]:
    from serve_app.config import ConfigError, load_config
    from serve_app.runtime.model_servers import provision, server_spec

    cfg = load_config(str(LLM_CONFIG), env={"ACEH_API_KEYS": API_KEY})
    server_cfg = cfg.model_servers[0].model_copy(update={"port": free_port(), "max_num_seqs": 32})
    if not (REPO / server_cfg.python).is_file():
        pytest.fail(f"vLLM is not installed at {server_cfg.python}: run `make vllm`", pytrace=False)
    try:
        model_dir = provision(server_cfg)
    except ConfigError as exc:
        pytest.fail(f"the test model cannot be built ({exc}); run `make model`", pytrace=False)
    spec = server_spec(server_cfg, model_dir)
    log = tmp_path_factory.mktemp("vllm") / "vllm.log"
    server = VLLMServer(spec, log_path=log)
    try:
        server.start(timeout_s=START_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - fail loudly with the server's last words
        tail = log.read_text(errors="replace")[-3000:] if log.is_file() else ""
        pytest.fail(f"vLLM did not start: {exc}\n{tail}", pytrace=False)
    try:
        body = {"model": spec.served_model_name, "prompt": "Halo", "max_tokens": 1}
        httpx.post(f"{spec.base_url}/completions", json=body, timeout=WARM_UP_TIMEOUT_S).raise_for_status()
    except Exception as exc:  # noqa: BLE001 - fail loudly with the server's last words
        server.stop()
        tail = log.read_text(errors="replace")[-3000:] if log.is_file() else ""
        pytest.fail(f"vLLM did not answer a first completion: {exc}\n{tail}", pytrace=False)
    try:
        yield RunningVLLM(server, spec, model_dir)
    finally:
        server.stop()


class SentLog:
    """Every request an engine sent: (path, JSON body)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []

    async def hook(self, request: httpx.Request) -> None:
        body = json.loads(request.content) if request.content else None
        self.requests.append((request.url.path, body))

    def to(self, suffix: str) -> list[Any]:
        return [body for path, body in self.requests if path.endswith(suffix)]


def engine(
    vllm: RunningVLLM, *, timeout_s: float = 60.0, chat_template: bool = True
) -> tuple[OpenAIEngine, SentLog]:
    """An engine on the test server whose requests are logged; the caller closes ``engine._client``."""
    sent = SentLog()
    client = httpx.AsyncClient(timeout=timeout_s, event_hooks={"request": [sent.hook]})
    eng = OpenAIEngine(
        base_url=vllm.base_url,
        model=vllm.model,
        timeout_s=timeout_s,
        chat_template=chat_template,
        client=client,
    )
    return eng, sent


def llm_config(
    tmp: Path,
    index_dir: Path,
    vllm: RunningVLLM,
    timeouts: dict[str, float] | None = None,
    **role_options: Any,
) -> Any:
    """configs/llm-cpu.yaml with its roles on the test server (no model_servers: the test started it)."""
    from serve_app.config import load_config

    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(index_dir),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'aceh.db'}",
    }
    cfg = load_config(str(LLM_CONFIG), env=env)
    roles = cfg.roles.model_copy(
        update={
            name: getattr(cfg.roles, name).model_copy(
                update={
                    "base_url": vllm.base_url,
                    "model": vllm.model,
                    "options": {**getattr(cfg.roles, name).options, **role_options.get(name, {})},
                    "timeout_s": (timeouts or {}).get(name, getattr(cfg.roles, name).timeout_s),
                }
            )
            for name in ("agent", "framing", "judge")
        }
    )
    return cfg.model_copy(update={"roles": roles, "model_servers": []})
