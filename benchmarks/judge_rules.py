"""Rule judge: balanced accuracy on hand-written claims over real statutes (the main figure), a consistency
check of the rules (not a result), and speed.

    .venv/bin/python -m benchmarks.judge_rules [--quick] [--compare REF]

Main figure: ../shared/data/judge_numeric_dev (193 claims written by hand over passages cut verbatim from 11
statutes, labels and perturbation types from the dataset, not from our code), fed as ``aceh-rag judge`` takes
it (claim; passage; document = source title; ``unverified`` counts as wrong) and scored by the dataset's own
``score_judge.py`` (benchmarks/judge_numeric_dev.py): overall, per perturbation type (acc and paired balanced
accuracy) and per language. It is in-sample: the rules were tuned while looking at its errors.

Consistency check only: the set built at run time from ../shared/data (or $ACEH_SHARED_DATA) by
benchmarks/datasets/build_judge_dev.py, split by document into ``dev`` and ``heldout``. Its labels and
perturbations come from the judge's own parser and templates (``build_view``, ``figures_equal``), so its score
says the rules agree with the code that labelled it; it is no measure of quality, in-sample by construction
(the held-out documents are held out from nothing: the labeller is the judge's own code). IndoNLI pairs whose
premise or hypothesis holds a figure are reported apart (entailment → supported, neutral/contradiction →
unsupported). Speed is measured on one core (the process is pinned where the OS allows) for passages of about
300 characters, cold (nothing cached) and warm (passage already parsed, claim new), with the share of that
time spent in Python's cyclic garbage collector (left at its defaults: no gc tuning here nor in the library).
IndoNLI per label over every pair, the unsupported reasons of both hand-written dev sets and a profile of
the warm judge come from benchmarks/judge_rules_report.py. ``--out PATH`` writes the record there instead.
``--compare REF`` also measures the judge/ package of git revision REF (read with ``git archive``) side by
side with the working tree: fresh processes, alternating, same pairs. Writes
benchmarks/results/judge_rules.json.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import io
import json
import os
import pickle
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from benchmarks import judge_numeric_dev
from benchmarks import judge_rules_report as report
from benchmarks.datasets.build_judge_dev import build, data_dir
from benchmarks.harness import Figure, Result, command, percentile, write_result
from judge import rules
from judge.rules import check_claim
from judge.types import JudgePassage
from language.numbers import extract_figures

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = {
    "scale": {"scale_mismatch"},
    "digit": {"figure_mismatch"},
    "year": {"period_mismatch"},
    "entity": {"entity_missing"},
    "unit": {"unit_mismatch"},
    "direction": {"direction_unsupported", "polarity_conflict"},
    "negation": {"polarity_conflict"},
    "bound": {"polarity_conflict"},
    "reference": {"reference_as_quantity"},
    "rounding": {"rounding_unmarked"},
}
LENIENT_RATIO = 0.34


def _passages(item: dict[str, Any]) -> tuple[JudgePassage, ...]:
    return tuple(JudgePassage(p["key"], p["text"], p["identity"]) for p in item["passages"])


def _balanced(pos_hit: int, pos: int, neg_hit: int, neg: int) -> float | None:
    if not pos or not neg:
        return None
    return round((pos_hit / pos + neg_hit / neg) / 2, 4)


def evaluate_consistency(items: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("dev", "heldout"):
        chosen = [i for i in items if i["split"] == split]
        supported = [i for i in chosen if i["label"] == "supported"]
        verdicts = {i["id"]: check_claim(i["claim"], _passages(i), context=i["context"]) for i in chosen}
        sup_hit = sum(verdicts[i["id"]].verdict == "supported" for i in supported)
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in chosen:
            if item["label"] == "unsupported":
                by_type[item["perturbation"]].append(item)
        neg_total = sum(len(v) for v in by_type.values())
        neg_hit = sum(verdicts[i["id"]].verdict == "unsupported" for v in by_type.values() for i in v)
        per_type = {}
        for kind, group in sorted(by_type.items()):
            caught = sum(verdicts[i["id"]].verdict == "unsupported" for i in group)
            reason_ok = sum(bool(EXPECTED[kind] & set(verdicts[i["id"]].reasons)) for i in group)
            per_type[kind] = {
                "n": len(group),
                "caught": round(caught / len(group), 4),
                "balanced_accuracy": _balanced(sup_hit, len(supported), caught, len(group)),
                "reason_agreement": round(reason_ok / len(group), 4),
            }
        per_notation = Counter(i["notation"] for i in supported)
        notation_hit = Counter(i["notation"] for i in supported if verdicts[i["id"]].verdict == "supported")
        per_source = {}
        for source in ("apba", "legal"):
            sub = [i for i in chosen if i["source"] == source]
            pos = [i for i in sub if i["label"] == "supported"]
            neg = [i for i in sub if i["label"] == "unsupported"]
            per_source[source] = _balanced(
                sum(verdicts[i["id"]].verdict == "supported" for i in pos),
                len(pos),
                sum(verdicts[i["id"]].verdict == "unsupported" for i in neg),
                len(neg),
            )
        out[split] = {
            "n": len(chosen),
            "supported": len(supported),
            "unsupported": neg_total,
            "documents": len({i["document"] for i in chosen}),
            "supported_recall": round(sup_hit / max(1, len(supported)), 4),
            "unsupported_recall": round(neg_hit / max(1, neg_total), 4),
            "balanced_accuracy": _balanced(sup_hit, len(supported), neg_hit, neg_total),
            "per_perturbation": per_type,
            "per_source": per_source,
            "supported_recall_per_notation": {
                k: round(notation_hit[k] / n, 4) for k, n in sorted(per_notation.items())
            },
        }
    return out


def evaluate_indonli(root: Path, quick: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("val",) if quick else ("train", "val"):
        path = root / "nli_indonli" / f"{split}.jsonl"
        if not path.exists():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = [r for r in rows if extract_figures(r["premise"]) or extract_figures(r["hypothesis"])]
        if quick:
            rows = rows[:400]
        result: dict[str, Any] = {"n": len(rows), "labels": dict(Counter(r["label"] for r in rows))}
        for name, ratio in (("strict", 0.0), ("lenient", LENIENT_RATIO)):
            hits: Counter[str] = Counter()
            for row in rows:
                check = check_claim(
                    row["hypothesis"], [JudgePassage("P1", row["premise"])], max_unknown_ratio=ratio
                )
                gold = "supported" if row["label"] == "e" else "unsupported"
                hits[row["label"] + ("_ok" if check.verdict == gold else "_bad")] += 1
            pos = hits["e_ok"] + hits["e_bad"]
            neg = sum(hits[f"{lab}_{res}"] for lab in "nc" for res in ("ok", "bad"))
            result[name] = {
                "max_unknown_ratio": ratio,
                "balanced_accuracy": _balanced(hits["e_ok"], pos, hits["n_ok"] + hits["c_ok"], neg),
                "entailment_recall": round(hits["e_ok"] / max(1, pos), 4),
                "neutral_caught": round(hits["n_ok"] / max(1, hits["n_ok"] + hits["n_bad"]), 4),
                "contradiction_caught": round(hits["c_ok"] / max(1, hits["c_ok"] + hits["c_bad"]), 4),
            }
        out[split] = result
    return out


def _older(old: str, new: str) -> types.ModuleType:
    """``old`` where the revision measured has it, else ``new``."""
    return importlib.import_module(old if importlib.util.find_spec(old) else new)


# --compare measures older revisions of judge/: the claim parser lived in judge.rules before judge.claims,
# and the text and figure readers in judge/ before language/
_CLAIMS: types.ModuleType = _older("judge.claims", "judge.rules")
_TEXTUNITS: types.ModuleType = _older("judge.textunits", "language.textunits")
_NUMBERS: types.ModuleType = _older("judge.numbers", "language.numbers")
_CACHES = (
    (_TEXTUNITS, "build_view"),
    (_NUMBERS, "parse_text"),
    (rules, "_claim_parts"),
    (_CLAIMS, "claim_parts"),
    (rules, "_identity"),
    (rules, "_cached_source"),
    (rules, "_context_words"),
)


def _clear_caches() -> None:
    for module, name in _CACHES:  # getattr: --compare runs older versions, which may lack some
        cached = getattr(module, name, None)
        if cached is not None:
            cached.cache_clear()


class _GcClock:
    """Process time spent in the cyclic garbage collector while active."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started

    def __enter__(self) -> _GcClock:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)


def _chars(item: dict[str, Any]) -> int:
    return sum(len(p["text"]) for p in item["passages"])


def measure_speed(items: list[dict[str, Any]], runs: int) -> dict[str, Any]:
    """Pairs per second of CPU time on one core, for passages of 200-400 characters (about 300)."""
    pairs = [
        (i["claim"], _passages(i), i["context"])
        for i in items
        if 200 <= sum(len(p["text"]) for p in i["passages"]) <= 400
    ]
    mean_chars = statistics.mean(sum(len(p.text) for p in passages) for _, passages, _ in pairs)
    cold, warm, gc_share = [], [], []
    for _ in range(runs):
        _clear_caches()
        sample = pairs[:600]
        elapsed = 0.0
        for claim, passages, context in sample:
            _clear_caches()
            start = time.process_time()
            check_claim(claim, passages, context=context)
            elapsed += time.process_time() - start
        cold.append(len(sample) / elapsed)
        _clear_caches()
        seen: set[str] = set()
        rest = []
        for claim, passages, context in pairs:  # one claim per passage warms it; the others are timed
            if passages[0].text in seen:
                rest.append((claim, passages, context))
            else:
                seen.add(passages[0].text)
                check_claim(claim, passages, context=context)
        start = time.process_time()
        with _GcClock() as collector:
            for claim, passages, context in rest:
                check_claim(claim, passages, context=context)
        elapsed = time.process_time() - start
        warm.append(len(rest) / elapsed)
        gc_share.append(collector.seconds / elapsed)
    return {
        "passage_chars_mean": round(mean_chars, 1),
        "pairs_cold": 600,
        "pairs_warm": len(rest),
        "cold_pairs_per_s": round(percentile(cold, 0.5)),
        "warm_pairs_per_s": round(percentile(warm, 0.5)),
        "warm_gc_share": round(percentile(gc_share, 0.5), 3),
        "runs": runs,
        "clock": "process CPU time",
    }


_WORKER = (
    "import json, pickle, sys; sys.path.insert(0, sys.argv[1]); "
    "import judge; assert judge.__file__.startswith(sys.argv[1]), judge.__file__; "
    "from benchmarks.judge_rules import measure_speed; "
    "print(json.dumps(measure_speed(pickle.load(open(sys.argv[2], 'rb')), runs=int(sys.argv[3]))))"
)


def _worker_speed(judge_root: str, items_path: Path, runs: int) -> dict[str, Any]:
    """:func:`measure_speed` of the judge under ``judge_root`` in a fresh process (one core, as this one)."""
    done = subprocess.run([sys.executable, "-c", _WORKER, judge_root, str(items_path), str(runs)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    speed: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return speed


def fresh_process_speed(items: list[dict[str, Any]], runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        items_path = Path(folder) / "items.pkl"
        items_path.write_bytes(pickle.dumps(items))
        return _worker_speed(str(ROOT), items_path, runs) | {"process": "fresh"}


def compare_speed(items: list[dict[str, Any]], ref: str, rounds: int, runs: int) -> dict[str, Any]:
    """Speed of judge/ (with language/) at git revision ``ref`` ("before") and in the working tree ("after"),
    side by side: each measured in fresh processes, alternating, on the same pairs."""
    # reads the revision; touches no git state. language/ is archived where the revision has it (before it,
    # its modules lived in judge/)
    has_language = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{ref}:language"],
                                  capture_output=True).returncode == 0
    command = ["git", "-C", str(ROOT), "archive", ref, "judge", *(["language"] if has_language else [])]
    archive = subprocess.run(command, capture_output=True, check=True)
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(folder, filter="data")
        items_path = Path(folder) / "items.pkl"
        items_path.write_bytes(pickle.dumps(items))
        measured: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for _ in range(rounds):
            for side, path in (("before", folder), ("after", str(ROOT))):
                measured[side].append(_worker_speed(path, items_path, runs))
    out: dict[str, Any] = {"ref": ref, "rounds": rounds, "runs_per_round": runs}
    for side, results in measured.items():
        out[side] = {
            key: round(percentile([r[key] for r in results], 0.5), 3 if key == "warm_gc_share" else None)
            for key in ("cold_pairs_per_s", "warm_pairs_per_s", "warm_gc_share")
        }
        out[side]["warm_pairs_per_s_each"] = [r["warm_pairs_per_s"] for r in results]
    return out


def _table(result: dict[str, Any]) -> str:
    lines = []
    if "judge_numeric_dev" in result:
        lines += [judge_numeric_dev.table(result["judge_numeric_dev"]), ""]
    lines += [
        "consistency check only, not a result (labels from the judge's own parser and templates):",
        "| split | n | docs | balanced acc | supported recall | unsupported recall |",
        "|---|---|---|---|---|---|",
    ]
    for split in ("dev", "heldout"):
        r = result["consistency_check"][split]
        lines.append(
            f"| {split} | {r['n']} | {r['documents']} | {r['balanced_accuracy']} | {r['supported_recall']} | "
            f"{r['unsupported_recall']} |"
        )
    lines += [
        "",
        "| perturbation | dev n | dev caught | dev BA | heldout n | heldout caught | heldout BA | "
        "reason agreement (dev) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind in sorted(result["consistency_check"]["dev"]["per_perturbation"]):
        d = result["consistency_check"]["dev"]["per_perturbation"][kind]
        h = result["consistency_check"]["heldout"]["per_perturbation"].get(kind, {})
        lines.append(
            f"| {kind} | {d['n']} | {d['caught']} | {d['balanced_accuracy']} | {h.get('n', 0)} | "
            f"{h.get('caught')} | {h.get('balanced_accuracy')} | {d['reason_agreement']} |"
        )
    lines += ["", "| IndoNLI split | n | strict BA | strict e-recall | lenient BA |", "|---|---|---|---|---|"]
    for split, r in result["indonli"].items():
        lines.append(
            f"| {split} | {r['n']} | {r['strict']['balanced_accuracy']} | "
            f"{r['strict']['entailment_recall']} | "
            f"{r['lenient']['balanced_accuracy']} |"
        )
    s = result["speed"]
    lines += [
        "",
        f"speed (one core, passages ~{s['passage_chars_mean']} chars): cold {s['cold_pairs_per_s']} pairs/s, "
        f"warm passage {s['warm_pairs_per_s']} pairs/s (garbage collector {s['warm_gc_share']:.0%} of it), "
        "in a fresh process",
    ]
    if "speed_after_quality_checks" in result:
        a = result["speed_after_quality_checks"]
        lines.append(f"  the same pairs in this process after the quality checks: cold "
                     f"{a['cold_pairs_per_s']}, warm {a['warm_pairs_per_s']} pairs/s")
    if "speed_compare" in result:
        c = result["speed_compare"]
        for side in ("before", "after"):
            lines.append(
                f"  {side} ({c['ref'] if side == 'before' else 'working tree'}): cold "
                f"{c[side]['cold_pairs_per_s']}, warm {c[side]['warm_pairs_per_s']} pairs/s "
                f"(each round {c[side]['warm_pairs_per_s_each']}, gc {c[side]['warm_gc_share']:.0%})"
            )
    return "\n".join(lines)


def figures(details: dict[str, Any]) -> dict[str, Figure]:
    """Headline: judge_numeric_dev (balanced accuracy, unsupported recall, English accuracy), then the
    consistency check (labels from the judge's own code, dev and held-out documents) and warm speed
    (IndoNLI is in the details)."""
    out: dict[str, Figure] = {}
    if "judge_numeric_dev" in details:
        dev_set = details["judge_numeric_dev"]
        overall = dev_set["overall"]
        out["dev BA / unsup. recall / EN acc."] = (
            f"{overall['balanced_accuracy']:.3f} / {overall['recall_unsupported']:.3f} / "
            f"{dev_set['per_lang']['en']['accuracy']:.3f}"
        )
    consistency = details["consistency_check"]
    out["consistency (own labels, no result) dev/held-out"] = (
        f"{consistency['dev']['balanced_accuracy']} / {consistency['heldout']['balanced_accuracy']}"
    )
    out["warm pairs/s, 1 core"] = f"{details['speed']['warm_pairs_per_s']:,}"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small dev set, IndoNLI val only (< 60 s)")
    parser.add_argument("--compare", metavar="REF", help="also measure judge/ at this git revision")
    parser.add_argument("--out", metavar="PATH", help="write the record here instead (e.g. under /tmp)")
    args = parser.parse_args(argv)
    root = data_dir()
    if not (root / "apba_aceh_2025").exists() or not (root / "indo_legal_corpus").exists():
        print(f"shared data not found under {root}; nothing to measure", file=sys.stderr)
        return 2
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    started = time.time()
    items = build(root, quick=args.quick)
    details: dict[str, Any] = {"threads": 1, "quick": args.quick}
    if judge_numeric_dev.available(root):
        details["judge_numeric_dev"] = judge_numeric_dev.evaluate(root)["metrics"]
    else:
        print(f"{judge_numeric_dev.dev_dir(root)} not found: main figure skipped", file=sys.stderr)
    details |= {
        "consistency_check": evaluate_consistency(items),
        "consistency_check_note": "labels and perturbations from the judge's own parser and templates "
        "(build_view, figures_equal): the rules' agreement with their own labeller, not a quality figure",
        "indonli": evaluate_indonli(root, args.quick),
        # The headline speed is a fresh process's, as a replica runs; the in-process timing stays beside it
        # (on this shared host the two have differed both ways by up to 40 %: noise, not the judge).
        "speed": fresh_process_speed(items, runs=1 if args.quick else 3),
        "speed_after_quality_checks": measure_speed(items, runs=1 if args.quick else 3),
        "indonli_by_label": report.indonli_by_label(root, args.quick),
        "unsupported_reasons": report.dev_reasons(root),
    }
    details["profile"] = report.profile_warm(
        [(i["claim"], _passages(i), i["context"]) for i in items if 200 <= _chars(i) <= 400]
    )
    if args.compare:
        details["speed_compare"] = compare_speed(items, args.compare, rounds=2, runs=1 if args.quick else 3)
    details["seconds"] = round(time.time() - started, 1)
    table = _table(details) + "\n\n" + report.table(details)
    print(table)
    details["table"] = table
    # judge_numeric_dev: hand-written claims, the dataset's labels, in-sample (tuned on). The generated set's
    # labels come from the judge's own code: a consistency check of the rules, not an estimate of quality.
    result = Result(
        benchmark="judge_rules", figures=figures(details), in_sample=True,
        data="judge_numeric_dev (193 hand-written, tuned on); own-label consistency set",
        command=command("judge_rules", argv), details=details)
    path = write_result(result, args.out, quick=args.quick)
    print(f"→ {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
