"""Judge throughput of the transformers engine: batch size 1 vs batched vs dynamic batching vs prefix reuse.

Random-weight Qwen2-shaped models (1.5B and 7B shapes, bf16 on CUDA) and random token ids: no download, no
weights on disk, and no Ray. Prompts are ``--prompt-tokens`` words ``w<id>`` of a word-level tokenizer whose
vocabulary is exactly the model's, so each word is one random token id and the whole engine path
(tokenisation, padding, label scoring) runs as in production. Modes, each in pairs (segment, passage) per
second:

* ``bs1``: one ``classify`` call per pair, sequentially.
* ``batched``: one ``classify`` call over all pairs (chunks of ``--batch-size``).
* ``shared_full`` / ``shared_prefix``: ``--segments-per-passage`` segments per passage, scored as full
  prompts, then with the passage's key/value cache computed once (``classify_pairs``).
* ``dynamic``: ``--concurrency`` asyncio callers each submitting one item at a time through
  ``judge.batching.BatchCollector`` (``--collector judge``; when ``judge.batching`` is missing, or with
  ``--collector queue``, through the small queue collector below; the JSON says which), with a judge
  whose prompt is ``passage + segment`` so prompts keep ``--prompt-tokens`` tokens.
* ``dynamic_shared``: ``dynamic`` with passages shared, so the grouped batches reuse the prefix.
* ``dynamic_llm_judge``: ``dynamic_shared`` through the real ``judge.llm_judge.LLMJudge`` and its
  judge-v1 prompt, whose rules add their own tokens (reported as ``prompt_tokens``).

    .venv/bin/python -m benchmarks.judge_gpu             # CUDA: 1.5b and 7b shapes
    .venv/bin/python -m benchmarks.judge_gpu --tiny      # CPU smoke run in well under a minute
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import random
import statistics
import time
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from benchmarks.harness import Figure, Result, command, machine_info, percentile, write_result
from benchmarks.judge_gpu_batching import LABELS, collector_driver, fallback_collector, has_judge_batching
from models.transformers_engine import TransformersEngine

# The Qwen2 shapes the benchmark builds (random weights: throughput needs the shape, not the training).
SHAPE_FIELDS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
)
SHAPES: dict[str, dict[str, Any]] = {
    name: dict(zip(SHAPE_FIELDS, values, strict=True))
    for name, values in {
        "1.5b": (1536, 28, 12, 2, 8960, 151936),
        "7b": (3584, 28, 28, 4, 18944, 151936),
        "tiny": (64, 2, 4, 2, 128, 2048),
    }.items()
}
# Plain batched forward and batch size 1 on one H200, from the issue: what a run should be compared with.
REFERENCE_PAIRS_PER_S = {"1.5b": {"batched": 305, "bs1": 39}, "7b": {"batched": 78, "bs1": 49}}
SPECIALS = ["<pad>", "<unk>", "<eos>", *LABELS]


@dataclass
class Row:
    model: str
    mode: str
    pairs: int
    batch_size: int
    runs_s: list[float]
    pairs_per_s: float = 0.0
    mean_batch: float | None = None
    note: str = ""
    reference_pairs_per_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def build_tokenizer(vocab_size: int) -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(SPECIALS)}
    vocab.update({f"w{i}": i for i in range(len(SPECIALS), vocab_size)})
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", eos_token="<eos>"
    )


def build_model(shape: str, device: torch.device, dtype: torch.dtype) -> Any:
    import transformers
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(**SHAPES[shape], pad_token_id=0, eos_token_id=2, max_position_embeddings=4096)
    dtype_arg = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    torch.manual_seed(0)
    with torch.device(device):  # initialise directly on the device: no 28 GB fp32 detour through the CPU
        model = Qwen2ForCausalLM._from_config(config, attn_implementation="sdpa", **{dtype_arg: dtype})
    return model.eval()


def random_words(rng: random.Random, n: int, vocab_size: int) -> str:
    return " ".join(f"w{rng.randrange(len(SPECIALS), vocab_size)}" for _ in range(n))


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(
    fn: Callable[[], Coroutine[Any, Any, Any]], runs: int, device: torch.device
) -> tuple[list[float], Any]:
    """Run ``fn`` once to warm up, then ``runs`` timed times; the wall times and the last result."""
    result = asyncio.run(fn())
    times = []
    for _ in range(runs):
        sync(device)
        start = time.perf_counter()
        result = asyncio.run(fn())
        sync(device)
        times.append(time.perf_counter() - start)
    return times, result


def raw_prompt_judge(engine: TransformersEngine) -> Any:
    """A Judge prompting ``passage + segment`` only: the judge batching path at a chosen prompt length."""
    from judge.base import Judge
    from judge.types import JudgeResult

    class RawPromptJudge(Judge):
        name = "raw-prompt"

        async def judge(self, items: Any) -> list[JudgeResult]:
            pairs = [(item.passages[0].text + " ", item.claim) for item in items]
            scored = await engine.classify_pairs(pairs, list(LABELS), role="judge")
            return [
                JudgeResult(item.item_id, "supported" if c.probs[LABELS[0]] >= 0.5 else "unsupported")
                for item, c in zip(items, scored, strict=True)
            ]

    return RawPromptJudge()


def judge_items(passages: list[str], segments: list[str]) -> list[Any]:
    from judge.types import JudgeItem, JudgePassage

    per = len(segments) // len(passages)
    return [
        JudgeItem(item_id=f"i{i}", claim=segment, passages=(JudgePassage(key="P1", text=passages[i // per]),))
        for i, segment in enumerate(segments)
    ]


def judge_prompt_overhead(tokenizer: Any) -> int:
    """Tokens the judge-v1 template adds around a passage and a segment."""
    from judge.prompt import build_prompt

    [item] = judge_items(["w10"], ["w11"])
    return len(tokenizer(build_prompt(item, labels=LABELS))["input_ids"]) - 2


def bench_model(shape: str, args: argparse.Namespace, device: torch.device, dtype: torch.dtype) -> list[Row]:
    vocab = SHAPES[shape]["vocab_size"]
    tokenizer = build_tokenizer(vocab)
    model = build_model(shape, device, dtype)
    engine = TransformersEngine(
        model, tokenizer, model_name=f"random-qwen2-{shape}", max_batch_size=args.batch_size
    )
    rng = random.Random(0)
    n, per, tokens = args.pairs, args.segments_per_passage, args.prompt_tokens
    segment_tokens = args.segment_tokens
    passage_tokens = tokens - segment_tokens
    prompts = [random_words(rng, tokens, vocab) for _ in range(n)]
    shared_passages = [random_words(rng, passage_tokens, vocab) for _ in range(n // per)]
    shared_pairs = [
        (p + " ", random_words(rng, segment_tokens, vocab)) for p in shared_passages for _ in range(per)
    ]
    ref = REFERENCE_PAIRS_PER_S.get(shape, {})
    rows: list[Row] = []

    def add(mode: str, pairs: int, fn: Callable[[], Coroutine[Any, Any, Any]], batch: int, **kw: Any) -> Any:
        runs_s, result = timed(fn, args.runs, device)
        row = Row(
            shape,
            mode,
            pairs,
            batch,
            [round(t, 4) for t in runs_s],
            round(pairs / percentile(runs_s, 0.5), 2),
            **kw,
        )
        rows.append(row)
        print(
            f"  {shape:>5} {mode:<17} batch {batch:>3}  {row.pairs_per_s:>9.1f} pairs/s"
            + (f"  (mean batch {row.mean_batch})" if row.mean_batch else ""),
            flush=True,
        )
        return result

    bs1_n = max(4, n // 4)
    engine_bs1 = TransformersEngine(model, tokenizer, model_name=engine.model, max_batch_size=1)

    async def bs1() -> None:
        for prompt in prompts[:bs1_n]:
            await engine_bs1.classify([prompt], list(LABELS), role="judge")

    add("bs1", bs1_n, bs1, 1, reference_pairs_per_s=ref.get("bs1"))
    add(
        "batched",
        n,
        lambda: engine.classify(prompts, list(LABELS), role="judge"),
        args.batch_size,
        reference_pairs_per_s=ref.get("batched"),
    )

    full_prompts = [prefix + suffix for prefix, suffix in shared_pairs]
    # the same passages two ways: every prompt whole, or each passage's KV computed once for its segments
    shared_modes: tuple[tuple[str, Callable[[], Coroutine[Any, Any, Any]], str], ...] = (
        ("shared_full", lambda: engine.classify(full_prompts, list(LABELS), role="judge"), "full prompts"),
        (
            "shared_prefix",
            lambda: engine.classify_pairs(shared_pairs, list(LABELS), role="judge"),
            "passage KV computed once",
        ),
    )
    for mode, call, how_shared in shared_modes:
        add(mode, len(shared_pairs), call, args.batch_size, note=f"{per} segments per passage, {how_shared}")

    use_judge = args.collector == "judge" and has_judge_batching()
    how = "judge.batching.BatchCollector" if use_judge else "the queue collector in this script"
    for mode, count in (("dynamic", n), ("dynamic_shared", n // per)):
        passages = [random_words(rng, passage_tokens, vocab) for _ in range(count)]
        segments = [random_words(rng, segment_tokens, vocab) for _ in range(n)]
        sizes: list[int] = []
        if use_judge:
            items = judge_items(passages, segments)
            run = collector_driver(raw_prompt_judge(engine), args)
        else:
            items = [(passages[i * count // n] + " ", s) for i, s in enumerate(segments)]
            run = functools.partial(fallback_collector, engine, args=args)

        async def go(
            run: Callable[..., Any] = run, items: list[Any] = items, sizes: list[int] = sizes
        ) -> None:
            sizes[:] = (await run(items))[1]

        add(
            mode,
            n,
            go,
            args.batch_size,
            note=f"{how}; {args.concurrency} callers; {tokens}-token prompts"
            + (f"; {per} segments per passage" if mode == "dynamic_shared" else ""),
        )
        rows[-1].mean_batch = round(statistics.mean(sizes), 2) if sizes else None
    if use_judge:
        from judge.llm_judge import LLMJudge

        # The real judge-v1 prompt: its rules and labels add their own tokens around passage and segment.
        passages = [random_words(rng, passage_tokens, vocab) for _ in range(n // per)]
        items = judge_items(passages, [random_words(rng, segment_tokens, vocab) for _ in range(n)])
        sizes = []
        run = collector_driver(LLMJudge(engine, labels=LABELS), args)

        async def go_llm() -> None:
            sizes[:] = (await run(items))[1]

        prompt_tokens = tokens + judge_prompt_overhead(tokenizer)
        add(
            "dynamic_llm_judge",
            n,
            go_llm,
            args.batch_size,
            note=f"LLMJudge judge-v1 prompt (~{prompt_tokens} tokens); {per} segments per passage",
            extra={"prompt_tokens": prompt_tokens},
        )
        rows[-1].mean_batch = round(statistics.mean(sizes), 2) if sizes else None
    return rows


def machine(device: torch.device) -> dict[str, Any]:
    info = {**machine_info(), "device": str(device)}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def figures(details: dict[str, Any]) -> dict[str, Figure]:
    """Headline per model shape: batched and dynamically batched pairs/s against batch 1."""
    out: dict[str, Figure] = {}
    for model in dict.fromkeys(r["model"] for r in details["results"]):
        by = {r["mode"]: r["pairs_per_s"] for r in details["results"] if r["model"] == model}
        shown = [f"{by[m]:,.0f} {m}" for m in ("bs1", "batched", "dynamic") if m in by]
        out[f"{model} pairs/s"] = ", ".join(shown)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny shapes on CPU (a smoke run under a minute)")
    parser.add_argument("--models", default="1.5b,7b")
    parser.add_argument("--pairs", type=int, default=256)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--segment-tokens", type=int, default=64)
    parser.add_argument("--segments-per-passage", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--batch-wait-s", type=float, default=0.005)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--collector",
        choices=["judge", "queue"],
        default="judge",
        help="dynamic batching through judge.batching (default) or this script's queue",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.tiny:
        args.models, args.device = "tiny", ("cpu" if args.device == "auto" else args.device)
        if argv is None or "--pairs" not in argv:
            args.pairs = 32
        if argv is None or "--prompt-tokens" not in argv:
            args.prompt_tokens, args.segment_tokens = 96, 16
        if argv is None or "--runs" not in argv:
            args.runs = 3
        args.batch_size, args.concurrency = min(args.batch_size, 8), min(args.concurrency, 16)
    device = torch.device(
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else ("cpu" if args.device == "auto" else args.device)
    )
    if not args.tiny and device.type != "cuda":
        parser.error("the 1.5b/7b shapes need CUDA; use --tiny on a CPU")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    print(
        f"judge_gpu on {device} ({dtype}), {args.prompt_tokens}-token prompts, batch {args.batch_size}, "
        f"{args.runs} timed run(s) after one warm-up",
        flush=True,
    )
    rows: list[Row] = []
    for shape in args.models.split(","):
        rows += bench_model(shape.strip(), args, device, dtype)
        if device.type == "cuda":
            torch.cuda.empty_cache()  # the model went out of scope with bench_model
    details = {
        "threads": torch.get_num_threads(),
        "runs": args.runs,
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "dtype": str(dtype),
        "results": [asdict(r) for r in rows],
    }
    # --tiny is the CPU smoke run of the same code on tiny random weights: a record of its own.
    name = "judge_gpu_tiny" if args.tiny else "judge_gpu"
    data = f"random weights ({args.models} shapes), {args.prompt_tokens}-token prompts"
    result = Result(
        benchmark=name,
        figures=figures(details),
        data=data,
        in_sample=False,
        command=command("judge_gpu", argv),
        details=details,
        machine=machine(device),
    )
    out = write_result(result, args.out)
    print(f"\n{'model':>6} {'mode':<17} {'pairs/s':>9} {'reference':>9}  note")
    for r in rows:
        ref = f"{r.reference_pairs_per_s:.0f}" if r.reference_pairs_per_s else "-"
        print(f"{r.model:>6} {r.mode:<17} {r.pairs_per_s:>9.1f} {ref:>9}  {r.note}")
    print(f"wrote {out}")
    return result.to_json()


if __name__ == "__main__":
    main()
