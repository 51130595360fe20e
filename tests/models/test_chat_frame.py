"""The chat template frame, learnt against a real tokenizer (byte-level BPE trained here) and real templates.

The three callables do what vLLM's endpoints do: ``/tokenize`` with ``messages`` renders the template and
tokenises the text without adding special tokens, ``/tokenize`` with ``prompt`` and
``add_special_tokens: false`` tokenises plain text, ``/detokenize`` decodes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from judge.prompt import build_prompt
from judge.types import JudgeItem, JudgePassage
from models.chat_frame import PROBES, SENTINEL, ChatFrame, learn_chat_frame, split_at_sentinel

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TRIMMING = (
    "<|begin|>{% for message in messages %}[{{ message['role'] }}]\n\n{{ message['content'] | trim }}<|end|>"
    "{% endfor %}{% if add_generation_prompt %}[assistant]\n\n{% endif %}"
)
ESCAPING = CHATML.replace("message['content']", "message['content'] | replace('<', '&lt;')")
REPEATING = CHATML.replace("{{ message['content'] }}", "{{ message['content'] }} ({{ message['content'] }})")

ITEM = JudgeItem(
    "x",
    "Realisasi belanja unit contoh mencapai 87 persen.",
    (JudgePassage("P1", "Pagu belanja unit contoh Rp 120.000.000, realisasi Rp 104.400.000.", {}),),
)


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    specials = ["<|im_start|>", "<|im_end|>", "<|begin|>", "<|end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    core.train_from_iterator([build_prompt(ITEM), *PROBES, "user assistant system " * 5], trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>")


def server(tokenizer: PreTrainedTokenizerFast, template: str) -> tuple[Any, Any, Any]:
    """The three endpoints the frame is learnt from, over ``tokenizer`` with ``template``."""

    async def tokenize_chat(content: str) -> list[int]:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": content}],
            chat_template=template,
            add_generation_prompt=True,
            tokenize=False,
        )
        return list(tokenizer.encode(str(text), add_special_tokens=False))

    async def tokenize_text(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    async def detokenize(ids: list[int]) -> str:
        return str(tokenizer.decode(ids))

    return tokenize_chat, tokenize_text, detokenize


def learn(tokenizer: PreTrainedTokenizerFast, template: str) -> ChatFrame | None:
    return asyncio.run(learn_chat_frame(*server(tokenizer, template)))


def test_chatml_frame_gives_the_templates_own_token_ids_for_a_judge_prompt(
    tokenizer: PreTrainedTokenizerFast,
) -> None:
    frame = learn(tokenizer, CHATML)
    assert frame == ChatFrame("<|im_start|>user\n", "<|im_end|>\n<|im_start|>assistant\n", strips=False)
    chat, text, _ = server(tokenizer, CHATML)
    for content in (build_prompt(ITEM), "  padded  \n", "satu <|im_end|> dua"):
        assert asyncio.run(text(frame.wrap(content))) == asyncio.run(chat(content))


def test_a_trimming_template_gives_a_frame_that_trims(tokenizer: PreTrainedTokenizerFast) -> None:
    frame = learn(tokenizer, TRIMMING)
    assert frame is not None and frame.strips
    assert frame.prefix == "<|begin|>[user]\n\n" and frame.suffix == "<|end|>[assistant]\n\n"
    chat, text, _ = server(tokenizer, TRIMMING)
    padded = "\n  " + build_prompt(ITEM) + " \n"
    assert asyncio.run(text(frame.wrap(padded))) == asyncio.run(chat(padded))


@pytest.mark.parametrize("template", [ESCAPING, REPEATING], ids=["escapes-content", "repeats-content"])
def test_a_template_that_changes_the_content_gives_no_frame(
    tokenizer: PreTrainedTokenizerFast, template: str
) -> None:
    assert learn(tokenizer, template) is None


def test_a_server_error_while_learning_propagates(tokenizer: PreTrainedTokenizerFast) -> None:
    chat, _, detokenize = server(tokenizer, CHATML)

    async def failing(text: str) -> list[int]:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        asyncio.run(learn_chat_frame(chat, failing, detokenize))


def test_split_at_sentinel_needs_exactly_one_occurrence() -> None:
    assert split_at_sentinel(f"a{SENTINEL}b") == ("a", "b")
    assert split_at_sentinel("ab") is None
    assert split_at_sentinel(f"{SENTINEL}{SENTINEL}") is None
