"""The checkers themselves: a real body and stream pass, and each broken rule is caught (a checker that
accepts anything would make the whole suite meaningless)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.contract.checks import assert_v2_body, parse_sse, validate_against_schema
from tests.contract.stream_checks import assert_v2_stream
from tests.support.service import BUDGET_QUESTION, post

Frames = list[tuple[str, dict[str, Any]]]


@pytest.fixture(scope="module")
def sample(demo_client: TestClient) -> dict[str, Any]:
    body = post(demo_client, "/query/v2", {"query": BUDGET_QUESTION}).json()
    frames = parse_sse(post(demo_client, "/query/v2/stream", {"query": BUDGET_QUESTION}).text)
    assert body["claims"] and body["framing"], "the sample needs a claim and a framing span"
    return {"body": body, "frames": frames}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = body
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value

    return change


def _shift_claim(body: dict[str, Any]) -> None:
    claim = body["claims"][0]
    claim["start"] += 1
    claim["start_utf16"] += 1


def _append_text(body: dict[str, Any]) -> None:
    body["answer"] += " Teks tanpa rentang."


BODY_BREAKS: dict[str, Callable[[dict[str, Any]], object]] = {
    "schema": _set("schema", "annotate-v1"),
    "offset shifted": _shift_claim,
    "utf16 differs": _set("claims.0.end_utf16", 10_000),
    "framing overlaps claim": lambda b: b["framing"][0].update(
        end=b["claims"][0]["start"] + 2,
        end_utf16=b["claims"][0]["start_utf16"] + 2,
        text=b["answer"][b["framing"][0]["start"] : b["claims"][0]["start"] + 2],
    ),
    "uncovered text": _append_text,
    "supported count": lambda b: b["faithfulness"].update(supported=b["faithfulness"]["supported"] + 1),
    "verification": _set("faithfulness.verification", "partial"),
    "judge_status": _set("faithfulness.judge_status", "skipped"),
    "framing_check": _set("faithfulness.framing_check", "unavailable"),
    "grounding_rate": _set("grounding_rate", 0.25),
    "grounding copy": _set("faithfulness.grounding.claims_total", 7),
    "from_conversation counted": lambda b: (
        b["claims"][0].update(verdict="from_conversation"),
        b["faithfulness"].update(supported=0, from_conversation=1, verification="none"),
    ),
    "reason on supported": _set("claims.0.unverified_reason", "deadline"),
    "unverified without reason": _set("claims.0.verdict", "unverified"),
    "unknown verdict": _set("claims.0.verdict", "grounded"),
    "unknown layout": _set("claims.0.layout", "bullet"),
    "citation pair missing": _set("claims.0.citations", []),
    "invalid key published": lambda b: b["claims"][0].update(
        invalid_citation_keys=list(b["claims"][0]["citation_keys"])
    ),
    "checked outside context budget": _set("faithfulness.checked", False),
    "checked null": _set("faithfulness.checked", None),
    "v1 field": _set("claim_map", []),
    "opt-in unasked": _set("tool_call_audit", []),
    "grounded key": _set("faithfulness.grounded", True),
    "answer.v1 field missing": lambda b: b.pop("created_at"),
    "fallback without reason": _set("fallback_used", True),
    "refusal with claims": lambda b: b.update(fallback_used=True, fallback_reason="model_timeout"),
    "citation label": lambda b: b.update(
        answer=b["answer"].replace(b["framing"][0]["text"], "[P1] " + b["framing"][0]["text"][5:], 1)
    ),
    "framing text differs": _set("framing.0.text", "Lain."),
    "no citation_key": lambda b: b["citations"][0].pop("citation_key"),
}


def test_a_real_body_and_stream_pass(sample: dict[str, Any]) -> None:
    assert_v2_body(sample["body"])
    assert_v2_stream(sample["frames"])


@pytest.mark.parametrize("name", list(BODY_BREAKS))
def test_each_broken_body_rule_is_caught(sample: dict[str, Any], name: str) -> None:
    body = copy.deepcopy(sample["body"])
    BODY_BREAKS[name](body)
    with pytest.raises(AssertionError):
        assert_v2_body(body)


def _move(frames: Frames, event: str, after: str) -> Frames:
    frames = list(frames)
    item = next(f for f in frames if f[0] == event)
    frames.remove(item)
    index = max(i for i, f in enumerate(frames) if f[0] == after)
    frames.insert(index + 1, item)
    return frames


STREAM_BREAKS: dict[str, Callable[[Frames], Frames]] = {
    "annotations after text": lambda f: _move(f, "annotations", "answer.delta"),
    "two done frames": lambda f: [*f, f[-1]],
    "done not last": lambda f: [*f[:-1], ("answer.delta", {"text": "x"}), f[-1]],
    "tool frame late": lambda f: _move(f, "tool.started", "trace"),
    "no schema": lambda f: [(e, {**d, "schema": None}) if e == "message.start" else (e, d) for e, d in f],
    "citation without key": lambda f: [
        (e, {k: v for k, v in d.items() if k != "citation_key"}) if e == "citation" else (e, d) for e, d in f
    ],
    "annotations with text": lambda f: [
        (e, {**d, "claims": [{**c, "text": "x"} for c in d["claims"]]}) if e == "annotations" else (e, d)
        for e, d in f
    ],
    "delta altered": lambda f: [
        (e, {"text": d["text"] + "!"}) if e == "answer.delta" else (e, d) for e, d in f
    ],
    "no annotations": lambda f: [(e, d) for e, d in f if e != "annotations"],
    "v1 faithfulness frame": lambda f: [*f[:-1], ("faithfulness", {}), f[-1]],
}


@pytest.mark.parametrize("name", list(STREAM_BREAKS))
def test_each_broken_stream_rule_is_caught(sample: dict[str, Any], name: str) -> None:
    frames = STREAM_BREAKS[name](copy.deepcopy(sample["frames"]))
    with pytest.raises((AssertionError, StopIteration, IndexError, KeyError)):
        assert_v2_stream(frames, body=sample["body"])


def test_schema_validation_catches_a_wrong_type(sample: dict[str, Any]) -> None:
    validate_against_schema(sample["body"], "query_v2_response")
    with pytest.raises(AssertionError):
        validate_against_schema({**sample["body"], "claims_total": "dua"}, "query_v2_response")


def test_parse_sse_reads_frames_and_rejects_garbage() -> None:
    text = 'event: trace\ndata: {"a": 1}\n\n: keep-alive\n\nevent: done\ndata: {"b":\ndata: 2}\n\n'
    assert parse_sse(text) == [("trace", {"a": 1}), ("done", {"b": 2})]
    with pytest.raises(AssertionError):
        parse_sse("data: {}\n\n")
    with pytest.raises(AssertionError):
        parse_sse("event: x\nretry: 5\ndata: {}\n\n")
