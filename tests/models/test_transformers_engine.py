"""The transformers engine on a tiny random-weight Qwen2 and a word-level tokenizer built in the test."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

from models.base import ModelOutputError, ModelTimeout
from models.transformers_engine import TransformersEngine

LABELS = ["supported", "unsupported"]
WORDS = ["<pad>", "<unk>", "<eos>", "supported", "unsupported", "Yes", "yes", "no", "!"] + [
    f"w{i}" for i in range(120)
]
ATOL = 1e-4


def build_tokenizer() -> PreTrainedTokenizerFast:
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", eos_token="<eos>"
    )


def build_model(seed: int = 0) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(WORDS),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        pad_token_id=0,
        eos_token_id=2,
    )
    model: Qwen2ForCausalLM = Qwen2ForCausalLM(config).eval()
    return model


@pytest.fixture(scope="module")
def parts() -> tuple[Qwen2ForCausalLM, PreTrainedTokenizerFast]:
    return build_model(), build_tokenizer()


def engine(parts: tuple[Any, Any], **options: Any) -> TransformersEngine:
    return TransformersEngine(parts[0], parts[1], model_name="tiny-qwen2", **options)


def words(*ids: int) -> str:
    return " ".join(f"w{i}" for i in ids)


def reference_probs(parts: tuple[Any, Any], token_ids: list[int], labels: list[str]) -> list[float]:
    """Straight computation: one unpadded forward of the whole sequence, softmax over label tokens."""
    model, tokenizer = parts
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([token_ids])).logits[0, -1]
    ids = [tokenizer.convert_tokens_to_ids(label) for label in labels]
    return torch.softmax(logits[ids], dim=-1).tolist()


def probs_of(results: list[Any]) -> list[float]:
    return [r.probs[label] for r in results for label in LABELS]


PROMPTS = [
    words(1, 2, 3),
    words(5, 6, 7, 8, 9, 10, 11, 12),
    words(3),
    words(40, 41, 42, 43),
    words(7, 7, 7, 7, 7),
]


def test_batched_equals_unbatched_and_a_plain_forward(parts: tuple[Any, Any]) -> None:
    batched = asyncio.run(engine(parts, max_batch_size=3).classify(PROMPTS, LABELS, role="judge"))
    singles = [asyncio.run(engine(parts).classify([p], LABELS, role="judge"))[0] for p in PROMPTS]
    assert probs_of(batched) == pytest.approx(probs_of(singles), abs=ATOL)
    tokenizer = parts[1]
    for result, prompt in zip(batched, PROMPTS, strict=True):
        expected = reference_probs(parts, tokenizer(prompt)["input_ids"], LABELS)
        assert [result.probs[label] for label in LABELS] == pytest.approx(expected, abs=ATOL)
        assert sum(result.probs.values()) == pytest.approx(1.0)
        assert result.record.prompt_tokens == len(prompt.split()) and result.record.completion_tokens == 1
        assert (
            result.record.ok
            and result.record.engine == "transformers"
            and result.record.model == "tiny-qwen2"
        )


def test_shared_prefix_equals_full_computation(parts: tuple[Any, Any]) -> None:
    prefix = words(*range(20, 36))
    suffixes = [words(1), words(2, 3, 4), words(5, 6), words(9, 8, 7, 6, 5, 4)]
    eng = engine(parts, max_batch_size=3)  # two chunks, each repeating the prefix cache
    shared = asyncio.run(eng.classify_shared_prefix(prefix, suffixes, LABELS, role="judge"))
    tokenizer = parts[1]
    prefix_ids = tokenizer(prefix)["input_ids"]
    for result, suffix in zip(shared, suffixes, strict=True):
        full = reference_probs(parts, prefix_ids + tokenizer(suffix)["input_ids"], LABELS)
        assert [result.probs[label] for label in LABELS] == pytest.approx(full, abs=ATOL)
    # The prefix is charged once, split across the group.
    assert sum(r.record.prompt_tokens for r in shared) == 16 + 1 + 3 + 2 + 6


@pytest.mark.parametrize("max_batch_size", [2, 16])  # 2 splits groups; 16 packs prefixes of 3 lengths
def test_pairs_group_by_prefix_and_keep_their_order(parts: tuple[Any, Any], max_batch_size: int) -> None:
    p1, p2, p3 = words(*range(50, 60)), words(*range(60, 66)), words(70, 71)
    pairs = [
        (p1, words(1)),
        (p2, words(2, 3)),
        (p1, words(4, 5, 6)),
        (p3, words(7)),
        (p2, words(8)),
        (p1, ""),
    ]
    pairs += [(p3, words(9, 9)), (p3, words(1, 2, 3, 4, 5, 6, 7)), (words(80, 81, 82), words(1))]
    eng = engine(parts, max_batch_size=max_batch_size)
    grouped = asyncio.run(eng.classify_pairs(pairs, LABELS, role="judge"))
    via_classify = asyncio.run(
        eng.classify([s for _, s in pairs], LABELS, role="judge", prefixes=[p for p, _ in pairs])
    )
    tokenizer = parts[1]
    for result, other, (prefix, suffix) in zip(grouped, via_classify, pairs, strict=True):
        ids = tokenizer(prefix)["input_ids"] + (tokenizer(suffix)["input_ids"] if suffix else [])
        full = reference_probs(parts, ids, LABELS)
        assert [result.probs[label] for label in LABELS] == pytest.approx(full, abs=ATOL)
        assert result.probs == pytest.approx(other.probs, abs=ATOL)


def test_label_variants_pool_and_bad_labels_are_refused(parts: tuple[Any, Any]) -> None:
    eng = engine(parts)
    model, tokenizer = parts
    yes, cap_yes, no = (tokenizer.convert_tokens_to_ids(t) for t in ("yes", "Yes", "no"))
    assert eng.label_token_ids(["yes", "no"]) == [[yes, cap_yes], [no]]
    [result] = asyncio.run(eng.classify([words(1, 2)], ["yes", "no"], role="judge"))
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([tokenizer(words(1, 2))["input_ids"]])).logits[0, -1]
    pooled_yes = torch.logsumexp(logits[[yes, cap_yes]], dim=0)
    expected = torch.softmax(torch.stack([pooled_yes, logits[no]]), dim=0).tolist()
    assert [result.probs["yes"], result.probs["no"]] == pytest.approx(expected, abs=ATOL)
    with pytest.raises(ValueError, match="same token"):
        eng.label_token_ids(["yes", "Yes!"])  # both start with the token "Yes"
    with pytest.raises(ValueError, match="no token"):
        eng.label_token_ids(["maybe", "no"])  # "maybe" is outside the vocabulary


def test_generate_is_greedy_decoding_with_the_cache(parts: tuple[Any, Any]) -> None:
    model, tokenizer = parts
    messages = [{"role": "user", "content": words(3, 4, 5)}]
    generation = asyncio.run(engine(parts).generate(messages, role="agent", max_tokens=6))
    ids = tokenizer("user: " + words(3, 4, 5) + "\nassistant:")["input_ids"]
    expected: list[int] = []
    with torch.no_grad():  # greedy reference without any cache: a full forward per step
        for _ in range(6):
            next_id = int(model(input_ids=torch.tensor([ids + expected])).logits[0, -1].argmax())
            if next_id == 2:
                break
            expected.append(next_id)
    assert generation.text == tokenizer.decode(expected, skip_special_tokens=True)
    assert generation.record.prompt_tokens == len(ids)
    assert generation.record.completion_tokens == len(expected)
    assert generation.finish_reason == ("length" if len(expected) == 6 else "stop")


def test_generate_with_schema_rejects_non_json(parts: tuple[Any, Any]) -> None:
    schema = {"type": "object"}
    with pytest.raises(ModelOutputError) as info:
        asyncio.run(
            engine(parts).generate(
                [{"role": "user", "content": "w1"}], role="agent", json_schema=schema, max_tokens=4
            )
        )
    assert info.value.record is not None and info.value.record.error == "bad_output"


def test_deadline_past_and_during_a_call(parts: tuple[Any, Any]) -> None:
    eng = engine(parts, max_batch_size=1)
    with pytest.raises(ModelTimeout) as info:
        asyncio.run(eng.classify(PROMPTS, LABELS, role="judge", deadline=time.time() - 1))
    assert info.value.record is not None and info.value.record.error == "timeout"
    many = [words(i % 100, 5, 6, 7) for i in range(300)]
    start = time.perf_counter()
    with pytest.raises(ModelTimeout):
        asyncio.run(eng.classify(many, LABELS, role="judge", deadline=time.time() + 0.05))
    assert time.perf_counter() - start < 0.5
    # The worker stopped at its next check, so the engine is free again at once.
    assert len(asyncio.run(eng.classify(PROMPTS[:1], LABELS, role="judge", deadline=time.time() + 5))) == 1


def test_the_event_loop_stays_free_during_a_call(parts: tuple[Any, Any]) -> None:
    eng = engine(parts, max_batch_size=1)
    prompts = [words(i % 100, 1, 2, 3, 4, 5, 6) for i in range(60)]

    async def main() -> int:
        ticks = 0
        task = asyncio.create_task(eng.classify(prompts, LABELS, role="judge"))
        while not task.done():
            ticks += 1
            await asyncio.sleep(0.001)
        await task
        return ticks

    assert asyncio.run(main()) > 3


def test_from_path_loads_local_files(parts: tuple[Any, Any], tmp_path: Path) -> None:
    model, tokenizer = parts
    # The tokenizer gets its own folder: next to a qwen2 config.json, AutoTokenizer would rebuild this
    # word-level test tokenizer as Qwen2's BPE one.
    model.save_pretrained(tmp_path / "weights")
    tokenizer.save_pretrained(tmp_path / "tokenizer")
    loaded = TransformersEngine.from_path(
        tmp_path / "weights", device="cpu", tokenizer_path=tmp_path / "tokenizer"
    )
    assert loaded.model == "weights"
    expected = asyncio.run(engine(parts).classify(PROMPTS, LABELS, role="judge"))
    got = asyncio.run(loaded.classify(PROMPTS, LABELS, role="judge"))
    assert probs_of(got) == pytest.approx(probs_of(expected), abs=ATOL)
    with pytest.raises(FileNotFoundError):
        TransformersEngine.from_path(tmp_path / "missing")
