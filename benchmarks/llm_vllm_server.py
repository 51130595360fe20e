"""The vLLM server every ``benchmarks.llm_vllm`` part runs against, and the writer of their results.

Shared by the parts in benchmarks/llm_vllm.py, llm_vllm_pool.py and llm_vllm_answers.py, so each of them
starts (or names) the server and records its figures the same way.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.harness import Result, command, write_result

REPO = Path(__file__).resolve().parents[1]
LLM_CONFIG = REPO / "configs" / "llm-cpu.yaml"


def write(part: str, figures: dict[str, Any], data: str, in_sample: bool, details: dict[str, Any]) -> Path:
    result = Result(
        benchmark=f"llm_vllm_{part}",
        figures=figures,
        data=data,
        in_sample=in_sample,
        command=command("llm_vllm", None),
        details=details,
    )
    return write_result(result)


@contextmanager
def vllm_server(base_url: str | None, *, prefix_caching: bool = True) -> Iterator[tuple[str, str]]:
    """(base_url, model name) of a running server: the one named, or one started here for the block."""
    from benchmarks.service import free_port
    from models.vllm_server import VLLMServer
    from serve_app.config import load_config
    from serve_app.runtime.model_servers import provision, server_spec

    cfg = load_config(str(LLM_CONFIG), env={"ACEH_API_KEYS": "bench"})
    server_cfg = cfg.model_servers[0]
    if base_url:
        yield base_url, server_cfg.name
        return
    server_cfg = server_cfg.model_copy(update={"port": free_port(), "prefix_caching": prefix_caching})
    spec = server_spec(server_cfg, provision(server_cfg))
    log = Path(tempfile.gettempdir()) / f"aceh-bench-vllm-{os.getpid()}.log"
    started = time.perf_counter()
    with VLLMServer(spec, log_path=log):
        print(f"vLLM up in {time.perf_counter() - started:.0f} s at {spec.base_url} (log {log})", flush=True)
        yield spec.base_url, spec.served_model_name
