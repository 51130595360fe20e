from __future__ import annotations

import math

import pytest

from models.base import ModelOutputError
from models.label_tokens import distinct_label_ids, label_variants, token_id_label_probs


def test_variants_cover_leading_space_and_capitals() -> None:
    assert label_variants("yes") == ["yes", " yes", "Yes", " Yes"]


def test_ids_shared_by_two_labels_say_nothing() -> None:
    ids = distinct_label_ids({"yes": {1, 2, 9}, "no": {3, 9}})
    assert ids == {"yes": frozenset({1, 2}), "no": frozenset({3})}
    with pytest.raises(ModelOutputError):
        distinct_label_ids({"yes": {9}, "no": {9}})


def test_probabilities_sum_over_each_labels_ids_and_renormalise() -> None:
    top = {
        "token_id:1": math.log(0.3),
        "token_id:2": math.log(0.1),
        "token_id:3": math.log(0.2),
        "token_id:7": math.log(0.05),
    }
    probs = token_id_label_probs(top, {"yes": frozenset({1, 2}), "no": frozenset({3})})
    assert probs["yes"] == pytest.approx(0.4 / 0.6) and probs["no"] == pytest.approx(0.2 / 0.6)


def test_label_outside_the_top_k_gets_half_the_smallest_probability() -> None:
    top = {"token_id:1": math.log(0.5), "token_id:7": math.log(0.1)}
    probs = token_id_label_probs(top, {"yes": frozenset({1}), "no": frozenset({3})})
    assert probs["no"] == pytest.approx(0.05 / 0.55)


def test_keys_that_are_not_token_ids_are_a_protocol_error() -> None:
    with pytest.raises(ModelOutputError):
        token_id_label_probs({" yes": -0.1}, {"yes": frozenset({1}), "no": frozenset({2})})
