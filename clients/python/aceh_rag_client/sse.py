"""Server-sent events → typed events. One parser for the sync and async clients: feed it lines, it hands
back each complete event as the generated model of its name (``event: annotations`` → AnnotationsEvent)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from pydantic import BaseModel, ValidationError

from aceh_rag_client import models as m
from aceh_rag_client.errors import ProtocolError

StreamEvent = (
    m.ToolStartedEvent | m.ToolFinishedEvent | m.MessageStartEvent | m.TraceEvent | m.CitationEvent
    | m.PassageEvent | m.GuardBlockedEvent | m.AnnotationsEvent | m.V1FaithfulnessEvent | m.AnswerDeltaEvent
    | m.ArtifactsEvent | m.DoneEvent | m.ErrorEvent
)
EVENTS: dict[str, type[BaseModel]] = {
    "tool.started": m.ToolStartedEvent,
    "tool.finished": m.ToolFinishedEvent,
    "message.start": m.MessageStartEvent,
    "trace": m.TraceEvent,
    "citation": m.CitationEvent,
    "passage": m.PassageEvent,
    "guard.blocked": m.GuardBlockedEvent,
    "annotations": m.AnnotationsEvent,
    "faithfulness": m.V1FaithfulnessEvent,
    "answer.delta": m.AnswerDeltaEvent,
    "artifacts": m.ArtifactsEvent,
    "done": m.DoneEvent,
    "error": m.ErrorEvent,
}
TERMINAL = (m.DoneEvent, m.ErrorEvent)


class SSEParser:
    """The event-stream format (WHATWG HTML, "server-sent events"): ``event:`` and ``data:`` fields, a
    blank line ends an event, lines starting with ``:`` are comments (the service's keep-alives)."""

    def __init__(self) -> None:
        self._event = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> Iterator[StreamEvent]:
        line = line.rstrip("\r\n")
        if not line:
            if self._data:
                yield _typed(self._event, "\n".join(self._data))
            self._event, self._data = "message", []
            return
        if line.startswith(":"):
            return
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)


def _typed(name: str, data: str) -> StreamEvent:
    model = EVENTS.get(name)
    if model is None:
        raise ProtocolError(f"unknown event '{name}'")
    try:
        event: StreamEvent = model.model_validate(json.loads(data))  # type: ignore[assignment]
    except (ValueError, ValidationError) as exc:
        raise ProtocolError(f"event '{name}' does not match its schema: {exc}") from None
    return event
