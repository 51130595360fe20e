"""Token estimates for accounting when a server reports no usage, and a fair split of one call's usage.

The estimate is deliberately simple and tokenizer-free (no weights, no downloads): for each
whitespace-separated word, ``max(1, ceil(len(word) / 4))`` tokens. Four characters per token is the usual
rule of thumb for BPE vocabularies on Latin-script text (Indonesian and English alike), and a word never
costs less than one token. It is an estimate for budgets, never for billing: engines use the server's
``usage`` block, or the real tokenizer, whenever they have one.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4
# Chat templates wrap each message in role markers (e.g. "<|im_start|>user\n ... <|im_end|>\n").
TOKENS_PER_MESSAGE = 4


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text`` (0 for empty or whitespace-only text)."""
    # ceil(len / 4) without floats; every word of str.split() has at least one character.
    return sum((len(word) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN for word in text.split())


def estimate_message_tokens(messages: list[dict[str, str]]) -> int:
    """Estimated prompt tokens of a chat request: each message's content plus its template markers."""
    return sum(estimate_tokens(m.get("content", "")) + TOKENS_PER_MESSAGE for m in messages)


def split_total(total: int, weights: list[int]) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` that sum exactly to ``total``.

    Used to charge one batched call's usage to its prompts: each prompt gets its share, and the shares add
    up to what the server reported (largest-remainder rounding). Zero weights everywhere split evenly.
    """
    if not weights:
        return []
    if total <= 0:
        return [0] * len(weights)
    if sum(weights) <= 0:
        weights = [1] * len(weights)
    weight_sum = sum(weights)
    exact = [total * w / weight_sum for w in weights]
    shares = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: exact[i] - shares[i], reverse=True)
    for i in by_remainder[: total - sum(shares)]:
        shares[i] += 1
    return shares
