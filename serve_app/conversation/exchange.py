"""One turn as the store writes it: the question, the stored answer body and its memory items, and the rows
they become inside the store's transaction (:mod:`serve_app.conversation.store` takes the locks)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from models.json_types import JSON, JSONValue
from serve_app.conversation.tables import t_memory, t_messages

RouteFamily = Literal["v1", "v2"]
# Body keys kept in their own columns (annotations), put back when a message is read.
ANNOTATION_KEYS = ("claims", "framing")


@dataclass(frozen=True, slots=True)
class Exchange:
    """One turn to store: the question, the stored answer body and its memory items. ``new``: the
    conversation does not exist yet and is created, claimed by ``route_family`` and written in one
    transaction (``conversation_id`` is the caller's new ``uuid4().hex``, so the body can already name it)."""

    conversation_id: str
    owner: str
    route_family: RouteFamily
    user_text: str
    assistant_body: JSON
    memory_items: Sequence[str] = ()
    new: bool = False


def _memory_text(item: Any) -> str:
    if not isinstance(item, str):
        raise TypeError(f"memory items are strings, not {type(item).__name__}")
    return item


def insert_exchange(conn: Any, exchange: Exchange, last_ordinal: int) -> str:
    """The rows of one turn, inside the caller's transaction; returns the assistant message id."""
    cid, owner = exchange.conversation_id, exchange.owner
    body = dict(exchange.assistant_body)
    annotations = {k: body.pop(k, None) for k in ANNOTATION_KEYS}
    v2_faithfulness = body.pop("v2_faithfulness", None)
    answer = body.get("answer")
    now = datetime.now(UTC)

    def message(ordinal: int, role: str, content: str, **columns: JSONValue) -> dict[str, object]:
        row = {"id": uuid.uuid4().hex, "conversation_id": cid, "ordinal": last_ordinal + ordinal}
        return {**row, "role": role, "content": content, "created_at": now, **columns}

    # The turn's two messages, in order: the question, then the answer with its annotation columns.
    user = message(1, "user", exchange.user_text)
    content = answer if isinstance(answer, str) else ""
    assistant = message(2, "assistant", content, body=body, v2_faithfulness=v2_faithfulness, **annotations)
    for row in (user, assistant):  # one insert each: the user row has none of the answer's columns
        conn.execute(t_messages.insert().values(**row))
    assistant_id = str(assistant["id"])
    items = [
        {
            "owner": owner,
            "conversation_id": cid,
            "source_message_id": assistant_id,
            "text": _memory_text(item),
            "created_at": now,
        }
        for item in exchange.memory_items
    ]
    if items:
        conn.execute(t_memory.insert(), items)
    return assistant_id
