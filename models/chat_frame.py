"""A chat template's frame around one user turn, learnt once per server, so prompts are wrapped locally.

Label scoring puts each judge prompt in the model's chat template (one user turn plus the assistant's
generation prompt). Asking the server's ``/tokenize`` for every prompt costs one HTTP round trip and one
template render per prompt, on the same event loop that feeds the engine: measured, it halved the judge
pool's pairs/s next to the same prompts sent straight to ``/v1/completions``.

For one user turn, common templates (ChatML, Llama 3, Qwen, Mistral, Gemma, SmolLM) render
``prefix + content + suffix`` with a fixed prefix and suffix. :func:`learn_chat_frame` finds them once: it
renders a sentinel through the server's template (``/tokenize`` with ``messages``, then ``/detokenize``),
splits the text at the sentinel, and then *checks* the frame: for each probe text, the framed text
tokenised as plain text (no special tokens added, which is how vLLM tokenises a rendered chat) must give
exactly the token ids the server's own template gives. Templates that trim the content (Llama 3's
``| trim``) are found by a padded probe and the frame then trims too. A template that does anything else to
the content (escapes it, adds a date) fails the check and no frame is used: the engine goes on asking
``/tokenize`` per prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

# Invented words no template or tokenizer treats specially; the probes add newlines, punctuation, non-ASCII
# letters and markup-like text, the kinds of characters judge prompts carry.
SENTINEL = "ZqxFrameSentinelWv"
PROBES = (
    SENTINEL,
    'Pasal 7:\n- Pagu "Rp 1.250,5 juta" < realisasi?\n<segment>\nYa — tidak; ½ €.\n</segment>\nJawab:',
)
PADDED_PROBE = "\n  Padded probe text.  \n"

TokenizeChat = Callable[[str], Awaitable[list[int]]]  # user content -> ids of the rendered chat
TokenizeText = Callable[[str], Awaitable[list[int]]]  # plain text -> ids, no special tokens added
Detokenize = Callable[[list[int]], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class ChatFrame:
    """The text a chat template puts before and after one user turn's content."""

    prefix: str
    suffix: str
    # True when the template trims the content (Jinja's ``trim`` is Python's ``str.strip``).
    strips: bool = False

    def wrap(self, content: str) -> str:
        return self.prefix + (content.strip() if self.strips else content) + self.suffix


def split_at_sentinel(rendered: str, sentinel: str = SENTINEL) -> tuple[str, str] | None:
    """``(prefix, suffix)`` around the one occurrence of ``sentinel`` in ``rendered``; None otherwise."""
    if rendered.count(sentinel) != 1:
        return None
    prefix, _, suffix = rendered.partition(sentinel)
    return prefix, suffix


async def learn_chat_frame(
    tokenize_chat: TokenizeChat, tokenize_text: TokenizeText, detokenize: Detokenize
) -> ChatFrame | None:
    """The template's frame, checked against the server's own rendering; None when it does not hold.

    Server errors propagate (the caller retries on its next call); only a frame that was checked and failed
    gives None.
    """
    rendered = await detokenize(await tokenize_chat(SENTINEL))
    parts = split_at_sentinel(rendered)
    if parts is None:
        logger.info("chat template frame: the sentinel does not appear once in the rendered chat")
        return None
    frame = ChatFrame(*parts)

    async def holds(candidate: ChatFrame, content: str) -> bool:
        return await tokenize_text(candidate.wrap(content)) == await tokenize_chat(content)

    for probe in PROBES:
        if not await holds(frame, probe):
            logger.info("chat template frame: the framed text does not tokenise as the template renders it")
            return None
    if await holds(frame, PADDED_PROBE):
        return frame
    trimming = ChatFrame(frame.prefix, frame.suffix, strips=True)
    if await holds(trimming, PADDED_PROBE):
        return trimming
    logger.info("chat template frame: the template changes the content's outer whitespace")
    return None
