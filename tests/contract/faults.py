"""Helpers of the fault tests: one answer over the in-process app with some components replaced, and the
marks of its claims."""

from __future__ import annotations

from typing import Any

from tests.contract.checks import assert_v2_body, validate_against_schema
from tests.support.judges import Hook, ScriptedJudge
from tests.support.service import BUDGET_QUESTION, client_for, config, post

MANY_CLAIMS = "Berapa target Pendapatan Asli Daerah Aceh tahun 2024?"  # demo-06: six supported claims



def rules_with(hook: Hook | None = None) -> ScriptedJudge:
    """The real rule judge, with ``hook(round, items)`` able to sleep, raise or answer instead."""
    return ScriptedJudge(hook=hook, default="rules")


def answer_body(
    env: dict[str, Any],
    *,
    query: str = BUDGET_QUESTION,
    cfg_updates: dict[str, Any] | None = None,
    path: str = "/query/v2",
    **fakes: Any,
) -> dict[str, Any]:
    cfg = config(env["tmp"], env["index"], **(cfg_updates or {}))
    with client_for(cfg, env["retriever"], **fakes) as client:
        resp = post(client, path, {"query": query})
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    if path == "/query/v2":
        assert_v2_body(body)
        validate_against_schema(body, "query_v2_response")
    return body


def marks(body: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(c["verdict"], c["unverified_reason"]) for c in body["claims"]]


def claim_by_text(body: dict[str, Any], text: str) -> dict[str, Any]:
    return next(c for c in body["claims"] if c["text"] == text)
