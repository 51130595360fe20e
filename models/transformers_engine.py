"""The ``transformers`` engine: a causal LM run in-process with torch, on GPU or CPU, from local weights.

* ``classify`` is one batched forward per chunk of ``max_batch_size`` prompts: left padding, an attention
  mask and explicit position ids (so a padded row computes exactly what it would alone), reading only the
  last position's logits. Label probabilities are a softmax over the labels' first-token logits (each label
  pooling its spelling variants, see :meth:`TransformersEngine.label_token_ids`): exact, so no floor is
  needed beyond :data:`models.torch_runtime.MIN_PROB` against underflow.
* Prompts that share a prefix (the passage first, the segment last) reuse its key/value cache:
  :meth:`classify_shared_prefix` runs the prefix once and the suffixes batched on top of it;
  :meth:`classify_pairs` (and ``classify(..., prefixes=...)``) groups pairs by prefix and batches the
  groups together, two forwards per chunk (the chunk's prefixes, then its suffixes on their caches). A
  pair is always tokenised as ``tokens(prefix) + tokens(suffix)``, whichever path runs it, so grouping
  never changes a result beyond float rounding.
* ``generate`` is greedy decoding (sampling when ``temperature > 0``) with the model's KV cache. With a
  ``json_schema`` the text is decoded and validated afterwards: this engine has no constrained decoding,
  so a model that strays from JSON yields :class:`ModelOutputError`.

Blocking torch work runs in a worker thread (``asyncio.to_thread``), one call at a time per engine. The
deadline is checked between batches and decoding steps; a call whose deadline passes (or whose task is
cancelled) raises :class:`ModelTimeout` at once and its worker stops at the next check.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import torch

from models.base import CallRecord, Classification, Engine, GenArgs, Generation, ModelError, ModelUnavailable
from models.openai_engine import check_labels, decode_json_output
from models.tokens import split_total
from models.torch_runtime import (
    Stopped,
    eos_token_ids,
    failed_record,
    label_probs,
    pad_token_id,
    resolve_device,
    resolve_dtype,
    run_in_worker,
    transformers_major,
)

T = TypeVar("T")


class TransformersEngine(Engine):
    """A causal LM and its tokenizer, already loaded (see :meth:`from_path` to load local weights)."""

    name = "transformers"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        model_name: str = "",
        max_batch_size: int = 16,
        timeout_s: float | None = None,
    ) -> None:
        if max_batch_size < 1 or (timeout_s is not None and timeout_s <= 0):
            raise ValueError("max_batch_size must be >= 1 and timeout_s positive")
        self._timeout_s = timeout_s  # a cap on every call, on top of the caller's deadline
        self._model = model.eval()
        self._tokenizer = tokenizer
        self.model = model_name or getattr(model.config, "name_or_path", "") or type(model).__name__
        self._max_batch_size = max_batch_size
        self._device = next(model.parameters()).device
        self._pad_id = pad_token_id(tokenizer)
        self._eos_ids = eos_token_ids(tokenizer, model)
        # transformers 5 renamed past_key_values to cache; 4.x names it past_key_values.
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self._keep_arg = next((a for a in ("logits_to_keep", "num_logits_to_keep") if a in params), None)
        self._lock = threading.Lock()
        self._label_ids: dict[tuple[str, ...], list[list[int]]] = {}

    @classmethod
    def from_path(
        cls,
        path: str | Path,
        *,
        device: str = "auto",
        dtype: str = "auto",
        model_name: str = "",
        max_batch_size: int = 16,
        timeout_s: float | None = None,
        tokenizer_path: str | Path | None = None,
    ) -> TransformersEngine:
        """Load weights from the local directory ``path`` and the tokenizer from ``tokenizer_path`` (default:
        the same directory); never downloads."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if not Path(path).is_dir():
            raise FileNotFoundError(f"no model directory at {path}")
        target = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, target)
        tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path or path), local_files_only=True)
        dtype_arg = "dtype" if transformers_major() >= 5 else "torch_dtype"
        model: Any = AutoModelForCausalLM.from_pretrained(
            str(path), local_files_only=True, **{dtype_arg: torch_dtype}
        )
        return cls(
            model.to(target),
            tokenizer,
            model_name=model_name or Path(path).name,
            max_batch_size=max_batch_size,
            timeout_s=timeout_s,
        )

    # ------------------------------------------------------------------ protocol

    async def classify(
        self,
        prompts: list[str],
        labels: list[str],
        *,
        role: str,
        deadline: float | None = None,
        prefixes: list[str] | None = None,
    ) -> list[Classification]:
        """Batched first-token label probabilities. With ``prefixes``, prompt i is
        ``prefixes[i] + prompts[i]`` and prompts sharing a prefix reuse its key/value cache
        (see :meth:`classify_pairs`)."""
        if prefixes is not None:
            if len(prefixes) != len(prompts):
                raise ValueError("prefixes and prompts must have the same length")
            return await self.classify_pairs(
                list(zip(prefixes, prompts, strict=True)), labels, role=role, deadline=deadline
            )
        label_ids = self.label_token_ids(labels)
        if not prompts:
            return []
        rows = [self._encode(p, special=True) for p in prompts]
        if any(not r for r in rows):
            raise ValueError("a prompt tokenises to nothing; there is no position to score")

        def work(stop: Callable[[], bool]) -> tuple[torch.Tensor, list[int]]:
            return self._score_rows(rows, label_ids, stop), [len(r) for r in rows]

        return await self._classifications(work, labels, role, deadline)

    async def classify_shared_prefix(
        self,
        prefix: str,
        suffixes: list[str],
        labels: list[str],
        *,
        role: str = "judge",
        deadline: float | None = None,
    ) -> list[Classification]:
        """Score ``prefix + suffix`` for each suffix, running the prefix once and the suffixes batched."""
        return await self.classify_pairs(
            [(prefix, s) for s in suffixes], labels, role=role, deadline=deadline
        )

    async def classify_pairs(
        self,
        pairs: list[tuple[str, str]],
        labels: list[str],
        *,
        role: str,
        deadline: float | None = None,
    ) -> list[Classification]:
        """Score each ``(prefix, suffix)`` pair; pairs with the same prefix share one prefix computation,
        and the groups are batched together (see :meth:`_score_groups`).

        Token accounting: a shared prefix is charged once per group, split across its pairs.
        """
        label_ids = self.label_token_ids(labels)
        if not pairs:
            return []
        groups: dict[str, list[int]] = {}
        for i, (prefix, _) in enumerate(pairs):
            groups.setdefault(prefix, []).append(i)
        prefix_ids = {prefix: self._encode(prefix, special=True) for prefix in groups}
        suffix_ids = [self._encode(suffix, special=False) for _, suffix in pairs]
        if any(not prefix_ids[p] and not suffix_ids[i] for i, (p, _) in enumerate(pairs)):
            raise ValueError("a prompt tokenises to nothing; there is no position to score")

        def work(stop: Callable[[], bool]) -> tuple[torch.Tensor, list[int]]:
            probs = torch.empty(len(pairs), len(labels))
            tokens = [0] * len(pairs)
            singles = [members[0] for members in groups.values() if len(members) == 1]
            if singles:  # nothing to share: one forward of the whole prompt is cheaper
                rows = [prefix_ids[pairs[i][0]] + suffix_ids[i] for i in singles]
                probs[singles] = self._score_rows(rows, label_ids, stop)
                for i, row in zip(singles, rows, strict=True):
                    tokens[i] = len(row)
            shared = [(prefix_ids[p], members) for p, members in groups.items() if len(members) > 1]
            if shared:
                scored = self._score_groups(
                    [(ids, [suffix_ids[i] for i in members]) for ids, members in shared], label_ids, stop
                )
                for (ids, members), group_probs in zip(shared, scored, strict=True):
                    probs[members] = group_probs
                    for i, share in zip(members, split_total(len(ids), [1] * len(members)), strict=True):
                        tokens[i] = share + len(suffix_ids[i])
            return probs, tokens

        return await self._classifications(work, labels, role, deadline)

    async def _generate(self, messages: list[dict[str, str]], request: GenArgs) -> Generation:
        record = CallRecord(role=request.role, engine=self.name, model=self.model)
        prompt = self._chat_ids(messages)
        record.prompt_tokens = len(prompt)
        start = time.perf_counter()
        try:
            new_ids, finish_reason = await self._run(
                lambda stop: self._decode(prompt, request.max_tokens, request.temperature, stop),
                request.deadline,
            )
        except ModelError as exc:
            exc.record = failed_record(record, exc, start)
            raise
        record.latency_ms = (time.perf_counter() - start) * 1000
        record.completion_tokens = len(new_ids)
        text = self._tokenizer.decode(new_ids, skip_special_tokens=True)
        parsed = (
            decode_json_output(text, request.json_schema, record) if request.json_schema is not None else None
        )
        return Generation(text=text, record=record, parsed=parsed, finish_reason=finish_reason)

    async def aclose(self) -> None:
        self._model = None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    # ------------------------------------------------------------------ labels and tokens

    def label_token_ids(self, labels: list[str]) -> list[list[int]]:
        """For each label, the ids of the first tokens that spell it: the label as given, lower-case and
        capitalised, each with and without a leading space (whitespace-only and unknown tokens skipped).
        Raises ValueError when two labels share a first token: the first token could not tell them apart."""
        key = tuple(labels)
        if key in self._label_ids:
            return self._label_ids[key]
        check_labels(labels)
        owner: dict[int, str] = {}
        result: list[list[int]] = []
        for label in labels:
            ids: list[int] = []
            for spelling in dict.fromkeys((label.strip(), label.strip().lower(), label.strip().capitalize())):
                for text in (spelling, " " + spelling):
                    tid = self._first_visible_token(text)
                    if tid is None or tid in ids:
                        continue
                    if owner.get(tid, label) != label:
                        raise ValueError(
                            f"labels {owner[tid]!r} and {label!r} start with the same token; "
                            "choose labels whose first tokens differ"
                        )
                    owner[tid] = label
                    ids.append(tid)
            if not ids:
                raise ValueError(f"label {label!r} has no token in this tokenizer")
            result.append(ids)
        self._label_ids[key] = result
        return result

    def _first_visible_token(self, text: str) -> int | None:
        unknown = getattr(self._tokenizer, "unk_token_id", None)
        for tid in self._tokenizer.encode(text, add_special_tokens=False):
            if tid == unknown:  # a spelling the vocabulary lacks says nothing about the label
                return None
            if self._tokenizer.decode([tid]).strip():
                return int(tid)
        return None

    def _encode(self, text: str, *, special: bool) -> list[int]:
        return list(self._tokenizer(text, add_special_tokens=special)["input_ids"])

    def _chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        if getattr(self._tokenizer, "chat_template", None):
            text = self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            return self._encode(text, special=False)
        # No template (a bare tokenizer): a plain transcript that ends where the assistant speaks.
        text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
        return self._encode(text, special=True)

    # ------------------------------------------------------------------ blocking work (worker thread)

    @torch.inference_mode()
    def _score_rows(
        self, rows: list[list[int]], label_ids: list[list[int]], stop: Callable[[], bool]
    ) -> torch.Tensor:
        """Label probabilities ``[len(rows), len(labels)]`` (float32, CPU) of the token after each row."""
        probs = torch.empty(len(rows), len(label_ids))
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))  # similar lengths pad less
        for start in range(0, len(order), self._max_batch_size):
            if stop():
                raise Stopped
            chunk = order[start : start + self._max_batch_size]
            ids, mask = self._left_pad([rows[i] for i in chunk])
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            out = self._forward(ids, mask, positions, None)
            probs[chunk] = label_probs(out.logits[:, -1, :], label_ids)
        return probs

    @torch.inference_mode()
    def _score_groups(
        self,
        groups: list[tuple[list[int], list[list[int]]]],
        label_ids: list[list[int]],
        stop: Callable[[], bool],
    ) -> list[torch.Tensor]:
        """For each ``(prefix, suffixes)`` group, the label probabilities of the token after each suffix.

        Groups are packed into chunks of at most ``max_batch_size`` suffixes. Per chunk, one forward runs
        the chunk's prefixes (left-padded), their key/value cache is gathered row by row onto the chunk's
        suffixes, and one more forward runs the suffixes (left-padded too) on top of it; the attention
        mask hides both paddings and position ids continue each row's own prefix. A group larger than a
        chunk is split, and each part computes its prefix again.
        """
        size = self._max_batch_size
        parts = [(g, s) for g, (_, sfx) in enumerate(groups) for s in range(0, len(sfx), size)]
        parts.sort(key=lambda part: len(groups[part[0]][0]))  # similar prefix lengths pad less
        chunks: list[list[tuple[int, int]]] = [[]]
        for g, s in parts:
            count = len(groups[g][1][s : s + size])
            if chunks[-1] and sum(len(groups[h][1][t : t + size]) for h, t in chunks[-1]) + count > size:
                chunks.append([])
            chunks[-1].append((g, s))
        results = [torch.empty(len(sfx), len(label_ids)) for _, sfx in groups]
        for chunk in chunks:
            if stop():
                raise Stopped
            prefix_ids, prefix_mask = self._left_pad([groups[g][0] for g, _ in chunk])
            out = self._forward(prefix_ids, prefix_mask, (prefix_mask.cumsum(-1) - 1).clamp(min=0), None)
            cache, prefix_logits = getattr(out, self._cache_arg), out.logits[:, -1, :]
            rows = [(k, row) for k, (g, s) in enumerate(chunk) for row in groups[g][1][s : s + size]]
            owner = torch.tensor([k for k, _ in rows], device=self._device)
            logits = prefix_logits[owner]  # an empty suffix scores the prefix's own next token
            filled = [r for r, (_, row) in enumerate(rows) if row]
            if filled:
                cache.batch_select_indices(owner)  # row r continues prefix owner[r]
                ids, mask = self._left_pad([row for _, row in rows])
                positions = prefix_mask.sum(-1)[owner].unsqueeze(-1) + (mask.cumsum(-1) - 1).clamp(min=0)
                mask = torch.cat([prefix_mask[owner], mask], dim=1)
                suffix_logits = self._forward(ids, mask, positions, cache).logits[:, -1, :]
                logits[filled] = suffix_logits[filled]
            probs = label_probs(logits, label_ids)
            at = 0
            for g, s in chunk:
                count = len(groups[g][1][s : s + size])
                results[g][s : s + count] = probs[at : at + count]
                at += count
        return results

    def _left_pad(self, rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(1, max(len(row) for row in rows))
        ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for b, row in enumerate(rows):
            if row:
                ids[b, width - len(row) :] = torch.tensor(row)
                mask[b, width - len(row) :] = 1
        return ids.to(self._device), mask.to(self._device)

    def _forward(
        self, ids: torch.Tensor, mask: torch.Tensor | None, positions: torch.Tensor | None, cache: Any
    ) -> Any:
        kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": True}
        if mask is not None:
            kwargs["attention_mask"] = mask
        if positions is not None:
            kwargs["position_ids"] = positions
        if cache is not None:
            kwargs[self._cache_arg] = cache
        if self._keep_arg:
            kwargs[self._keep_arg] = 1  # only the last position's logits: [B, 1, vocab], not [B, L, vocab]
        return self._model(**kwargs)

    @torch.inference_mode()
    def _decode(
        self, prompt: list[int], max_tokens: int, temperature: float, stop: Callable[[], bool]
    ) -> tuple[list[int], str]:
        out = self._forward(torch.tensor([prompt], device=self._device), None, None, None)
        new_ids: list[int] = []
        while len(new_ids) < max_tokens:
            logits = out.logits[0, -1, :].float()
            if temperature > 0:
                next_id = int(torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1))
            else:
                next_id = int(torch.argmax(logits))
            if next_id in self._eos_ids:
                return new_ids, "stop"
            new_ids.append(next_id)
            if len(new_ids) == max_tokens:
                break
            if stop():
                raise Stopped
            positions = torch.tensor([[len(prompt) + len(new_ids) - 1]], device=self._device)
            out = self._forward(
                torch.tensor([[next_id]], device=self._device), None, positions, getattr(out, self._cache_arg)
            )
        return new_ids, "length"

    # ------------------------------------------------------------------ running and accounting

    async def _classifications(
        self,
        work: Callable[[Callable[[], bool]], tuple[torch.Tensor, list[int]]],
        labels: list[str],
        role: str,
        deadline: float | None,
    ) -> list[Classification]:
        start = time.perf_counter()
        try:
            probs, tokens = await self._run(work, deadline)
        except ModelError as exc:
            exc.record = failed_record(CallRecord(role=role, engine=self.name, model=self.model), exc, start)
            raise
        latency_ms = (time.perf_counter() - start) * 1000
        return [
            Classification(
                probs={label: float(p) for label, p in zip(labels, row.tolist(), strict=True)},
                record=CallRecord(
                    role=role,
                    engine=self.name,
                    model=self.model,
                    prompt_tokens=n,
                    completion_tokens=1,
                    latency_ms=latency_ms,
                ),
            )
            for row, n in zip(probs, tokens, strict=True)
        ]

    async def _run(self, work: Callable[[Callable[[], bool]], T], deadline: float | None) -> T:
        if self._model is None:
            raise ModelUnavailable("the transformers engine is closed")
        return await run_in_worker(self._lock, work, deadline, self._timeout_s)
