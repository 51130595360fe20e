"""JSON bodies that Python's parser chokes on or reads ambiguously (wire/json_body.py), through the whole
parse path of the real routes: each answers the contract's 400 with a key (401 without), never a 500, logs one
line without a traceback, and the service stays healthy."""

from __future__ import annotations

import logging
import random

import pytest
from starlette.testclient import TestClient

from serve_app.wire.json_body import MAX_DEPTH, JSONRefused, nesting_depth, strict_json
from tests.support.service import HEADERS

HOSTILE: dict[str, bytes] = {
    "30,000 brackets": b"[" * 30_000,
    "30,000 balanced brackets": b"[" * 30_000 + b"]" * 30_000,
    "1,000 nested objects": b'{"a": ' * 1_000 + b"1" + b"}" * 1_000,
    "nested under query": b'{"query": "x", "filters": ' + b'{"b": ' * 1_000 + b"0" + b"}" * 1_001,
    "huge integer": b'{"query": "x", "top_k": ' + b"9" * 20_000 + b"}",
    "huge float": b'{"query": "x", "top_k": 1e999999}',
    "NaN": b'{"query": "x", "top_k": NaN}',
    "lone high surrogate": b'{"query": "\\ud800"}',
    "lone low surrogate key": b'{"\\udc00": 1, "query": "x"}',
    "duplicate keys": b'{"query": "x", "query": "y"}',
    "not UTF-8": b'{"query": "\xff\xfe"}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("route", ["/search", "/query/v2", "/query", "/query/v2/stream"])
def test_hostile_json_is_400_with_a_key_and_401_without(
    demo_client: TestClient, route: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    body = HOSTILE[name]
    plain = {"Content-Type": "application/json"}
    with caplog.at_level(logging.INFO):
        keyed = demo_client.post(route, content=body, headers={**HEADERS, **plain})
    assert keyed.status_code == 400, keyed.text
    assert keyed.json()["error"] == "invalid_json"
    refusals = [r for r in caplog.records if r.name == "aceh_rag.params"]
    assert len(refusals) == 1 and refusals[0].exc_info is None
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert demo_client.post(route, content=body, headers=plain).status_code == 401
    assert demo_client.get("/healthz").status_code == 200


def test_random_nesting_never_gives_a_500(demo_client: TestClient) -> None:
    """Seeded random mixes of brackets, strings holding brackets and escapes: always an answer of the
    contract (400 or 422), never a 500."""
    rng = random.Random(35)
    pieces = [b"[", b"]", b"{", b"}", b'"a":', b",", b'"[{\\""', b"1", b"-0.5e3", b"null", b" "]
    for _ in range(200):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 3_000)))
        r = demo_client.post("/search", content=body, headers=HEADERS)
        assert r.status_code in (400, 422), (r.status_code, body[:80])


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert nesting_depth(b'{"a": [1, {"b": "[[[[{{{{"}]}') == 3
    assert nesting_depth(b'["\\"[[[", [[]]]') == 3
    assert strict_json(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None  # at the limit: fine
    with pytest.raises(JSONRefused, match="nested"):
        strict_json(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))


def test_ordinary_json_still_parses() -> None:
    assert strict_json(b'{"query": "Pendapatan daerah \\u00e9 \\ud83d\\ude00", "k": [1, 2.5]}') == {
        "query": "Pendapatan daerah é 😀",
        "k": [1, 2.5],
    }
