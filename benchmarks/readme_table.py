"""The README's benchmark table, written from the result records so it cannot drift from them.

    .venv/bin/python -m benchmarks.readme_table [--check]      (make readme)

One line per top-level ``benchmarks/results/*.json`` (the latest run of each benchmark; older runs live in
``results/archive/``): its headline figures, data set, whether that data was tuned on, command, date and
machine. The table replaces what stands between the two markers in README.md; ``--check`` only compares and
exits 1 when the README differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO, RESULTS, machine_summary, read_result

README = REPO / "README.md"
BEGIN = "<!-- benchmarks:begin (make readme writes this table from benchmarks/results/*.json) -->"
END = "<!-- benchmarks:end -->"
# Reading order: the request path's cost first, then its parts, then quality, then the store.
ORDER = ("graph_overhead", "query_v2", "retrieval", "judge_rules", "judge_pool", "judge_gpu",
         "judge_gpu_tiny", "agent_quality", "agent_quality_demo", "guard_eval", "store")


def load(results: Path = RESULTS) -> list[dict[str, Any]]:
    records = [read_result(path) for path in sorted(results.glob("*.json"))]
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(records, key=lambda r: (rank.get(r["benchmark"], len(ORDER)), r["benchmark"]))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _figures(figures: dict[str, Any]) -> str:
    return "; ".join(f"{name}: {value}" for name, value in figures.items())


def render(records: list[dict[str, Any]]) -> str:
    """The Markdown between the markers: the table, then which machine each letter stands for."""
    machines: dict[str, str] = {}
    lines = [
        "| benchmark | headline figures | data | in-sample | command | date | machine |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in records:
        summary = machine_summary(r["machine"])
        letter = machines.setdefault(summary, chr(ord("A") + len(machines)))
        cells = [r["benchmark"], _figures(r["figures"]), r["data"], "yes" if r["in_sample"] else "no",
                 f"`{r['command'].replace('python -m ', '')}`", r["date"][:10], letter]
        lines.append("| " + " | ".join(_cell(str(c)) for c in cells) + " |")
    lines.append("")
    lines += [f"{letter}: {summary}." for summary, letter in machines.items()]
    return "\n".join(lines)


def rewrite(readme: str, table: str) -> str:
    head, begin, rest = readme.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"README.md lacks the markers {BEGIN!r} and {END!r}")
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when the README differs")
    args = parser.parse_args(argv)
    current = README.read_text(encoding="utf-8")
    wanted = rewrite(current, render(load()))
    if wanted == current:
        return 0
    if args.check:
        print("README.md's benchmark table differs from benchmarks/results/*.json: run `make readme`",
              file=sys.stderr)
        return 1
    README.write_text(wanted, encoding="utf-8")
    print("README.md: benchmark table rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
