"""The rule judge on ../shared/data/judge_numeric_dev, scored by that dataset's own scorer.

The items (claims written by hand over passages cut verbatim from 11 statutes, labels and perturbation types
given by the dataset) are fed exactly as ``aceh-rag judge`` takes them: ``{"id", "claim", "passage",
"document": source_title}`` through :func:`judge.offline.judge_records` with the embedded rule judge (the
default judge role), re-check included. An ``unverified`` verdict is passed on as it is, and the scorer counts
it as wrong. The scorer is the dataset's ``score_judge.py``, run as a program (not copied).

Figures on this set are in-sample: the rules were tuned while looking at its errors.

    .venv/bin/python -m benchmarks.judge_numeric_dev      # prints the scorer's report, writes JSON
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from judge.offline import judge_records
from judge.rules import RuleJudge

DATASET = "judge_numeric_dev"
ITEMS = "judge_numeric_dev.jsonl"
SCORER = "score_judge.py"


def dev_dir(root: Path) -> Path:
    return root / DATASET


def available(root: Path) -> bool:
    folder = dev_dir(root)
    return (folder / ITEMS).exists() and (folder / SCORER).exists()


def judge_input(item: dict[str, Any]) -> dict[str, Any]:
    """One dataset item as an ``aceh-rag judge`` input line: the claim, the passage, the source title."""
    return {
        "id": item["id"],
        "claim": item["claim"],
        "passage": item["passage"],
        "document": item["source_title"],
    }


def predict(root: Path) -> list[dict[str, Any]]:
    """``{"id", "verdict", "reasons"}`` for every item, as ``aceh-rag judge`` prints them."""
    lines = (dev_dir(root) / ITEMS).read_text(encoding="utf-8").splitlines()
    records = [judge_input(json.loads(line)) for line in lines if line.strip()]
    return asyncio.run(judge_records(records, RuleJudge()))


def score(root: Path, predictions: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The dataset scorer's metrics (its --json output) and its printed report."""
    with tempfile.TemporaryDirectory() as folder:
        preds = Path(folder) / "preds.jsonl"
        out = Path(folder) / "metrics.json"
        preds.write_text(
            "".join(json.dumps({"id": p["id"], "verdict": p["verdict"]}) + "\n" for p in predictions),
            encoding="utf-8",
        )
        done = subprocess.run(
            [sys.executable, str(dev_dir(root) / SCORER), str(preds), "--json", str(out)],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(out.read_text(encoding="utf-8")), done.stdout


def evaluate(root: Path) -> dict[str, Any]:
    """Scorer metrics plus the reasons of the wrong verdicts, counted (no item text)."""
    predictions = predict(root)
    metrics, report = score(root, predictions)
    gold = {
        item["id"]: item
        for item in map(json.loads, (dev_dir(root) / ITEMS).read_text(encoding="utf-8").splitlines())
    }
    wrong: dict[str, int] = {}
    for p in predictions:
        if p["verdict"] != gold[p["id"]]["label"]:
            key = f"{gold[p['id']]['perturbation']}:{(p['reasons'] or ['-'])[0]}"
            wrong[key] = wrong.get(key, 0) + 1
    metrics["wrong_by_perturbation_and_first_reason"] = dict(sorted(wrong.items()))
    metrics["note"] = "in-sample (dev, tuned on): the rules were adjusted while looking at this set's errors"
    metrics["input"] = (
        "claim; passage; document = source_title; via judge.offline.judge_records (aceh-rag judge)"
    )
    return {"metrics": metrics, "report": report}


def table(metrics: dict[str, Any]) -> str:
    overall = metrics["overall"]
    lines = [
        "judge_numeric_dev (193 hand-written items, 11 statutes; in-sample: tuned on)",
        f"balanced accuracy {overall['balanced_accuracy']:.3f}, supported recall "
        f"{overall['recall_supported']:.3f}, unsupported recall {overall['recall_unsupported']:.3f}",
        "",
        "| perturbation | label | n | acc | paired BA |",
        "|---|---|---|---|---|",
    ]
    for name, row in metrics["per_perturbation"].items():
        lines.append(f"| {name} | {row['label']} | {row['n']} | {row['acc']:.3f} | {row['paired_BA']:.3f} |")
    lines += ["", "| language | n | balanced acc | accuracy |", "|---|---|---|---|"]
    for lang, row in metrics["per_lang"].items():
        lines.append(f"| {lang} | {row['n']} | {row['balanced_accuracy']:.3f} | {row['accuracy']:.3f} |")
    return "\n".join(lines)


def main() -> None:
    from benchmarks.datasets.build_judge_dev import data_dir

    root = data_dir()
    if not available(root):
        print(f"{dev_dir(root)} not found; nothing to measure", file=sys.stderr)
        raise SystemExit(2)
    result = evaluate(root)
    print(result["report"])
    print(table(result["metrics"]))


if __name__ == "__main__":
    main()
