"""One real vLLM server (CPU build, SmolLM2-135M-Instruct) for the whole test run, started once.

``make test`` installs vLLM (.venv-vllm) and builds the model first. When either is missing these tests FAIL
with the command to run: they never skip, because CI must not pass without having talked to a real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Generator, Iterator
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
# The first requests of each kind on a just-started CPU server pay vLLM's warm-up: in two fresh-clone CI runs
# the first judge batch (chat-template tokenisation, then a batch of long prompts with logprobs) took over a
# test's engine timeout, even after a one-token warm-up completion. The fixture pays both first requests the
# tests make (a judge batch, a structured answer) once, through the same engine code, before any test.
WARM_UP_TIMEOUT_S = 300.0
# What a protocol test gives one engine call: the tests check the protocol, never speed (benchmarks do), so a
# slow shared CI machine must not turn a right answer into ``timeout``. Tests of timeouts pass their own.
ENGINE_TIMEOUT_S = 180.0
# The warm-up's times (one server per run), shown at the end of every run that started the server and in
# every failed test's report (CI output keeps them).
_WARM_UP_SECONDS: dict[str, float] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/llm/" in item.nodeid or item.nodeid.startswith("llm/"):
            item.add_marker(pytest.mark.llm)


@dataclass
class RunningVLLM:
    server: VLLMServer
    spec: VLLMServerSpec
    model_dir: Path
    log_path: Path

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
        pytest.fail(f"vLLM did not start: {exc}\n{_log_tail(log)}", pytrace=False)
    try:
        _WARM_UP_SECONDS.update(asyncio.run(_warm_up(spec)))
    except Exception as exc:  # noqa: BLE001 - fail loudly with the server's last words
        server.stop()
        pytest.fail(f"vLLM did not answer its first requests: {exc!r}\n{_log_tail(log)}", pytrace=False)
    try:
        yield RunningVLLM(server, spec, model_dir, log)
    finally:
        server.stop()


async def _warm_up(spec: VLLMServerSpec) -> dict[str, float]:
    """A judge batch and a structured answer through the engine code the tests use; seconds each took."""
    from judge.llm_judge import LLMJudge
    from judge.types import JudgeItem, JudgePassage
    from serve_app.agent.writers.base import WriteRequest
    from serve_app.agent.writers.llm import LLMWriter
    from serve_app.answer.segments import Passage
    from serve_app.budget import RequestBudget

    # Invented text, shaped like the tests' passages.
    passage = JudgePassage(
        "W1", "Pasal 1: Anggaran kegiatan contoh tahun 2020 sebesar Rp 1.000.000.", {"year": 2020}
    )
    eng = OpenAIEngine(
        base_url=spec.base_url, model=spec.served_model_name, timeout_s=WARM_UP_TIMEOUT_S, chat_template=True
    )
    took: dict[str, float] = {}
    try:
        start = time.perf_counter()
        claims = ("Anggaran kegiatan contoh sebesar Rp 1 juta.", "Kegiatan contoh dimulai tahun 2020.")
        results = await LLMJudge(eng, rule_veto=False).judge(
            [JudgeItem(f"w{i}", claim, (passage,)) for i, claim in enumerate(claims)]
        )
        took["judge_batch"] = time.perf_counter() - start
        if any(r.verdict == "unverified" for r in results):
            raise RuntimeError(f"the warm-up judge batch was not scored: {results}")
        start = time.perf_counter()
        writer = LLMWriter(eng, max_output_tokens=60, max_segments=1, max_segment_chars=80, max_cites=1)
        request = WriteRequest(
            query="Berapa anggaran kegiatan contoh?",
            passages=[Passage(key="W1", text=passage.text, kind="tool", chunk=None, identity={})],
        )
        budget = RequestBudget(deadline=time.time() + WARM_UP_TIMEOUT_S, model_calls=2, context_tokens=8000)
        # Any answer or fallback will do: the server has compiled the schema.
        await writer.write(request, budget=budget)
        took["structured_answer"] = time.perf_counter() - start
    finally:
        await eng.aclose()
    return took


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _WARM_UP_SECONDS:
        took = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in _WARM_UP_SECONDS.items())
        terminalreporter.write_line(f"vLLM warm-up: {took}")


def _log_tail(log: Path, chars: int = 3000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.is_file() else ""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test against the server shows the warm-up times and the server's last log lines."""
    report = yield
    running = getattr(item, "funcargs", {}).get("vllm")
    if report.failed and isinstance(running, RunningVLLM):
        report.sections.append(("vLLM warm-up (s)", json.dumps(_WARM_UP_SECONDS)))
        report.sections.append(("vLLM log tail", _log_tail(running.log_path)))
    return report


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
    vllm: RunningVLLM, *, timeout_s: float = ENGINE_TIMEOUT_S, chat_template: bool = True
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
