"""The LLM roles against the real vLLM server (tests/llm/conftest.py starts it once per run).

The model is tiny (135M parameters): these tests check the protocol and the degradations, never that the
model's verdicts are right. Every assertion holds whatever the model answers.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from judge.batching import BatchCollector
from judge.llm_judge import LLMJudge
from judge.prompt import build_prompt
from judge.types import JudgeItem, JudgePassage
from models.base import CallRecord
from serve_app.agent.prompts import SEGMENT_JSON_SCHEMA
from serve_app.agent.writers.base import WriteRequest
from serve_app.agent.writers.llm import LLMWriter
from serve_app.answer.segments import Passage
from serve_app.budget import RequestBudget
from serve_app.runtime import factory
from tests.contract.checks import assert_v2_body
from tests.llm.conftest import RunningVLLM, engine, llm_config

HEADERS = {"X-API-Key": "test-key"}

# Synthetic passages (invented for these tests): a budget line and a regulation's article.
BUDGET = JudgePassage(
    "P1",
    "Pagu belanja Dinas Pendidikan Kabupaten Contoh tahun anggaran 2024 sebesar Rp 12.500.000.000, "
    "dengan realisasi Rp 11.250.000.000 (90 persen).",
    {"title": "Rincian Anggaran Kabupaten Contoh 2024", "type": "Anggaran", "year": 2024},
)
ARTICLE = JudgePassage(
    "P2",
    "Pasal 4: Setiap desa wajib menyusun rencana kerja tahunan paling lambat bulan Maret.",
    {"title": "Qanun Contoh Nomor 3 Tahun 2020", "type": "Qanun", "number": "3", "year": 2020},
)


def item(item_id: str, claim: str, *passages: JudgePassage, deadline: float | None = None) -> JudgeItem:
    return JudgeItem(item_id, claim, passages or (BUDGET,), deadline=deadline)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# ---------------------------------------------------------------------------------------------- judge


def test_judge_scores_pairs_by_logprobs_in_the_chat_template(vllm: RunningVLLM) -> None:
    eng, sent = engine(vllm)
    judge = LLMJudge(eng, rule_veto=False)
    items = [
        item("a", "Pagu belanja Dinas Pendidikan tahun 2024 sebesar Rp 12,5 miliar."),
        item("b", "Setiap desa wajib menyusun rencana kerja tahunan.", ARTICLE),
        item("c", "Kabupaten Contoh memiliki 40 sekolah menengah."),
    ]

    async def go() -> tuple[list[Any], list[int], list[bool]]:
        try:
            results = list(await judge.judge(items))
            calls = [len(sent.to("/tokenize"))]
            await judge.judge(items[:2])  # a second batch: no /tokenize at all (labels and frame are kept)
            calls.append(len(sent.to("/tokenize")))
            # the framed prompts are, token for token, what the server's own chat template makes of them
            frame = eng._chat_frame
            assert frame is not None, "no chat frame was learnt for SmolLM2's ChatML template"
            same = []
            for prompt in (build_prompt(it) for it in items):
                body = {"model": vllm.model, "prompt": frame.wrap(prompt), "add_special_tokens": False}
                as_text = await eng._tokenize(body, _record(), None)
                same.append(as_text == await eng._chat_token_ids(prompt, _record(), None))
            return results, calls, same
        finally:
            await eng._client.aclose()

    results, tokenize_calls, same = run(go())
    frame = eng._chat_frame
    assert frame is not None
    for result in results:
        assert result.verdict in ("supported", "unsupported"), result
        assert result.reasons and result.reasons[0].startswith("p_supported="), result
    completions = sent.to("/completions")
    assert len(completions) == 2
    body = completions[0]
    # one prompt per item, in the chat template's frame, label ids matched by token id
    assert body["prompt"] == [frame.wrap(build_prompt(it)) for it in items]
    assert body["add_special_tokens"] is False
    assert body["return_tokens_as_token_ids"] is True and body["max_tokens"] == 1 and body["logprobs"] == 20
    # learning the labels' ids and the frame, once: the second batch asked nothing
    assert tokenize_calls[0] == tokenize_calls[1] < 20
    assert same == [True, True, True]
    # probabilities come from the model: the three pairs do not all score the same
    assert len({r.reasons[0] for r in results}) > 1


def _record() -> CallRecord:
    return CallRecord(role="test", engine="openai", model="")


def test_concurrent_requests_reach_vllm_as_one_completions_request(vllm: RunningVLLM) -> None:
    eng, sent = engine(vllm)
    judge = LLMJudge(eng, rule_veto=False)
    claims = [f"Realisasi belanja mencapai {p} persen." for p in range(85, 93)]

    async def go() -> list[Any]:
        collector = BatchCollector(judge, max_batch_size=32, batch_wait_timeout_s=0.2)
        try:
            # eight "requests" of one segment each, at the same time
            return list(
                await asyncio.gather(
                    *(collector.submit_many([item(f"i{i}", c)]) for i, c in enumerate(claims))
                )
            )
        finally:
            await eng._client.aclose()

    results = run(go())
    assert all(r[0].verdict in ("supported", "unsupported") for r in results), results
    completions = sent.to("/completions")
    assert len(completions) == 1, [len(b["prompt"]) for b in completions]
    assert len(completions[0]["prompt"]) == len(claims)


def test_rule_veto_turns_every_changed_figure_into_unsupported(vllm: RunningVLLM) -> None:
    eng, _ = engine(vllm)
    judge = LLMJudge(eng, rule_veto=True, threshold=0.01)  # the model alone would call nearly all supported
    changed = [
        "Pagu belanja Dinas Pendidikan tahun 2024 sebesar Rp 15.500.000.000.",
        "Pagu belanja Dinas Pendidikan tahun 2024 sebesar Rp 12,5 triliun.",
        "Realisasi belanja Dinas Pendidikan tahun 2024 sebesar Rp 11.750.000.000.",
        "Realisasi belanja Dinas Pendidikan mencapai 95 persen.",
        "Pagu belanja Dinas Pendidikan tahun 2023 sebesar Rp 12.500.000.000.",
    ]

    async def go() -> list[Any]:
        try:
            return list(await judge.judge([item(f"c{i}", c) for i, c in enumerate(changed)]))
        finally:
            await eng._client.aclose()

    for result in run(go()):
        assert result.verdict == "unsupported", result
        assert any(r.startswith("rule_veto:") for r in result.reasons) or result.reasons[0].startswith(
            "p_supported="
        ), result


def test_a_passed_deadline_gives_deadline_never_supported(vllm: RunningVLLM) -> None:
    eng, sent = engine(vllm)
    judge = LLMJudge(eng, rule_veto=False)

    async def go() -> list[Any]:
        try:
            past = await judge.judge([item("p", "Pagu 2024 Rp 12,5 miliar.", deadline=time.time() - 1)])
            # passes while the call is in flight
            racing = await judge.judge([item("r", "Pagu 2024 Rp 12,5 miliar.", deadline=time.time() + 0.02)])
            return [*past, *racing]
        finally:
            await eng._client.aclose()

    past, racing = run(go())
    assert (past.verdict, past.unverified_reason) == ("unverified", "deadline")
    assert racing.verdict == "unverified" and racing.unverified_reason == "deadline", racing
    assert not sent.to("/completions") or all(len(b["prompt"]) == 1 for b in sent.to("/completions"))


def test_vllm_stopped_mid_request_gives_judge_unavailable_within_the_deadline(vllm: RunningVLLM) -> None:
    """The server is frozen BEFORE the request is sent, so it cannot answer first: a warm server answers a
    repeated prompt from its prefix cache in milliseconds, and freezing it "soon after" sending raced that
    answer. A stopped process still completes TCP handshakes (the kernel does) and its socket buffers the
    request, so the call is in flight against a server that never replies: the engine's timeout ends it."""
    eng, sent = engine(vllm, timeout_s=3.0)
    judge = LLMJudge(eng, rule_veto=False)

    async def go() -> tuple[Any, float, int]:
        try:
            await judge.judge([item("warm", "Pagu 2024 Rp 12,5 miliar.")])  # labels resolved, server warm
            before = len(sent.to("/completions"))
            started = time.perf_counter()
            with vllm.frozen():
                results = await judge.judge(
                    [item("x", "Pagu 2024 Rp 12,5 miliar.", deadline=time.time() + 20)]
                )
                sent_while_frozen = len(sent.to("/completions")) - before
            return results[0], time.perf_counter() - started, sent_while_frozen
        finally:
            await eng._client.aclose()

    result, took, sent_while_frozen = run(go())
    assert sent_while_frozen >= 1, "the request never reached the frozen server"
    assert (result.verdict, result.unverified_reason) == ("unverified", "judge_unavailable"), result
    assert took < 20


# ---------------------------------------------------------------------------------------------- agent


def _passages() -> list[Passage]:
    return [
        Passage(key=p.key, text=p.text, kind="tool", chunk=None, identity=dict(p.identity))
        for p in (BUDGET, ARTICLE)
    ]


def test_agent_writes_segments_through_structured_output(vllm: RunningVLLM) -> None:
    eng, sent = engine(vllm)
    writer = LLMWriter(eng, max_output_tokens=200, max_segments=2, max_segment_chars=120, max_cites=2)

    async def go() -> Any:
        try:
            request = WriteRequest(
                query="Berapa pagu belanja Dinas Pendidikan tahun 2024?",
                passages=_passages(),
                editorial_prompt="Jawab singkat dalam satu kalimat.",
            )
            budget = RequestBudget(deadline=time.time() + 120, model_calls=8, context_tokens=12000)
            return await writer.write(request, budget=budget)
        finally:
            await eng._client.aclose()

    out = run(go())
    (body,) = sent.to("/chat/completions")
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["segments"]["maxItems"] == 2
    assert (
        schema["properties"]["segments"]["items"]["required"]
        == SEGMENT_JSON_SCHEMA["properties"]["segments"]["items"]["required"]
    )
    assert "Jawab singkat dalam satu kalimat." in body["messages"][0]["content"]  # the editorial prompt
    if out.finish_reason == "length":
        pytest.fail(f"the model did not finish its segments in 200 tokens: {out.raw[:300]!r}")
    assert out.segments, out.problems  # guided decoding: JSON of the schema's shape, parsed into segments
    assert all(s.text and s.kind and s.layout for s in out.segments)


def _llm_app(
    tmp: Path, demo_index: Path, demo_retriever: Any, vllm: RunningVLLM, agent_timeout_s: float
) -> Any:
    cfg = llm_config(
        tmp,
        demo_index,
        vllm,
        timeouts={"agent": agent_timeout_s},
        agent={"max_output_tokens": 200, "max_segments": 2, "max_segment_chars": 120, "max_cites": 2},
    )
    # The agent works until 65 % of the deadline: room for the agent's timeout whatever it is.
    cfg = cfg.model_copy(
        update={"budgets": cfg.budgets.model_copy(update={"deadline_s": agent_timeout_s * 2})}
    )
    pipeline = factory.build_inprocess(cfg, retriever=demo_retriever)
    return factory.build_inprocess_app(cfg, retriever=demo_retriever, pipeline=pipeline)


@pytest.fixture(scope="module")
def llm_clients(
    vllm: RunningVLLM, demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """``generous``: 200 tokens at about 5 a second took 11 s here and over 75 s in a CI run on a slower,
    busier 2-core host, and this checks the path, not the model's speed. ``short``: the stopped-server test
    waits the agent's whole timeout, so that it costs seconds, not minutes."""
    apps = {
        name: _llm_app(tmp_path_factory.mktemp(name), demo_index, demo_retriever, vllm, t)
        for name, t in (("generous", 240.0), ("short", 8.0))
    }
    with TestClient(apps["generous"]) as generous, TestClient(apps["short"]) as short:
        yield {"generous": generous, "short": short}


def test_query_v2_with_every_llm_role_returns_a_contract_valid_body(
    llm_clients: dict[str, TestClient],
) -> None:
    llm_client = llm_clients["generous"]
    started = time.perf_counter()
    response = llm_client.post(
        "/query/v2", json={"query": "Apa saja kewajiban desa menurut qanun?"}, headers=HEADERS
    )
    took = time.perf_counter() - started
    assert response.status_code == 200, response.text
    body = response.json()
    assert_v2_body(body)
    assert body["model"]["agent"]["engine"] == "openai" and body["model"]["judge"]["engine"] == "openai"
    health = llm_client.get("/healthz").json()
    assert set(health["model_servers"].values()) == {"ok"} and health["status"] == "ok"
    metrics = llm_client.get("/metrics").text
    agent_calls = [
        line for line in metrics.splitlines() if line.startswith("aceh_model_calls_total") and "agent" in line
    ]
    assert 'aceh_model_calls_total{engine="openai",outcome="ok",role="agent"}' in metrics, (
        f"after {took:.0f} s, fallback {body.get('fallback_reason')}: {agent_calls}"
    )


def test_vllm_stopped_gives_a_degraded_answer_and_healthz_names_the_server(
    llm_clients: dict[str, TestClient], vllm: RunningVLLM
) -> None:
    llm_short_timeout_client = llm_clients["short"]
    with vllm.frozen():
        health = llm_short_timeout_client.get("/healthz")
        response = llm_short_timeout_client.post(
            "/query/v2", json={"query": "Apa saja kewajiban desa menurut qanun?"}, headers=HEADERS
        )
    assert health.status_code == 200
    assert health.json()["status"] == "degraded"
    assert health.json()["model_servers"] == {vllm.base_url: "unavailable"}
    # the agent's call times out: the contract's refusal (or 502 when the connection is refused)
    assert response.status_code in (200, 502), response.text
    if response.status_code == 200:
        body = response.json()
        assert_v2_body(body)
        assert body["fallback_reason"] in ("model_timeout", "unparseable_completion"), body["fallback_reason"]
        assert all(c["verdict"] != "supported" for c in body["claims"])
