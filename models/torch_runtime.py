"""Torch plumbing of the ``transformers`` engine: device and dtype choice, label probabilities, tokenizer ids,
and the worker thread that runs blocking forwards under a deadline (kept apart so the engine module stays
about the model protocol)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from models.base import CallRecord, ModelError, ModelTimeout, ModelUnavailable, deadline_left

logger = logging.getLogger("models.transformers_engine")
T = TypeVar("T")
MIN_PROB = 1e-9


class Stopped(Exception):
    """The worker saw the deadline pass or its caller go away."""


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    resolved = getattr(torch, dtype, None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"unknown torch dtype {dtype!r}")
    return resolved


async def run_in_worker(
    lock: threading.Lock,
    work: Callable[[Callable[[], bool]], T],
    deadline: float | None,
    timeout_s: float | None,
) -> T:
    """Run blocking torch ``work`` in a worker thread, one call at a time under ``lock``; ``work`` polls the
    ``stop`` callable it is given between batches and decoding steps."""
    left = deadline_left(deadline)
    if timeout_s is not None and (left is None or timeout_s < left):
        left, deadline = timeout_s, time.time() + timeout_s
    cancelled = threading.Event()

    def stop() -> bool:
        return cancelled.is_set() or (deadline is not None and time.time() >= deadline)

    def locked() -> T:
        with lock:  # one forward at a time; waiting callers queue here, not in the GPU
            if stop():
                raise Stopped
            return work(stop)

    try:
        async with asyncio.timeout(left):
            return await asyncio.to_thread(locked)
    except (TimeoutError, Stopped) as exc:
        cancelled.set()
        raise ModelTimeout("the deadline passed during the model call") from exc
    except asyncio.CancelledError:
        cancelled.set()
        raise
    except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:  # OOM, device errors
        logger.exception("transformers engine failed")
        raise ModelUnavailable("the local model failed") from exc


def label_probs(logits: torch.Tensor, label_ids: list[list[int]]) -> torch.Tensor:
    """Softmax over labels, each label's logit being the log-sum-exp of its first-token variants."""
    logits = logits.float()
    per_label = torch.stack([torch.logsumexp(logits[:, ids], dim=-1) for ids in label_ids], dim=-1)
    probs = torch.softmax(per_label, dim=-1).clamp(min=MIN_PROB)
    return (probs / probs.sum(dim=-1, keepdim=True)).cpu()


def failed_record(record: CallRecord, exc: ModelError, start: float) -> CallRecord:
    record.ok, record.error = False, exc.code
    record.latency_ms = (time.perf_counter() - start) * 1000
    return record


def pad_token_id(tokenizer: Any) -> int:
    # Padded positions are masked out, so any id works; prefer the tokenizer's own.
    for tid in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if tid is not None:
            return int(tid)
    return 0


def eos_token_ids(tokenizer: Any, model: Any) -> set[int]:
    ids: set[int] = set()
    config = getattr(model, "generation_config", None)
    for value in (tokenizer.eos_token_id, getattr(config, "eos_token_id", None)):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(int(v) for v in value)
    return ids


def transformers_major() -> int:
    import transformers

    return int(transformers.__version__.split(".")[0])
