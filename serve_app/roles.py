"""The roles the pipeline and the ingress compose, one Protocol each. In one process they are the plain
objects the factory builds (GuardService, Agent, Annotator, Store, LocalRetrieverPort); in the Ray graph
the remote ones are the handle adapters of runtime/ports.py, which have the same async methods. The
retriever's interface is :class:`retrieval.port.RetrieverPort`, re-exported here: the agent's tools use
it too, and agent/ may not import this module."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Protocol

from models.json_types import JSONObject
from retrieval.port import RetrieverPort
from serve_app.agent.agent import AgentOutcome, AgentRequest
from serve_app.agent.tools.base import EventSink, ToolEvent  # the one sink type: the tool runner's
from serve_app.answer.annotation import Annotation
from serve_app.answer.segments import AnnotationRequest
from serve_app.budget import RequestBudget
from serve_app.conversation.exchange import Exchange
from serve_app.conversation.store import ConversationRecord, PlaygroundReceipt
from serve_app.guard.admission import Admission
from serve_app.guard.auth import Principal
from serve_app.guard.policy import GuardDecision

__all__ = ["AgentRole", "AnnotatorRole", "EventSink", "GuardRole", "RetrieverPort", "StoreRole", "ToolEvent"]


class GuardRole(Protocol):
    """Admission in front of every route, the request and answer screens, and the guard's own texts."""

    async def admit(self, headers: Mapping[str, str], question: str | None = None) -> Admission: ...

    async def verified_identity_enabled(self) -> bool: ...

    async def playground_limit(self, principal: Principal) -> str | None: ...

    async def screen_request(self, query: str, history: Sequence[str] = ()) -> GuardDecision: ...

    async def check_answer(self, answer: str, passages: Sequence[str] = ()) -> GuardDecision: ...

    async def refusal_text(self, kind: str) -> str: ...


class AgentRole(Protocol):
    """The tool loop: reads, writes segments, and charges ``budget``; the outcome carries the charged
    budget back (the same object in one process, its copy from another)."""

    async def run(
        self, req: AgentRequest, *, budget: RequestBudget, on_event: EventSink | None = None
    ) -> AgentOutcome: ...


class AnnotatorRole(Protocol):
    """Marks every segment of a composed answer; the annotation carries the charged budget back."""

    async def annotate(self, request: AnnotationRequest, *, budget: RequestBudget) -> Annotation: ...


class StoreRole(Protocol):
    """Conversations, their messages and the playground's receipts (always in the caller's process)."""

    def create_conversation(self, owner: str) -> dict[str, str]: ...

    def get_conversation(self, cid: str, owner: str) -> ConversationRecord | None: ...

    def list_messages(self, cid: str, *, last: int | None = None) -> list[JSONObject]: ...

    def write_exchange(self, exchange: Exchange) -> str: ...

    def record_playground_receipt(self, receipt: PlaygroundReceipt) -> None: ...

    def conversation_lock(self, cid: str) -> contextlib.AbstractAsyncContextManager[None]: ...
