"""The LLM writer: one structured-output call per round, against ``prompts.SEGMENT_JSON_SCHEMA``.

Output that is not JSON, or JSON that is not a segment list, comes back as problems (the agent then asks for
one regeneration); model failures propagate as :class:`~models.base.ModelError` with their call records.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from models.base import Engine, ModelOutputError
from serve_app.agent.prompts import SEGMENT_JSON_SCHEMA, build_messages, regeneration_message
from serve_app.agent.writers.base import Writer, WriteRequest, WriterOutput
from serve_app.answer.segments import Segment
from serve_app.budget import RequestBudget


def parse_segments(data: Any) -> tuple[list[Segment] | None, list[str]]:
    """Segments from decoded JSON ``{"segments": [...]}``; (None, problems) when the shape is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("segments"), list):
        return None, ["the output must be one JSON object with a 'segments' array"]
    segments: list[Segment] = []
    problems: list[str] = []
    for i, item in enumerate(data["segments"], 1):
        if not isinstance(item, dict):
            problems.append(f"segment {i}: must be an object with text, kind, cites and layout")
            continue
        text, kind, layout = item.get("text"), item.get("kind"), item.get("layout")
        cites = item.get("cites", [])
        if not isinstance(text, str):
            problems.append(f"segment {i}: text must be a string")
            text = ""
        if not isinstance(cites, list) or not all(isinstance(c, str) for c in cites):
            problems.append(f"segment {i}: cites must be a list of strings such as 'P1'")
            cites = []
        segments.append(Segment(text=text, kind=str(kind), layout=str(layout), cites=tuple(cites)))
    return (None, problems) if problems else (segments, [])


def bounded_segment_schema(
    max_segments: int | None, max_segment_chars: int | None, max_cites: int | None = None
) -> dict[str, Any]:
    """The segment schema with at most ``max_segments`` segments of at most ``max_segment_chars`` characters,
    each citing at most ``max_cites`` passages.

    Guided decoding then cannot write past those bounds, so a small or slow model ends its JSON within the
    token limit instead of being cut (a cut output is a lost round)."""
    if max_segments is None and max_segment_chars is None and max_cites is None:
        return SEGMENT_JSON_SCHEMA
    schema = copy.deepcopy(SEGMENT_JSON_SCHEMA)
    segments = schema["properties"]["segments"]
    if max_segments is not None:
        segments["maxItems"] = max_segments
    if max_segment_chars is not None:
        segments["items"]["properties"]["text"]["maxLength"] = max_segment_chars
    if max_cites is not None:  # a small model may repeat "P1" until the token limit
        segments["items"]["properties"]["cites"]["maxItems"] = max_cites
    return schema


class LLMWriter(Writer):
    name = "llm"

    def __init__(
        self,
        engine: Engine,
        *,
        max_output_tokens: int = 1024,
        temperature: float = 0.0,
        max_segments: int | None = None,
        max_segment_chars: int | None = None,
        max_cites: int | None = None,
    ) -> None:
        self.engine = engine
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        self.json_schema = bounded_segment_schema(max_segments, max_segment_chars, max_cites)

    async def write(self, request: WriteRequest, *, budget: RequestBudget) -> WriterOutput:
        # v1 and v2 use the same prompt and the same segments (the v1 gate removes, v2 marks), so ``mode``
        # does not change what is asked.
        messages = build_messages(request)
        if request.regenerate_feedback:
            if request.previous_output:
                messages.append({"role": "assistant", "content": request.previous_output})
            messages.append(regeneration_message(request.regenerate_feedback))
        try:
            generation = await self.engine.generate(
                messages,
                role="agent",
                json_schema=self.json_schema,
                max_tokens=self.max_output_tokens,
                temperature=self.temperature,
                deadline=budget.agent_deadline(),
            )
        except ModelOutputError as exc:
            return WriterOutput(None, exc.record, ["the output was not valid JSON"], raw="")
        if generation.finish_reason == "length":
            return WriterOutput(
                None,
                generation.record,
                ["the output was cut at the token limit"],
                finish_reason="length",
                raw=generation.text,
            )
        data = generation.parsed
        if data is None:
            try:
                data = json.loads(generation.text)
            except ValueError:
                return WriterOutput(
                    None, generation.record, ["the output was not valid JSON"], raw=generation.text
                )
        segments, problems = parse_segments(data)
        return WriterOutput(segments, generation.record, problems, raw=generation.text)
