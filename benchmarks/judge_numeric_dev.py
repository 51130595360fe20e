"""The rule judge on ../shared/data/judge_numeric_dev (or _dev2), scored by that dataset's own scorer.

The items (claims written by hand over passages cut verbatim from 11 statutes, labels and perturbation types
given by the dataset) are fed exactly as ``aceh-rag judge`` takes them: ``{"id", "claim", "passage",
"document": source_title}`` through :func:`judge.offline.judge_records` with the embedded rule judge (the
default judge role), re-check included. An ``unverified`` verdict is passed on as it is, and the scorer counts
it as wrong. The scorer is the dataset's ``score_judge.py``, run as a program (not copied).

Figures on judge_numeric_dev are in-sample: the rules were tuned while looking at its errors.
judge_numeric_dev2 was run once with ``--first-look`` before any judge change made against it
(``results/judge_numeric_dev2_first_look.json``, out of sample); every later figure on it is in-sample.

    .venv/bin/python -m benchmarks.judge_numeric_dev [--dataset judge_numeric_dev2]  # the scorer's report
    .venv/bin/python -m benchmarks.judge_numeric_dev --dataset judge_numeric_dev2 --first-look  # once only
    .venv/bin/python -m benchmarks.judge_numeric_dev --dataset judge_numeric_dev2 --write  # in-sample record

``--write`` writes ``results/<dataset>.json``, the latest in-sample record, which the README sets beside the
first look (``benchmarks/readme_table.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.harness import Result, command, write_first_look, write_result
from judge.offline import judge_records
from judge.rules import RuleJudge

DATASET = "judge_numeric_dev"
DATASETS = ("judge_numeric_dev", "judge_numeric_dev2")
SCORER = "score_judge.py"


def dev_dir(root: Path, dataset: str = DATASET) -> Path:
    return root / dataset


def items_file(root: Path, dataset: str = DATASET) -> Path:
    return dev_dir(root, dataset) / f"{dataset}.jsonl"


def available(root: Path, dataset: str = DATASET) -> bool:
    return items_file(root, dataset).exists() and (dev_dir(root, dataset) / SCORER).exists()


def judge_input(item: dict[str, Any]) -> dict[str, Any]:
    """One dataset item as an ``aceh-rag judge`` input line: the claim, the passage, the source title."""
    return {
        "id": item["id"],
        "claim": item["claim"],
        "passage": item["passage"],
        "document": item["source_title"],
    }


def predict(root: Path, dataset: str = DATASET) -> list[dict[str, Any]]:
    """``{"id", "verdict", "reasons"}`` for every item, as ``aceh-rag judge`` prints them."""
    lines = items_file(root, dataset).read_text(encoding="utf-8").splitlines()
    records = [judge_input(json.loads(line)) for line in lines if line.strip()]
    return asyncio.run(judge_records(records, RuleJudge()))


def score(
    root: Path, predictions: list[dict[str, Any]], dataset: str = DATASET
) -> tuple[dict[str, Any], str]:
    """The dataset scorer's metrics (its --json output) and its printed report."""
    with tempfile.TemporaryDirectory() as folder:
        preds = Path(folder) / "preds.jsonl"
        out = Path(folder) / "metrics.json"
        preds.write_text(
            "".join(json.dumps({"id": p["id"], "verdict": p["verdict"]}) + "\n" for p in predictions),
            encoding="utf-8",
        )
        done = subprocess.run(
            [sys.executable, str(dev_dir(root, dataset) / SCORER), str(preds), "--json", str(out)],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(out.read_text(encoding="utf-8")), done.stdout


def evaluate(root: Path, dataset: str = DATASET, *, in_sample: bool = True) -> dict[str, Any]:
    """Scorer metrics plus the reasons of the wrong verdicts, counted (no item text)."""
    predictions = predict(root, dataset)
    metrics, report = score(root, predictions, dataset)
    gold = {
        item["id"]: item
        for item in map(json.loads, items_file(root, dataset).read_text(encoding="utf-8").splitlines())
        if item
    }
    wrong: dict[str, int] = {}
    for p in predictions:
        if p["verdict"] != gold[p["id"]]["label"]:
            key = f"{gold[p['id']]['perturbation']}:{(p['reasons'] or ['-'])[0]}"
            wrong[key] = wrong.get(key, 0) + 1
    metrics["wrong_by_perturbation_and_first_reason"] = dict(sorted(wrong.items()))
    metrics["unsupported_reasons"] = unsupported_reasons(predictions)
    metrics["note"] = (
        "in-sample (dev, tuned on): the rules were adjusted while looking at this set's errors"
        if in_sample
        else "first look (out of sample): run once before any judge change made against this set"
    )
    metrics["input"] = (
        "claim; passage; document = source_title; via judge.offline.judge_records (aceh-rag judge)"
    )
    return {"metrics": metrics, "report": report}


def unsupported_reasons(predictions: list[dict[str, Any]]) -> dict[str, int]:
    """How often each reason code fires on the unsupported verdicts (a verdict may carry several)."""
    counts: dict[str, int] = {}
    for p in predictions:
        if p["verdict"] == "unsupported":
            for reason in dict.fromkeys(p["reasons"] or ["-"]):
                counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


V1_TITLE = "judge_numeric_dev (193 hand-written items, 11 statutes; in-sample: tuned on)"


def table(metrics: dict[str, Any], title: str = V1_TITLE) -> str:
    overall = metrics["overall"]
    lines = [
        title,
        f"balanced accuracy {overall['balanced_accuracy']:.3f}, supported recall "
        f"{overall['recall_supported']:.3f}, unsupported recall {overall['recall_unsupported']:.3f}",
        "",
        "| perturbation | label | n | acc | paired BA |",
        "|---|---|---|---|---|",
    ]
    for name, row in metrics["per_perturbation"].items():
        lines.append(f"| {name} | {row['label']} | {row['n']} | {row['acc']:.3f} | {row['paired_BA']:.3f} |")
    if metrics.get("per_family"):
        lines += ["", "| family | label | n | acc | paired BA |", "|---|---|---|---|---|"]
        for name, row in metrics["per_family"].items():
            cells = (name, row["label"], row["n"], f"{row['acc']:.3f}", f"{row['paired_BA']:.3f}")
            lines.append("| " + " | ".join(map(str, cells)) + " |")
    if metrics.get("unsupported_reasons"):
        lines += ["", "| unsupported reason | verdicts |", "|---|---|"]
        lines += [f"| {reason} | {n} |" for reason, n in metrics["unsupported_reasons"].items()]
    lines += ["", "| language | n | balanced acc | accuracy |", "|---|---|---|---|"]
    for lang, row in metrics["per_lang"].items():
        lines.append(f"| {lang} | {row['n']} | {row['balanced_accuracy']:.3f} | {row['accuracy']:.3f} |")
    return "\n".join(lines)


def first_look_record(root: Path, dataset: str, argv: list[str] | None) -> Result:
    """The out-of-sample record of a set's first run (before any judge change made against it)."""
    return run_record(root, dataset, argv, first_look=True)


def run_record(root: Path, dataset: str, argv: list[str] | None, *, first_look: bool) -> Result:
    """A run's record: the first look (out of sample, ``<dataset>_first_look``) or an in-sample run
    (``<dataset>``), with the same headline figures so the README can set them side by side."""
    result = evaluate(root, dataset, in_sample=not first_look)
    overall = result["metrics"]["overall"]
    english = result["metrics"].get("per_lang", {}).get("en", {})
    return Result(
        benchmark=f"{dataset}_first_look" if first_look else dataset,
        figures={
            "BA": round(overall["balanced_accuracy"], 3),
            "unsupported recall": round(overall["recall_unsupported"], 3),
            "supported recall": round(overall["recall_supported"], 3),
            "EN acc.": round(english["accuracy"], 3) if english else "-",
        },
        data=f"{dataset}, its labels and scorer; "
        + ("before any judge change" if first_look else "tuned on"),
        in_sample=not first_look,
        first_look=first_look,
        command=command("judge_numeric_dev", argv),
        details={"dataset": dataset, "metrics": result["metrics"], "scorer_report": result["report"]},
    )


def main(argv: list[str] | None = None) -> int:
    from benchmarks.datasets.build_judge_dev import data_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=DATASETS, default=DATASET)
    parser.add_argument(
        "--first-look", action="store_true",
        help="write results/<dataset>_first_look.json (out of sample); refused once it exists",
    )
    parser.add_argument("--write", action="store_true", help="write results/<dataset>.json (in-sample)")
    args = parser.parse_args(argv)
    root = data_dir()
    if not available(root, args.dataset):
        print(f"{dev_dir(root, args.dataset)} not found; nothing to measure", file=sys.stderr)
        return 2
    if args.first_look:
        record = first_look_record(root, args.dataset, argv)
        print(record.details["scorer_report"])
        print(table(record.details["metrics"], f"{args.dataset}: first look (out of sample)"))
        print(write_first_look(record))
        return 0
    if args.write:
        in_sample = run_record(root, args.dataset, argv, first_look=False)
        print(in_sample.details["scorer_report"])
        print(table(in_sample.details["metrics"], f"{args.dataset} (in-sample)"))
        print(write_result(in_sample))
        return 0
    result = evaluate(root, args.dataset)
    print(result["report"])
    print(table(result["metrics"], f"{args.dataset} (in-sample)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
