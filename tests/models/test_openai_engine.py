from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from models.base import Classification, Generation, ModelOutputError, ModelTimeout, ModelUnavailable
from models.label_tokens import first_token_label_probs
from models.openai_engine import OpenAIEngine
from tests.models.openai_server import FakeOpenAIServer
from tests.support.net import free_port

LABELS = ["supported", "unsupported"]
SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": LABELS}, "reason": {"type": "string"}},
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def engine_for(server: FakeOpenAIServer, **options: object) -> OpenAIEngine:
    return OpenAIEngine(base_url=server.base_url, model=server.model, **options)  # type: ignore[arg-type]


T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def _classify(engine: OpenAIEngine, prompts: list[str], **kw: object) -> list[Classification]:
    try:
        return await engine.classify(prompts, LABELS, role="judge", **kw)  # type: ignore[arg-type]
    finally:
        await engine.aclose()


async def _generate(engine: OpenAIEngine, **kw: object) -> Generation:
    try:
        return await engine.generate([{"role": "user", "content": "check this"}], role="agent", **kw)  # type: ignore[arg-type]
    finally:
        await engine.aclose()


# --- classification ------------------------------------------------------------------------------


def test_classify_sends_one_request_and_renormalises(server: FakeOpenAIServer) -> None:
    server.distributions["p1"] = {" supported": 0.6, " unsupported": 0.2, " the": 0.2}
    server.distributions["p2 is longer"] = {" unsupported": 0.5, " supported": 0.1, ".": 0.4}
    results = run(_classify(engine_for(server), ["p1", "p2 is longer"]))

    assert len(server.requests) == 1
    sent = server.requests[0]
    assert sent["path"] == "/v1/completions"
    assert sent["body"]["prompt"] == ["p1", "p2 is longer"]
    assert sent["body"]["max_tokens"] == 1 and sent["body"]["logprobs"] == 20
    assert results[0].probs == pytest.approx({"supported": 0.75, "unsupported": 0.25})
    assert results[0].label == "supported"
    assert results[1].probs == pytest.approx({"supported": 1 / 6, "unsupported": 5 / 6})
    assert results[1].label == "unsupported"


def test_label_outside_top_k_gets_half_the_kth_probability(server: FakeOpenAIServer) -> None:
    server.distributions["p"] = {" supported": 0.5, " maybe": 0.3, " unsupported": 0.05, " the": 0.15}
    [result] = run(_classify(engine_for(server, top_logprobs=2), ["p"]))
    floor = 0.3 / 2  # top-2 is " supported" and " maybe"
    assert result.probs["unsupported"] == pytest.approx(floor / (0.5 + floor))
    assert result.probs["unsupported"] > 0
    assert result.probs["supported"] == pytest.approx(0.5 / (0.5 + floor))


def test_spelling_variants_pool_into_their_label(server: FakeOpenAIServer) -> None:
    server.distributions["p"] = {
        " Supported": 0.3,
        "supported": 0.2,
        " unsupported": 0.1,
        "un": 0.1,
        " the": 0.3,
    }
    [result] = run(_classify(engine_for(server), ["p"]))
    assert result.probs == pytest.approx({"supported": 0.5 / 0.7, "unsupported": 0.2 / 0.7})


def test_choices_are_matched_by_index_and_usage_is_split(server: FakeOpenAIServer) -> None:
    server.shuffle_choices = True
    prompts = ["one", "two words", "three little words here"]
    for prompt, lead in zip(prompts, ["supported", "unsupported", "supported"], strict=True):
        other = "unsupported" if lead == "supported" else "supported"
        server.distributions[prompt] = {" " + lead: 0.8, " " + other: 0.2}
    results = run(_classify(engine_for(server), prompts))
    assert [r.label for r in results] == ["supported", "unsupported", "supported"]
    assert sum(r.record.prompt_tokens for r in results) == 1 + 2 + 4  # the server's usage, split
    assert [r.record.completion_tokens for r in results] == [1, 1, 1]
    assert all(r.record.ok and r.record.engine == "openai" and r.record.role == "judge" for r in results)
    assert all(r.record.latency_ms > 0 for r in results)


def test_usage_is_estimated_when_the_server_reports_none(server: FakeOpenAIServer) -> None:
    server.report_usage = False
    results = run(_classify(engine_for(server), ["a b c", "d"]))
    assert [r.record.prompt_tokens for r in results] == [3, 1]


def test_no_label_in_top_k_gives_uniform_not_zero() -> None:
    probs = first_token_label_probs({" the": math.log(0.6), ".": math.log(0.4)}, LABELS)
    assert probs == pytest.approx({"supported": 0.5, "unsupported": 0.5})


def test_minus_infinity_logprobs_still_leave_no_zero() -> None:
    probs = first_token_label_probs({" supported": 0.0, " the": -9999.0}, LABELS)
    assert probs["unsupported"] > 0
    assert probs["supported"] == pytest.approx(1.0)


def test_ambiguous_prefix_token_counts_for_no_label() -> None:
    # "s" starts "supported" and "sure": it cannot tell them apart, so it is skipped.
    probs = first_token_label_probs(
        {"s": math.log(0.5), " sure": math.log(0.3), " supp": math.log(0.2)}, ["supported", "sure"]
    )
    assert probs == pytest.approx({"supported": 0.4, "sure": 0.6})


def test_invalid_labels_are_programmer_errors(server: FakeOpenAIServer) -> None:
    engine = engine_for(server)
    with pytest.raises(ValueError):
        run(engine.classify(["p"], ["yes", "Yes"], role="judge"))
    with pytest.raises(ValueError):
        run(engine.classify(["p"], [], role="judge"))
    assert run(engine.classify([], LABELS, role="judge")) == []
    assert server.requests == []


# --- generation ----------------------------------------------------------------------------------


def test_generate_sends_the_standard_json_schema_response_format(server: FakeOpenAIServer) -> None:
    server.chat_reply = lambda body: json.dumps({"verdict": "supported", "reason": "figures match"})
    generation = run(_generate(engine_for(server, schema_name="verdict"), json_schema=SCHEMA, max_tokens=64))
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }
    assert body["max_tokens"] == 64 and body["temperature"] == 0.0
    assert generation.parsed == {"verdict": "supported", "reason": "figures match"}
    assert generation.finish_reason == "stop"
    assert generation.record.prompt_tokens == 2 and generation.record.completion_tokens == 5


def test_generate_plain_text_without_schema(server: FakeOpenAIServer) -> None:
    generation = run(_generate(engine_for(server)))
    assert generation.text == "check this" and generation.parsed is None
    assert "response_format" not in server.requests[0]["body"]


@pytest.mark.parametrize("reply", ["not json at all", json.dumps({"verdict": "maybe", "reason": "x"})])
def test_generate_output_that_breaks_the_schema_is_a_model_output_error(
    server: FakeOpenAIServer, reply: str
) -> None:
    server.chat_reply = lambda body: reply
    with pytest.raises(ModelOutputError) as info:
        run(_generate(engine_for(server), json_schema=SCHEMA))
    assert info.value.record is not None and info.value.record.error == "bad_output"


def test_api_key_base_url_forms_and_extra_headers(server: FakeOpenAIServer) -> None:
    engine = OpenAIEngine(
        base_url=server.base_url + "/v1/", model=server.model, api_key="sk-test", headers={"X-Tenant": "aceh"}
    )
    run(_generate(engine))
    headers = {k.lower(): v for k, v in server.requests[0]["headers"].items()}
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["x-tenant"] == "aceh"


# --- failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 429, 400])
def test_http_errors_are_unavailable_and_hide_the_server_text(
    server: FakeOpenAIServer, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    server.script.append(("status", status))
    with caplog.at_level(logging.WARNING, logger="models.openai_engine"):
        with pytest.raises(ModelUnavailable) as info:
            run(_classify(engine_for(server), ["p"]))
    assert "SECRET" not in str(info.value) and "SECRET" not in repr(info.value)
    assert "SECRET" in caplog.text  # kept for operators, in the log only
    record = info.value.record
    assert record is not None and not record.ok and record.error == "unavailable"
    assert record.prompt_tokens == 1 and record.latency_ms > 0


def test_unknown_model_is_unavailable(server: FakeOpenAIServer) -> None:
    engine = OpenAIEngine(base_url=server.base_url, model="other-model")
    with pytest.raises(ModelUnavailable):
        run(_generate(engine))


def test_deadline_cancels_an_in_flight_call(server: FakeOpenAIServer) -> None:
    server.script.append(("sleep", 1.5))
    start = time.perf_counter()
    with pytest.raises(ModelTimeout) as info:
        run(_classify(engine_for(server), ["p"], deadline=time.time() + 0.3))
    assert time.perf_counter() - start < 1.2
    assert info.value.record is not None and info.value.record.error == "timeout"


def test_engine_timeout_applies_without_a_deadline(server: FakeOpenAIServer) -> None:
    server.script.append(("sleep", 1.5))
    with pytest.raises(ModelTimeout):
        run(_generate(engine_for(server, timeout_s=0.3)))


def test_past_deadline_sends_nothing(server: FakeOpenAIServer) -> None:
    with pytest.raises(ModelTimeout) as info:
        run(_generate(engine_for(server), deadline=time.time() - 1))
    assert server.requests == []
    record = info.value.record
    assert record is not None and record.error == "timeout" and record.prompt_tokens == 0


@pytest.mark.parametrize(
    "misbehaviour",
    [
        ("malformed", None),
        ("body", {"choices": [{"index": 0, "text": " supported"}]}),  # no logprobs
        ("body", {"choices": []}),
        ("body", ["not", "an", "object"]),
        ("body", {"choices": [{"index": 0, "logprobs": {"top_logprobs": [None]}}]}),
    ],
)
def test_malformed_completion_bodies_are_output_errors(
    server: FakeOpenAIServer, misbehaviour: tuple[str, object]
) -> None:
    server.script.append(misbehaviour)
    with pytest.raises(ModelOutputError) as info:
        run(_classify(engine_for(server), ["p"]))
    assert info.value.record is not None and info.value.record.error == "bad_output"


def test_chat_body_without_content_is_an_output_error(server: FakeOpenAIServer) -> None:
    server.script.append(("body", {"choices": [{"index": 0, "message": {"role": "assistant"}}]}))
    with pytest.raises(ModelOutputError):
        run(_generate(engine_for(server)))


def test_dropped_connection_is_retried_only_when_asked(server: FakeOpenAIServer) -> None:
    server.script.append(("drop", None))
    with pytest.raises(ModelUnavailable):
        run(_classify(engine_for(server), ["p"]))
    server.script.append(("drop", None))
    results = run(_classify(engine_for(server, max_retries=1), ["p"]))
    assert len(results) == 1 and len(server.requests) == 3


def test_nothing_listening_is_unavailable() -> None:
    port = free_port()
    engine = OpenAIEngine(base_url=f"http://127.0.0.1:{port}", model="m", max_retries=1)
    with pytest.raises(ModelUnavailable) as info:
        run(_generate(engine))
    assert info.value.record is not None and info.value.record.error == "unavailable"
