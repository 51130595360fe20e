from __future__ import annotations

import pytest

from serve_app.guard.policy import PolicyGuard
from serve_app.guard.textnorm import clean, normalize


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("k4f1r", "kafir"),
        ("b u n u h", "bunuh"),
        ("b.u.n.u.h", "bunuh"),
        ("bunuuuuh", "bunuh"),
        ("bu\u200bnuh", "bunuh"),
        ("ЬаЬі", "babi"),  # Cyrillic look-alikes
        ("ｂａｂｉ", "babi"),  # fullwidth
        ("b@b1", "babi"),
    ],
)
def test_folding_undoes_tricks(guard: PolicyGuard, text: str, token: str) -> None:
    assert token in normalize(text, guard.config.folder).tokens


def test_numbers_and_reduplication_stay_meaningful(guard: PolicyGuard) -> None:
    tokens = normalize("UU 11/2006 Pasal 7, orang2 dan yg lain", guard.config.folder).tokens
    assert "2006" in tokens and "11" in tokens
    assert tokens.count("orang") == 2 and "yang" in tokens


def test_clean_keeps_line_breaks_once() -> None:
    assert clean("a \u00a0 b\n\n\n  c\u200b") == "a b\nc"
