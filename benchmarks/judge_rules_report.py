"""Sections of benchmarks/judge_rules.py's report kept apart: IndoNLI per label over every pair, how often
each unsupported reason fires on the hand-written dev sets, and a profile of the warm judge.

IndoNLI (``../shared/data/nli_indonli``: human-written premise/hypothesis pairs, no figures needed): the
rule judge with its default settings (as ``aceh-rag judge`` runs it), the share of each label marked
``supported``: entailment recall beside the contradictions and neutral hypotheses it lets through.
"""

from __future__ import annotations

import cProfile
import json
import pstats
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks import judge_numeric_dev
from judge.rules import check_claim
from judge.types import JudgePassage

NLI_SPLITS = ("test_lay", "val")
LABELS = {"e": "entailment", "n": "neutral", "c": "contradiction"}


def indonli_by_label(root: Path, quick: bool) -> dict[str, Any]:
    """Per split and label: n and the share marked supported (every pair; quick: val's first 400)."""
    out: dict[str, Any] = {}
    for split in ("val",) if quick else NLI_SPLITS:
        path = root / "nli_indonli" / f"{split}.jsonl"
        if not path.exists():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = rows[:400] if quick else rows
        total: Counter[str] = Counter()
        supported: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        for row in rows:
            check = check_claim(row["hypothesis"], [JudgePassage("P1", row["premise"])])
            total[row["label"]] += 1
            if check.verdict == "supported":
                supported[row["label"]] += 1
            else:
                reasons.update(set(check.reasons))
        out[split] = {
            LABELS[label]: {"n": total[label], "supported": round(supported[label] / max(1, total[label]), 4)}
            for label in LABELS
        } | {"unsupported_reasons": dict(reasons.most_common())}
    return out


def dev_reasons(root: Path) -> dict[str, dict[str, int]]:
    """Each dev set's unsupported reasons, counted over its verdicts (unsupported_reasons)."""
    return {
        dataset: judge_numeric_dev.unsupported_reasons(judge_numeric_dev.predict(root, dataset))
        for dataset in judge_numeric_dev.DATASETS
        if judge_numeric_dev.available(root, dataset)
    }


Pair = tuple[str, tuple[JudgePassage, ...], str]


def profile_warm(pairs: list[Pair], top: int = 12) -> list[dict[str, Any]]:
    """Where the warm judge spends its time: cProfile over the pairs (already warmed by the speed run), the
    functions with the most own time, as a share of the total."""
    profiler = cProfile.Profile()
    profiler.enable()
    for claim, passages, context in pairs:
        check_claim(claim, passages, context=context)
    profiler.disable()
    stats = pstats.Stats(profiler)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in entries.values()) or 1.0
    rows = sorted(entries.items(), key=lambda item: -item[1][2])[:top]
    return [
        {
            "function": f"{Path(file).name}:{line}({name})",
            "own_share": round(entry[2] / total, 3),
            "cumulative_share": round(entry[3] / total, 3),
            "calls": entry[1],
        }
        for (file, line, name), entry in rows
    ]


def table(details: dict[str, Any]) -> str:
    lines = ["| IndoNLI split | label | n | marked supported |", "|---|---|---|---|"]
    for split, labels in details.get("indonli_by_label", {}).items():
        for label in LABELS.values():
            row = labels[label]
            lines.append(f"| {split} | {label} | {row['n']} | {row['supported']:.1%} |")
    reasons = details.get("unsupported_reasons", {})
    if reasons:
        names = sorted({r for counts in reasons.values() for r in counts})
        lines += ["", "| unsupported reason | " + " | ".join(reasons) + " |", "|---|" + "---|" * len(reasons)]
        for name in names:
            lines.append(f"| {name} | " + " | ".join(str(c.get(name, 0)) for c in reasons.values()) + " |")
    if details.get("profile"):
        lines += ["", "profile of the warm judge (own time share, cumulative share, calls):"]
        for row in details["profile"]:
            shares = f"{row['own_share']:6.1%} {row['cumulative_share']:6.1%}"
            lines.append(f"  {shares} {row['calls']:>8}  {row['function']}")
    return "\n".join(lines)
