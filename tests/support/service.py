"""Fake components for the contract tests, each a subclass of the real ABC (Writer, Judge, FramingChecker,
Engine), plus helpers to build an in-process app around them and to find passages by their text."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from judge.base import Judge
from models.base import CallRecord, Classification, Generation, ModelOutputError
from retrieval.port import LocalRetrieverPort
from retrieval.retriever import Retriever
from serve_app.agent.writers.base import Writer, WriteRequest, WriterOutput
from serve_app.agent.writers.embedded import EmbeddedWriter
from serve_app.answer.annotate import Annotator
from serve_app.answer.framing import EmbeddedFramingChecker, FramingChecker
from serve_app.answer.segments import Passage, Segment
from serve_app.budget import RequestBudget
from serve_app.config import AppConfig
from serve_app.pipeline import Pipeline
from serve_app.runtime import factory
from tests.conftest import API_KEY, make_config
from tests.support.engines import BaseFakeEngine, Messages, Schema
from tests.support.judges import judge_fn_of

HEADERS = {"X-API-Key": API_KEY}
BUDGET_QUESTION = "Berapa anggaran pendidikan Aceh tahun 2023?"
TRUE_FIGURE = "Rp871.667.219.294"
# Pasal 6 ayat (1) of the demo APBA 2023 qanun states this figure; facts below cite that passage.
SOURCE_NEEDLE = "Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.294"
TRUE_FACT = "Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.294."
ALTERED_FACT = "Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.295."
WRONG_SCALE_FACT = "Belanja urusan pendidikan ditetapkan sebesar Rp871 juta."
REWRITTEN_FACT = "Belanja urusan pendidikan ditetapkan sebesar Rp871,67 miliar."
LEAD_IN = "Berikut datanya."


def key_of(passages: Sequence[Passage], needle: str) -> str:
    """The key of the first passage shown to the writer whose text contains ``needle``."""
    for passage in passages:
        if needle in passage.text:
            return passage.key
    raise AssertionError(f"no passage shown to the writer contains {needle!r}")


def record(role: str = "agent") -> CallRecord:
    return CallRecord(role, "fake", "scripted", prompt_tokens=20, completion_tokens=10, latency_ms=1.0)


# ---------------------------------------------------------------------------- writers

Script = Callable[[Sequence[Passage], int, list[str] | None], Any]


class ScriptedWriter(Writer):
    """Writes what ``script(passages, call_number, regenerate_feedback)`` returns: a list of Segments, a
    WriterOutput, or an exception to raise. Records every call."""

    name = "scripted"

    def __init__(self, script: Script, *, max_output_tokens: int = 1024) -> None:
        self.script = script
        self.max_output_tokens = max_output_tokens
        self.calls: list[dict[str, Any]] = []

    async def write(self, request: WriteRequest, *, budget: RequestBudget) -> WriterOutput:
        self.calls.append(
            {
                "query": request.query,
                "history": list(request.history),
                "feedback": request.regenerate_feedback,
                "passages": list(request.passages),
            }
        )
        out = self.script(request.passages, len(self.calls), request.regenerate_feedback)
        if isinstance(out, BaseException):
            raise out
        if isinstance(out, WriterOutput):
            return out
        return WriterOutput(list(out), record())


class AppendingWriter(Writer):
    """The real embedded writer, plus ``extra(passages)`` segments appended to its answer."""

    name = "appending"

    def __init__(self, extra: Callable[[Sequence[Passage]], list[Segment]]) -> None:
        self.inner = EmbeddedWriter()
        self.max_output_tokens = self.inner.max_output_tokens
        self.extra = extra

    async def write(self, request: WriteRequest, *, budget: RequestBudget) -> WriterOutput:
        out = await self.inner.write(request, budget=budget)
        assert out.segments, "the embedded writer found nothing to append to"
        out.segments = [*out.segments, *self.extra(request.passages)]
        return out


def facts_citing(
    *texts: str, needle: str = SOURCE_NEEDLE, layout: str = "paragraph"
) -> Callable[[Sequence[Passage]], list[Segment]]:
    def extra(passages: Sequence[Passage]) -> list[Segment]:
        key = key_of(passages, needle)
        return [Segment(t, "fact", layout, (key,)) for t in texts]

    return extra


def lead_and_facts(*texts: str, needle: str = SOURCE_NEEDLE) -> Script:
    """A script: one framing lead-in, then each text as a fact citing the passage with ``needle``."""

    def script(passages: Sequence[Passage], _call: int, _feedback: list[str] | None) -> list[Segment]:
        key = key_of(passages, needle)
        return [
            Segment(LEAD_IN, "framing", "paragraph"),
            *(Segment(t, "fact", "paragraph" if i == 0 else "continue", (key,)) for i, t in enumerate(texts)),
        ]

    return script


# ---------------------------------------------------------------------------- judges and framing


class FailingFraming(FramingChecker):
    name = "failing-framing"

    def __init__(self) -> None:
        self.calls = 0

    async def check(
        self, query: str, framing: list[str], passages: list[Passage], budget: RequestBudget | None
    ) -> list[bool]:
        self.calls += 1
        raise RuntimeError("framing model unreachable at http://10.0.0.7:8001")


# ---------------------------------------------------------------------------- engines

_PASSAGE_LABEL = re.compile(r"^\[(P\d+)\] ", re.MULTILINE)


def passages_in(messages: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """``{key: rendered block}`` of the passages in the last user message the writer built."""
    content = messages[-1]["content"] if messages else ""
    found = list(_PASSAGE_LABEL.finditer(content))
    return {
        m.group(1): content[m.start() : found[i + 1].start() if i + 1 < len(found) else len(content)]
        for i, m in enumerate(found)
    }


class RecordingEngine(BaseFakeEngine):
    """An Engine whose ``generate`` records the messages and answers ``{"segments": reply(messages)}``."""

    name = "recording"
    model = "scripted"

    def __init__(self, reply: Callable[[list[dict[str, str]], int], list[dict[str, Any]]]) -> None:
        self.reply = reply
        self.calls: list[list[dict[str, str]]] = []

    async def answer(
        self, messages: Messages, *, role: str, json_schema: Schema, deadline: float | None
    ) -> Generation:
        self.calls.append([dict(m) for m in messages])
        data = {"segments": self.reply(messages, len(self.calls))}
        return Generation(json.dumps(data, ensure_ascii=False), record(role), parsed=data)


class GarbageEngine(BaseFakeEngine):
    """Answers every call with text that is no verdict (and no JSON)."""

    name = "garbage"
    model = "garbage"

    async def answer(
        self, messages: Messages, *, role: str, json_schema: Schema, deadline: float | None
    ) -> Generation:
        raise ModelOutputError("not JSON", record=record(role))

    async def score(
        self, prompts: list[str], labels: list[str], *, role: str, deadline: float | None
    ) -> list[Classification]:
        return [Classification({"??": 1.0}, record(role)) for _ in prompts]


def segments_citing(
    messages: Sequence[Mapping[str, str]], *texts: str, needle: str = SOURCE_NEEDLE, lead_in: bool = True
) -> list[dict[str, Any]]:
    """Segment dicts (the LLM writer's JSON) for ``texts`` citing the passage that contains ``needle``."""
    blocks = passages_in(messages)
    key = next((k for k, block in blocks.items() if needle in block), None)
    assert key is not None, f"no passage in the prompt contains {needle!r}"
    out = [{"text": LEAD_IN, "kind": "framing", "cites": [], "layout": "paragraph"}] if lead_in else []
    out += [
        {"text": t, "kind": "fact", "cites": [key], "layout": "continue" if i else "paragraph"}
        for i, t in enumerate(texts)
    ]
    return out


# ---------------------------------------------------------------------------- apps


def config(tmp: Path, index_dir: Path, **updates: Any) -> Any:
    """The test config; ``updates`` may set nested sections as dicts, e.g. ``budgets={"deadline_s": 1}``."""
    cfg = make_config(tmp, index_dir)
    changes = {}
    for name, value in updates.items():
        current = getattr(cfg, name)
        changes[name] = (
            current.model_copy(update=value)
            if isinstance(value, dict) and hasattr(current, "model_copy")
            else value
        )
    return cfg.model_copy(update=changes)


def build_pipeline(
    cfg: AppConfig,
    retriever: Retriever,
    *,
    writer: Writer | None = None,
    judge: Judge | None = None,
    framing: FramingChecker | None = None,
) -> Pipeline:
    """The in-process pipeline with any of writer, judge, framing checker replaced by a fake."""
    annotator = None
    if judge is not None or framing is not None:
        judge_fn = judge_fn_of(judge) if judge is not None else factory.local_judge_fn(cfg)
        annotator = Annotator(judge_fn, framing or EmbeddedFramingChecker())
    parts = factory.Components(retriever=LocalRetrieverPort(retriever), writer=writer, annotator=annotator)
    return factory.build_pipeline(cfg, parts)


@contextmanager
def client_for(cfg: AppConfig, retriever: Retriever, **fakes: Any) -> Iterator[TestClient]:
    """A TestClient over the in-process app; one event loop for all its requests (see test_errors for the
    same app over several loops)."""
    pipeline = build_pipeline(cfg, retriever, **fakes)
    app = factory.build_inprocess_app(cfg, retriever=retriever, pipeline=pipeline)
    with TestClient(app) as client:
        yield client


def post(client: TestClient, path: str, body: Any, headers: Mapping[str, str] | None = None) -> Any:
    return client.post(path, json=body, headers=dict(HEADERS if headers is None else headers))
