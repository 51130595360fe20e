"""A small OpenAI-compatible server for the engine tests, speaking vLLM's wire format.

It runs on 127.0.0.1 on a free port in a background thread. Completions score each prompt with a
distribution over next tokens (``distributions[prompt]``, or a deterministic one derived from the prompt)
and answer with vLLM's ``logprobs`` block (``tokens``, ``token_logprobs``, ``top_logprobs``,
``text_offset``); chat completions answer ``chat_reply(body)``. Requests are validated the way vLLM does
(``logprobs`` above 20 is a 400, a malformed ``response_format`` is a 400). ``script`` holds one-shot
misbehaviours consumed by the next requests: ``("status", 500)``, ``("sleep", seconds)``,
``("malformed", None)`` (a body that is not JSON), ``("body", obj)`` (any JSON body), ``("drop", None)``
(close the connection without answering).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_LOGPROBS = 20
VOCAB = [" supported", " unsupported", " yes", " no", " the", "\n", " maybe", ".", " A", " B"]


def default_distribution(prompt: str) -> dict[str, float]:
    """A deterministic next-token distribution over VOCAB derived from the prompt's hash."""
    digest = hashlib.sha256(prompt.encode()).digest()
    weights = [1 + b for b in digest[: len(VOCAB)]]
    total = sum(weights)
    return {tok: w / total for tok, w in zip(VOCAB, weights, strict=True)}


class FakeOpenAIServer:
    def __init__(self, model: str = "toy-model") -> None:
        self.model = model
        self.distributions: dict[str, dict[str, float]] = {}
        self.chat_reply: Callable[[dict[str, Any]], str] = lambda body: body["messages"][-1]["content"]
        self.script: list[tuple[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.shuffle_choices = False
        self.report_usage = True
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: (host, port)
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def next_misbehaviour(self) -> tuple[str, Any] | None:
        with self._lock:
            return self.script.pop(0) if self.script else None

    # --- the protocol -------------------------------------------------------------------------

    def completions(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompts = body.get("prompt")
        if isinstance(prompts, str):
            prompts = [prompts]
        k = body.get("logprobs")
        if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
            return _error(400, "prompt must be a string or a list of strings")
        if k is not None and (not isinstance(k, int) or k < 0 or k > MAX_LOGPROBS):
            return _error(400, f"Requested sample logprobs of {k}, which is greater than max allowed: 20")
        if body.get("max_tokens") != 1:
            return _error(400, "this fake only generates one token per completion")
        choices = []
        for index, prompt in enumerate(prompts):
            dist = self.distributions.get(prompt) or default_distribution(prompt)
            ranked = sorted(dist.items(), key=lambda kv: kv[1], reverse=True)
            token, prob = ranked[0]
            logprobs = None
            if k is not None:
                top = {t: math.log(p) if p > 0 else -9999.0 for t, p in ranked[:k]}
                top[token] = math.log(prob)  # vLLM always includes the sampled token
                logprobs = {
                    "text_offset": [0],
                    "token_logprobs": [math.log(prob)],
                    "tokens": [token],
                    "top_logprobs": [top],
                }
            choices.append(
                {
                    "index": index,
                    "text": token,
                    "logprobs": logprobs,
                    "finish_reason": "length",
                    "stop_reason": None,
                    "prompt_logprobs": None,
                }
            )
        if self.shuffle_choices:
            choices.reverse()
        prompt_tokens = sum(len(p.split()) for p in prompts)
        return 200, self._envelope("text_completion", choices, prompt_tokens, len(prompts))

    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and "content" in m for m in messages
        ):
            return _error(400, "messages must be a list of {role, content}")
        fmt = body.get("response_format")
        if fmt is not None:
            schema_block = fmt.get("json_schema") if isinstance(fmt, dict) else None
            if (
                fmt.get("type") != "json_schema"
                or not isinstance(schema_block, dict)
                or not isinstance(schema_block.get("schema"), dict)
                or not schema_block.get("name")
            ):
                return _error(400, "response_format must be {type: json_schema, json_schema: {name, schema}}")
        content = self.chat_reply(body)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": content, "tool_calls": []},
            "logprobs": None,
            "finish_reason": "stop",
            "stop_reason": None,
        }
        prompt_tokens = sum(len(str(m["content"]).split()) for m in messages)
        return 200, self._envelope("chat.completion", [choice], prompt_tokens, len(content.split()))

    def _envelope(
        self, obj: str, choices: list[dict[str, Any]], prompt: int, completion: int
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": "cmpl-test",
            "object": obj,
            "created": int(time.time()),
            "model": self.model,
            "choices": choices,
        }
        if self.report_usage:
            body["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return body


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": None,
        "code": status,
    }


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:  # the model list, as /healthz probes it
            if self.path == "/v1/models":
                payload = {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                return self._send(200, json.dumps(payload).encode())
            self._send(*_encoded(_error(404, "Not Found")))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.loads(raw or b"{}")
            server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            misbehaviour = server.next_misbehaviour()
            if misbehaviour is not None:
                kind, arg = misbehaviour
                if kind == "drop":
                    self.close_connection = True
                    return
                if kind == "sleep":
                    time.sleep(arg)
                elif kind == "status":
                    return self._send(
                        arg,
                        json.dumps(
                            {"object": "error", "message": "SECRET internal trace", "code": arg}
                        ).encode(),
                    )
                elif kind == "malformed":
                    return self._send(200, b'{"choices": [ not json')
                elif kind == "body":
                    return self._send(200, json.dumps(arg).encode())
            if body.get("model") != server.model:
                status, payload = _error(404, f"The model `{body.get('model')}` does not exist.")
            elif self.path == "/v1/completions":
                status, payload = server.completions(body)
            elif self.path == "/v1/chat/completions":
                status, payload = server.chat(body)
            else:
                status, payload = _error(404, "Not Found")
            self._send(status, json.dumps(payload).encode())

        def _send(self, status: int, data: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (deadline tests)
                pass

    return Handler


def _encoded(answer: tuple[int, dict[str, Any]]) -> tuple[int, bytes]:
    return answer[0], json.dumps(answer[1]).encode()
