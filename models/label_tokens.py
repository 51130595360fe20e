"""Label scoring by the model's own token ids (the ``chat_template`` mode of the openai engine).

Matching the *text* of top-k tokens against labels (``first_token_label_probs``) guesses at how a tokenizer
spells a word. With a vLLM server the engine can instead ask the server itself: ``/tokenize`` gives each
label's first token id, spelled with and without a leading space and capitalised or not (the forms a chat
model may start its answer with), and completions with ``return_tokens_as_token_ids`` name each top-k token
``token_id:N``. A label's probability is the sum over its ids, renormalised over the labels; an id that
several labels start with says nothing and is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from models.base import ModelOutputError

# Never let the floor reach 0, even when the server reports -inf (or vLLM's -9999.0) for the k-th token.
MIN_FLOOR = 1e-9
TOKEN_ID_PREFIX = "token_id:"
# Byte-level BPE and SentencePiece word-start markers, in case a server returns raw vocabulary pieces.
_SPACE_MARKERS = "\u0120\u2581"


def label_variants(label: str) -> list[str]:
    """The spellings a model's first answer token may take: as given, capitalised, each with a space."""
    word = label.strip()
    forms = [word, word[:1].upper() + word[1:], word.lower()]
    out: list[str] = []
    for form in forms:
        for spelled in (form, " " + form):
            if spelled not in out:
                out.append(spelled)
    return out


def distinct_label_ids(first_ids: Mapping[str, set[int]]) -> dict[str, frozenset[int]]:
    """Each label's first-token ids minus those another label shares (ModelOutputError if none is left)."""
    out: dict[str, frozenset[int]] = {}
    for label, ids in first_ids.items():
        others: set[int] = set().union(*(v for k, v in first_ids.items() if k != label))
        own = frozenset(ids - others)
        if not own:
            raise ModelOutputError(f"the label {label!r} shares every first token with another label")
        out[label] = own
    return out


def token_id(key: str) -> int | None:
    """``N`` from vLLM's ``token_id:N`` logprob key; None for any other key."""
    if not key.startswith(TOKEN_ID_PREFIX):
        return None
    try:
        return int(key.removeprefix(TOKEN_ID_PREFIX))
    except ValueError:
        return None


def token_id_label_probs(
    top_logprobs: Mapping[str, float], label_ids: Mapping[str, frozenset[int]]
) -> dict[str, float]:
    """Label probabilities from the first token's top-k (keys ``token_id:N``), renormalised over the labels.

    A label none of whose ids made the top-k gets half the smallest probability returned (it lies somewhere
    in ``[0, p_k]``), never 0; when no label made it, the result is uniform.
    """
    if not top_logprobs:
        raise ModelOutputError("empty top_logprobs")
    mass = dict.fromkeys(label_ids, 0.0)
    for key, logprob in top_logprobs.items():
        tid = token_id(key)
        if tid is None:
            raise ModelOutputError(f"top_logprobs key {key[:40]!r} is not token_id:N")
        for label, ids in label_ids.items():
            if tid in ids:
                mass[label] += math.exp(logprob)
    floor = max(min(math.exp(lp) for lp in top_logprobs.values()) / 2, MIN_FLOOR)
    probs = {label: max(m, floor) for label, m in mass.items()}
    total = sum(probs.values())
    return {label: p / total for label, p in probs.items()}


def first_token_label_probs(top_logprobs: dict[str, float], labels: list[str]) -> dict[str, float]:
    """Label probabilities from the first generated token's top-k, renormalised over ``labels``.

    A returned token counts for a label when its text, stripped of whitespace (and of BPE word-start
    markers) and case-folded, is a non-empty prefix of exactly one label (so " Supported", "supported" and
    "Supp" all count for "supported"); a token that is a prefix of several labels says nothing and is
    skipped. A label's mass is the sum of its tokens' probabilities.

    Floor: a label none of whose tokens made the top-k has a probability below the smallest one returned,
    ``p_k``; it gets ``p_k / 2`` (the midpoint of ``[0, p_k]``, at least ``MIN_FLOOR``), never 0. When no
    label is in the top-k at all, every label gets the floor and the result is uniform.
    """
    if not top_logprobs:
        raise ModelOutputError("empty top_logprobs")
    keys = {label: label.strip().casefold() for label in labels}
    mass = dict.fromkeys(labels, 0.0)
    for token, logprob in top_logprobs.items():
        text = token.strip().lstrip(_SPACE_MARKERS).strip().casefold()
        if not text:
            continue
        matches = [label for label in labels if keys[label].startswith(text)]
        if len(matches) == 1:
            mass[matches[0]] += math.exp(logprob)
    floor = max(min(math.exp(lp) for lp in top_logprobs.values()) / 2, MIN_FLOOR)
    probs = {label: max(mass[label], floor) for label in labels}
    total = sum(probs.values())
    return {label: p / total for label, p in probs.items()}
