"""The ``openai`` engine: any OpenAI-compatible server (``vllm serve``, Ray Serve LLM's OpenAI app).

This is how production reaches vLLM; there is no in-process vLLM engine.

* ``generate`` posts to ``/v1/chat/completions``; with a ``json_schema`` it sends the standard
  ``response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}`` (vLLM
  turns it into guided decoding), then decodes and validates the JSON.
* ``classify`` posts every prompt in one ``/v1/completions`` request (``max_tokens=1``, ``logprobs=k``) and
  reads the ``top_logprobs`` of the first generated token; see
  :func:`models.label_tokens.first_token_label_probs` for how tokens map to labels and for the floor given
  to labels outside the top-k.
* With ``chat_template=True`` (vLLM servers) ``classify`` puts each prompt in the model's chat template (a
  user turn plus the assistant's generation prompt) and reads ``token_id:N`` top-k keys against each
  label's own first token ids, asked once from the server's ``/tokenize`` (:mod:`models.label_tokens`).
  The template's frame around the user turn is learnt and checked once (:mod:`models.chat_frame`), so the
  prompts go out as framed text in the one completions request; a template the frame does not fit is
  applied per prompt by ``/tokenize``. An instruct model answers inside its template; raw text would ask
  it to continue a document instead.

Errors: HTTP 4xx/5xx -> :class:`ModelUnavailable` (the server's text goes to the log only), timeouts and the
deadline -> :class:`ModelTimeout`, a body that is not the protocol's JSON -> :class:`ModelOutputError`.
Connection errors are retried ``max_retries`` times (default 0), inside the same deadline.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import httpx

from models.base import (
    CallRecord,
    Classification,
    Engine,
    GenArgs,
    Generation,
    ModelError,
    ModelOutputError,
    ModelTimeout,
    ModelUnavailable,
    deadline_left,
)
from models.chat_frame import ChatFrame, learn_chat_frame
from models.json_types import JSON
from models.label_tokens import (
    distinct_label_ids,
    first_token_label_probs,
    label_variants,
    token_id_label_probs,
)
from models.tokens import estimate_message_tokens, estimate_tokens, split_total

logger = logging.getLogger(__name__)

# vLLM refuses logprobs above its --max-logprobs, 20 by default.
DEFAULT_TOP_LOGPROBS = 20
_RETRY_BACKOFF_S = 0.05


def decode_json_output(text: str, json_schema: JSON, record: CallRecord) -> Any:
    """The JSON object in ``text``, validated against ``json_schema``; ModelOutputError otherwise."""
    import jsonschema  # here, not at the top: the transformers engine imports this module on GPU hosts

    try:
        parsed = json.loads(text)
        jsonschema.validate(parsed, json_schema)
    except (ValueError, jsonschema.ValidationError) as exc:
        record.ok, record.error = False, ModelOutputError.code
        raise ModelOutputError("the model's output is not JSON matching the schema", record=record) from exc
    return parsed


def check_labels(labels: list[str]) -> None:
    if not labels or any(not label.strip() for label in labels):
        raise ValueError("labels must be a non-empty list of non-blank strings")
    if len({label.strip().casefold() for label in labels}) != len(labels):
        raise ValueError(f"labels must be distinct: {labels!r}")


class OpenAIEngine(Engine):
    """Client of an OpenAI-compatible server (``base_url`` with or without the trailing ``/v1``)."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 0,
        headers: dict[str, str] | None = None,
        top_logprobs: int = DEFAULT_TOP_LOGPROBS,
        schema_name: str = "output",
        chat_template: bool = False,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not model:
            raise ValueError("the openai engine needs a model name")
        if timeout_s <= 0 or max_retries < 0 or top_logprobs < 1:
            raise ValueError("timeout_s must be > 0, max_retries >= 0 and top_logprobs >= 1")
        root = base_url.rstrip("/")
        self._api_root = root if root.endswith("/v1") else root + "/v1"
        self._server_root = self._api_root.removesuffix("/v1")  # vLLM's /tokenize lives outside /v1
        self.chat_template = chat_template
        self._label_ids: dict[tuple[str, ...], dict[str, frozenset[int]]] = {}
        self._chat_frame: ChatFrame | None = None
        self._frame_known = False
        self._frame_lock = asyncio.Lock()
        self.model = model
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._top_logprobs = top_logprobs
        self._schema_name = schema_name
        all_headers = dict(headers or {})
        if api_key:
            all_headers["Authorization"] = f"Bearer {api_key}"
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(timeout=timeout_s)
        self._headers = all_headers

    async def _generate(self, messages: list[dict[str, str]], request: GenArgs) -> Generation:
        record = CallRecord(role=request.role, engine=self.name, model=self.model)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": self._schema_name, "schema": request.json_schema, "strict": True},
            }
        data = await self._post(
            "/chat/completions", body, record, request.deadline, estimate_message_tokens(messages)
        )
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"]
            finish_reason = choice.get("finish_reason") or "stop"
            if not isinstance(text, str):
                raise TypeError("content is not a string")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise self._bad_output(record, "chat completion without choices[0].message.content") from exc
        usage = _usage(data)
        record.prompt_tokens = usage.get("prompt_tokens", record.prompt_tokens)
        record.completion_tokens = usage.get("completion_tokens", estimate_tokens(text))
        # Output cut at max_tokens is reported as cut (the caller may ask again), not as malformed JSON.
        cut = finish_reason == "length"
        parsed = (
            decode_json_output(text, request.json_schema, record)
            if request.json_schema is not None and not cut
            else None
        )
        return Generation(text=text, record=record, parsed=parsed, finish_reason=finish_reason)

    async def classify(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None = None
    ) -> list[Classification]:
        """One ``/v1/completions`` request for all prompts.

        Each :class:`Classification` carries its own record: the call's usage is split across prompts in
        proportion to their estimated length (so the records sum to the server's usage), and ``latency_ms``
        is the whole call's wall time.
        """
        check_labels(labels)
        if not prompts:
            return []
        record = CallRecord(role=role, engine=self.name, model=self.model)
        start = time.perf_counter()
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompts,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": self._top_logprobs,
        }
        estimates = [estimate_tokens(p) for p in prompts]
        label_ids: dict[str, frozenset[int]] | None = None
        if self.chat_template:
            label_ids = await self._labels_as_ids(labels, record, deadline)
            body["return_tokens_as_token_ids"] = True
            frame = await self._frame(record, deadline)
            if frame is not None:
                # Framed here, tokenised by the server as vLLM tokenises a rendered chat: no BOS added.
                body["prompt"] = [frame.wrap(p) for p in prompts]
                body["add_special_tokens"] = False
                estimates = [estimate_tokens(p) for p in body["prompt"]]
            else:
                token_prompts = list(
                    await asyncio.gather(*(self._chat_token_ids(p, record, deadline) for p in prompts))
                )
                body["prompt"] = token_prompts
                estimates = [len(ids) for ids in token_prompts]
        data = await self._post("/completions", body, record, deadline, sum(estimates))
        record.latency_ms = (time.perf_counter() - start) * 1000
        tops = self._first_token_tops(data, len(prompts), record)
        usage = _usage(data)
        prompt_shares = split_total(usage.get("prompt_tokens", sum(estimates)), estimates)
        completion_shares = split_total(usage.get("completion_tokens", len(prompts)), [1] * len(prompts))
        results = []
        for top, prompt_tokens, completion_tokens in zip(tops, prompt_shares, completion_shares, strict=True):
            item_record = CallRecord(
                role=role,
                engine=self.name,
                model=self.model,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                latency_ms=record.latency_ms,
            )
            try:
                probs = (
                    first_token_label_probs(top, labels)
                    if label_ids is None
                    else token_id_label_probs(top, label_ids)
                )
            except ModelOutputError as exc:
                raise self._bad_output(record, str(exc)) from exc
            results.append(Classification(probs=probs, record=item_record))
        return results

    async def _chat_token_ids(self, prompt: str, record: CallRecord, deadline: float | None) -> list[int]:
        """``prompt`` as one user turn in the model's chat template, ready for the answer: token ids."""
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "add_generation_prompt": True,
        }
        return await self._tokenize(body, record, deadline)

    async def _frame(self, record: CallRecord, deadline: float | None) -> ChatFrame | None:
        """The chat template's frame (:mod:`models.chat_frame`), learnt on the first call and kept; a server
        error while learning is the call's error and the next call tries again."""
        async with self._frame_lock:
            if not self._frame_known:

                async def chat(content: str) -> list[int]:
                    return await self._chat_token_ids(content, record, deadline)

                async def text(prompt: str) -> list[int]:
                    body = {"model": self.model, "prompt": prompt, "add_special_tokens": False}
                    return await self._tokenize(body, record, deadline)

                async def detokenize(ids: list[int]) -> str:
                    data = await self._post(
                        self._server_root + "/detokenize",
                        {"model": self.model, "tokens": ids},
                        record,
                        deadline,
                        0,
                        absolute=True,
                    )
                    if not isinstance(data.get("prompt"), str):
                        raise self._bad_output(record, "/detokenize answered without a prompt string")
                    return str(data["prompt"])

                self._chat_frame = await learn_chat_frame(chat, text, detokenize)
                self._frame_known = True
        return self._chat_frame

    async def _labels_as_ids(
        self, labels: list[str], record: CallRecord, deadline: float | None
    ) -> dict[str, frozenset[int]]:
        """Each label's first token ids in the model's vocabulary, asked once per label set."""
        key = tuple(labels)
        if key not in self._label_ids:
            first: dict[str, set[int]] = {}
            for label in labels:
                spelled = label_variants(label)
                ids = await asyncio.gather(
                    *(
                        self._tokenize(
                            {"model": self.model, "prompt": text, "add_special_tokens": False},
                            record,
                            deadline,
                        )
                        for text in spelled
                    )
                )
                first[label] = {tokens[0] for tokens in ids if tokens}
            try:
                self._label_ids[key] = distinct_label_ids(first)
            except ModelOutputError as exc:
                raise self._bad_output(record, str(exc)) from exc
        return self._label_ids[key]

    async def _tokenize(self, body: dict[str, Any], record: CallRecord, deadline: float | None) -> list[int]:
        data = await self._post(self._server_root + "/tokenize", body, record, deadline, 0, absolute=True)
        tokens = data.get("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise self._bad_output(record, "/tokenize answered without a list of token ids")
        return tokens

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def _first_token_tops(self, data: dict[str, Any], n: int, record: CallRecord) -> list[dict[str, float]]:
        tops: dict[int, dict[str, float]] = {}
        try:
            for position, choice in enumerate(data["choices"]):
                top = choice["logprobs"]["top_logprobs"][0]
                if not isinstance(top, dict) or not top:
                    raise TypeError("top_logprobs[0] is not a non-empty object")
                tops[int(choice.get("index", position))] = {str(t): float(lp) for t, lp in top.items()}
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise self._bad_output(record, "completion without logprobs.top_logprobs[0]") from exc
        if sorted(tops) != list(range(n)):
            raise self._bad_output(record, f"expected {n} choices indexed 0..{n - 1}, got {sorted(tops)}")
        return [tops[i] for i in range(n)]

    async def _post(
        self,
        path: str,
        body: dict[str, Any],
        record: CallRecord,
        deadline: float | None,
        prompt_estimate: int,
        *,
        absolute: bool = False,
    ) -> dict[str, Any]:
        """POST ``body`` to ``path`` under /v1 (or to the URL ``path``): the decoded JSON object, or a
        ModelError carrying ``record`` (latency set)."""
        start = time.perf_counter()
        url = path if absolute else self._api_root + path
        try:
            left = deadline_left(deadline)
            # Sent from here on: charge it even if the call fails (a tokenize call adds nothing).
            record.prompt_tokens = max(record.prompt_tokens, prompt_estimate)
            budget = self._timeout_s if left is None else min(self._timeout_s, left)
            try:
                async with asyncio.timeout(budget):
                    response = await self._send(url, body)
            except (TimeoutError, httpx.TimeoutException) as exc:
                raise ModelTimeout("the model server did not answer in time") from exc
            if response.status_code >= 400:
                # The server's text may echo prompts or internals: log it, never put it in the error.
                logger.warning(
                    "model server %s answered HTTP %d: %.500s",
                    url,
                    response.status_code,
                    response.text,
                )
                raise ModelUnavailable(f"the model server answered HTTP {response.status_code}")
            try:
                data = response.json()
            except ValueError as exc:
                raise ModelOutputError("the model server's body is not JSON") from exc
            if not isinstance(data, dict):
                raise ModelOutputError("the model server's body is not a JSON object")
            return data
        except ModelError as exc:
            record.ok, record.error = False, exc.code
            exc.record = record
            raise
        finally:
            record.latency_ms = (time.perf_counter() - start) * 1000

    async def _send(self, url: str, body: dict[str, Any]) -> httpx.Response:
        attempt = 0
        while True:
            try:
                return await self._client.post(url, json=body, headers=self._headers)
            except httpx.TimeoutException:
                raise
            except httpx.TransportError as exc:  # connect, read/write and protocol errors
                if attempt >= self._max_retries:
                    logger.warning("model server %s unreachable: %r", url, exc)
                    raise ModelUnavailable("the model server is unreachable") from exc
                await asyncio.sleep(_RETRY_BACKOFF_S * 2**attempt)
                attempt += 1

    def _bad_output(self, record: CallRecord, detail: str) -> ModelOutputError:
        logger.warning("model server %s: %s", self._api_root, detail)
        record.ok, record.error = False, ModelOutputError.code
        return ModelOutputError("the model server's answer is malformed", record=record)


def _usage(data: dict[str, Any]) -> dict[str, int]:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return {}
    return {
        k: v for k, v in usage.items() if k in ("prompt_tokens", "completion_tokens") and isinstance(v, int)
    }
