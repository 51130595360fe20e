"""What later turns of a conversation may see of earlier answers (CONTRACT.md "Conversations").

Pure functions over stored messages (``Store.list_messages``: user ``{role, content}``, assistant
``{role, content, body}``). Model history, follow-up document choice, ``from_conversation`` marking and
long-term memory use only verified text: the supported claims of earlier v2 answers, plus their framing
and conversation segments where the contract allows. One exception, for model history only: an earlier
answer with no supported claim is quoted whole after a fixed note saying nothing in it was verified, so
the model knows what the reader saw. Stored v1 answers hold only kept (verified) sentences and are used
whole. The reader still sees every stored answer whole; that is not this module's concern.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from models.json_types import JSON, JSONValue, json_list, json_text

NO_VERIFIED_NOTE = (
    "Catatan: tidak ada pernyataan dalam jawaban berikut yang terverifikasi; isinya bukan bukti."
)
MAX_PREFERRED_DOCUMENTS = 6
# Segments a later turn may see: supported claims, and conversation repeats (already verified or the
# user's own words). Framing spans are added separately; they carry no verdict.
_HISTORY_VERDICTS = frozenset({"supported", "from_conversation"})
# Words by which an Indonesian (or English) follow-up points back at what was just discussed.
_BACK_REFERENCES = frozenset(
    {
        "tersebut",
        "itu",
        "ini",
        "tadi",
        "sebelumnya",
        "barusan",
        "diatas",
        "atas",
        "dokumennya",
        "isinya",
        "pasalnya",
        "aturannya",
        "qanunnya",
        "peraturannya",
        "bunyinya",
        "ringkasannya",
        "rinciannya",
        "lampirannya",
        "detailnya",
        "that",
        "this",
        "it",
        "above",
        "previous",
        "same",
    }
)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class HistoryView:
    turns: list[dict[str, str]]  # [{"role": "user" | "assistant", "content": str}], oldest first
    truncated: bool  # earlier exchanges were left out
    exchanges_in_view: int


class _CitedDocument(TypedDict):
    """A document an earlier answer's verified statements cite (see _supported_documents)."""

    document_id: str
    title: str
    number: JSONValue
    year: int | None
    position: int


def _body(message: JSON) -> JSON:
    body = message.get("body")
    return body if isinstance(body, dict) else message


def _is_v2(body: JSON) -> bool:
    return body.get("schema") == "annotate-v2" or ("claims" in body and "claim_map" not in body)


def _claims(body: JSON) -> list[JSON]:
    return [c for c in json_list(body.get("claims")) if isinstance(c, dict)]


def _supported(body: JSON) -> list[JSON]:
    return [c for c in _claims(body) if c.get("verdict") == "supported"]


def _exchanges(messages: Sequence[JSON]) -> list[tuple[JSON, JSON]]:
    """(user, assistant) pairs in order. Writes are atomic, so an unpaired message means a damaged
    store; it is skipped rather than shown half."""
    pairs = []
    pending_user: JSON | None = None
    for message in messages:
        role = message.get("role")
        if role == "user":
            pending_user = message
        elif role == "assistant" and pending_user is not None:
            pairs.append((pending_user, message))
            pending_user = None
    return pairs


def verified_text(body: JSON) -> str | None:
    """The part of a stored v2 answer a later turn may read as verified context: supported claims,
    conversation repeats and framing, joined in answer order. None when no claim is supported."""
    if not _supported(body):
        return None
    spans: list[tuple[int, int, str, str]] = []
    for order, claim in enumerate(_claims(body)):
        if claim.get("verdict") in _HISTORY_VERDICTS:
            spans.append(
                (_start(claim, order), order, json_text(claim.get("layout")), json_text(claim.get("text")))
            )
    for order, span in enumerate(json_list(body.get("framing"))):
        if isinstance(span, dict):
            spans.append(
                (_start(span, order), order, json_text(span.get("layout")), json_text(span.get("text")))
            )
    spans.sort()
    parts: list[str] = []
    for _, _, layout, text in spans:
        if not text.strip():
            continue
        if parts:
            parts.append(" " if layout == "continue" else "\n")
        parts.append(text)
    return "".join(parts)


def _start(segment: JSON, order: int) -> int:
    start = segment.get("start")
    return start if isinstance(start, int) else order


def _assistant_history_text(body: JSON) -> str:
    answer = json_text(body.get("answer"))
    if not _is_v2(body):
        return answer  # a stored v1 answer holds only its kept, verified sentences
    verified = verified_text(body)
    if verified is None:
        return f"{NO_VERIFIED_NOTE}\n\n{answer}"
    return verified


def model_history(messages: Sequence[JSON], *, max_exchanges: int) -> HistoryView:
    """The turns the model sees: the last ``max_exchanges`` exchanges, user turns verbatim, earlier
    answers reduced to what was verified (see the module docstring)."""
    pairs = _exchanges(messages)
    keep = pairs[-max_exchanges:] if max_exchanges > 0 else []
    turns: list[dict[str, str]] = []
    for user, assistant in keep:
        turns.append({"role": "user", "content": json_text(user.get("content"))})
        turns.append({"role": "assistant", "content": _assistant_history_text(_body(assistant))})
    return HistoryView(turns=turns, truncated=len(keep) < len(pairs), exchanges_in_view=len(keep))


def memory_items(body: JSON) -> list[str]:
    """Long-term memory candidates from one stored answer: its supported claims only (v2), or the kept
    sentences of a v1 answer. A refusal yields nothing."""
    if body.get("fallback_used"):
        return []
    if _is_v2(body):
        texts = [json_text(c.get("text")) for c in sorted(_supported(body), key=lambda c: _start(c, 0))]
    else:
        texts = [json_text(e.get("text")) for e in json_list(body.get("claim_map")) if isinstance(e, dict)]
    return _unique(t.strip() for t in texts if t.strip())


def _supported_documents(body: JSON) -> list[_CitedDocument]:
    """Documents cited by the verified statements of one answer, first citation first, one entry each:
    ``{document_id, title, number, year, position}``."""
    if _is_v2(body):
        entries = sorted(_supported(body), key=lambda c: _start(c, 0))
        pairs = [p for c in entries for p in json_list(c.get("citations")) if isinstance(p, dict)]
        citations: Sequence[JSONValue] = [p.get("citation") for p in pairs]
    elif not body.get("fallback_used"):
        citations = json_list(body.get("citations"))  # v1: every published sentence is verified
    else:
        citations = []
    seen: dict[str, _CitedDocument] = {}
    for position, citation in enumerate(citations):
        if not isinstance(citation, dict):
            continue
        doc_id = citation.get("document_id")
        if isinstance(doc_id, str) and doc_id and doc_id not in seen:
            year = citation.get("document_year")
            seen[doc_id] = {
                "document_id": doc_id,
                "title": json_text(citation.get("document_title")),
                "number": citation.get("document_number"),
                "year": year if isinstance(year, int) else None,
                "position": position,
            }
    return list(seen.values())


def _previous_answer(messages: Sequence[JSON]) -> JSON | None:
    pairs = _exchanges(messages)
    return _body(pairs[-1][1]) if pairs else None


def preferred_documents(messages: Sequence[JSON]) -> list[str]:
    """Documents a follow-up's search should prefer: those cited by supported claims of the previous
    answer, at most six, newest document (by year; unknown years last) first, then in citation order."""
    previous = _previous_answer(messages)
    if previous is None:
        return []
    docs = sorted(
        _supported_documents(previous), key=lambda d: (d["year"] is None, -(d["year"] or 0), d["position"])
    )
    return [d["document_id"] for d in docs[:MAX_PREFERRED_DOCUMENTS]]


def single_referenced_document(messages: Sequence[JSON], query: str) -> str | None:
    """The one earlier document a follow-up refers to, which the agent may then read whole; else None.

    A follow-up refers to a document when it names exactly one document cited by a supported claim of
    an earlier answer (by title, or by number and year), or when it points back ("dokumen tersebut",
    "isinya", …) and the previous answer's supported claims cite exactly one document."""
    pairs = _exchanges(messages)
    if not pairs:
        return None
    earlier: dict[str, _CitedDocument] = {}
    for _, assistant in pairs:
        for doc in _supported_documents(_body(assistant)):
            earlier.setdefault(doc["document_id"], doc)
    normalized = " ".join(_WORD.findall(query.lower()))
    named = [d["document_id"] for d in earlier.values() if _names(normalized, d)]
    if len(named) == 1:
        return str(named[0])
    if named:
        return None  # several documents named: nothing single to read whole
    previous = _supported_documents(_body(pairs[-1][1]))
    if len(previous) == 1 and _BACK_REFERENCES.intersection(normalized.split()):
        return str(previous[0]["document_id"])
    return None


def _names(normalized_query: str, doc: _CitedDocument) -> bool:
    title = " ".join(_WORD.findall(doc["title"].lower()))
    if len(title) >= 8 and title in normalized_query:
        return True
    number = doc.get("number")
    if isinstance(number, str | int) and str(number).strip():
        num = " ".join(_WORD.findall(str(number).lower()))
        pattern = rf"\b(nomor|no)\s+{re.escape(num)}\b"
        year_ok = doc["year"] is None or re.search(rf"\b{doc['year']}\b", normalized_query) is not None
        return year_ok and re.search(pattern, normalized_query) is not None
    return False


def from_conversation_texts(messages: Sequence[JSON], query: str) -> list[str]:
    """Texts an answer may repeat and have marked ``from_conversation``: the user's words (earlier turns
    and this query) and the verified statements of earlier answers. Never unverified answer text."""
    texts: list[str] = []
    for user, assistant in _exchanges(messages):
        texts.append(json_text(user.get("content")))
        body = _body(assistant)
        if _is_v2(body):
            texts.extend(json_text(c.get("text")) for c in _supported(body))
        else:
            texts.extend(memory_items(body))
    texts.append(query)
    return _unique(t.strip() for t in texts if t.strip())


def _unique(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(texts))
