"""The README's benchmark table, written from the result records so it cannot drift from them.

    .venv/bin/python -m benchmarks.readme_table [--check]      (make readme)

One line per top-level ``benchmarks/results/*.json`` (the latest run of each benchmark; older runs live in
``results/archive/``): its headline figures, data set, how the figure was made (in-sample ``yes``, ``no``,
``no (first look)`` or ``selection``), command, date and machine. A record measured on a dirty tree, or older
than the code it measures, is refused (``benchmarks/provenance.py`` says how that is decided): it is left out
of the table and named in a "Not shown" list under it, and ``make readme`` prints the refusals; ``--strict``
exits 1 when there is any. Above the table, each development set's first look (out of sample) stands beside
its latest in-sample record. The text replaces what stands between the two markers in README.md; ``--check``
only compares and exits 1 when the README differs.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO, RESULTS, machine_summary, read_result
from benchmarks.provenance import Refusal, split

README = REPO / "README.md"
BEGIN = "<!-- benchmarks:begin (make readme writes this table from benchmarks/results/*.json) -->"
END = "<!-- benchmarks:end -->"
# Reading order: the request path's cost first, then its parts, then quality, then the store.
ORDER = ("graph_overhead", "query_v2", "retrieval", "judge_rules", "judge_pool", "judge_gpu",
         "judge_gpu_tiny", "agent_quality", "agent_quality_demo", "guard_eval", "store")


# Each development set: its one first-look record (out of sample) and its latest in-sample record.
FIRST_LOOKS = (
    ("judge_numeric_dev2", "judge_numeric_dev2_first_look", "judge_numeric_dev2"),
    ("legal_qa_dev2", "legal_qa_dev2_first_look", "agent_quality_full_legal_qa_dev2"),
)


def load(results: Path = RESULTS) -> list[dict[str, Any]]:
    records = [read_result(path) for path in sorted(results.glob("*.json"))]
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(records, key=lambda r: (rank.get(r["benchmark"], len(ORDER)), r["benchmark"]))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _figures(figures: dict[str, Any]) -> str:
    return "; ".join(f"{name}: {value}" for name, value in figures.items())


def in_sample_label(record: dict[str, Any]) -> str:
    """How the figure was made, in the table's words; a value that is none of the three is refused."""
    value = record["in_sample"]
    if value is True:
        return "yes"
    if value is False:
        return "no (first look)" if record.get("first_look") is True else "no"
    if value == "selection":
        return "selection"
    raise ValueError(f"{record['benchmark']}: in_sample must be true, false or 'selection', not {value!r}")


def _commit(record: dict[str, Any]) -> str:
    machine = record.get("machine")
    commit = machine.get("git_commit") if isinstance(machine, dict) else None
    return str(commit)[:7] if commit else "no commit"


def first_look_table(records: list[dict[str, Any]], refused: list[Refusal]) -> list[str]:
    """Per development set: the first look beside the latest in-sample record, or why one is missing."""
    by_name = {r["benchmark"]: r for r in records}
    why = {x.benchmark: x.reason for x in refused}

    def cell(name: str) -> str:
        record = by_name.get(name)
        if record is None:
            return "not run yet"
        if name in why:
            return f"not shown ({why[name]})"
        return f"{_figures(record['figures'])} ({record['date'][:10]}, {_commit(record)})"

    lines = [
        "**First look (out of sample) vs latest in-sample**, per development set: the first look is the one",
        "run made before any change against the set; every later run on it is in-sample (tuned on).",
        "",
        "| dev set | first look (out of sample) | latest in-sample |",
        "| --- | --- | --- |",
    ]
    for dev_set, first, latest in FIRST_LOOKS:
        lines.append("| " + " | ".join(_cell(c) for c in (dev_set, cell(first), cell(latest))) + " |")
    return lines


def render(records: list[dict[str, Any]], refused: list[Refusal] | None = None) -> str:
    """The Markdown between the markers: first looks vs in-sample, the table of the records that may be
    shown, the refused ones by name and reason, then which machine each letter stands for. ``refused``
    defaults to :func:`benchmarks.provenance.refusal` of each record against this checkout."""
    if refused is None:
        shown, refused = split(records)
    else:
        names = {x.benchmark for x in refused}
        shown = [r for r in records if r["benchmark"] not in names]
    machines: dict[str, str] = {}
    lines = [*first_look_table(records, refused), ""]
    lines += [
        "| benchmark | headline figures | data | in-sample | command | date | machine |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in shown:
        summary = machine_summary(r["machine"])
        letter = machines.setdefault(summary, chr(ord("A") + len(machines)))
        cells = [r["benchmark"], _figures(r["figures"]), r["data"], in_sample_label(r),
                 f"`{r['command'].replace('python -m ', '')}`", r["date"][:10], letter]
        lines.append("| " + " | ".join(_cell(str(c)) for c in cells) + " |")
    lines.append("")
    if refused:
        # One wrapped paragraph, not a line per record: the README stays short however many are stale.
        text = ("Not shown (`make readme` refuses a record measured on a dirty tree, without a commit, or "
                "older than its code; rerun at HEAD): " + "; ".join(_cell(str(x)) for x in refused) + ".")
        lines += textwrap.wrap(text, width=110, break_long_words=False, break_on_hyphens=False)
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
    parser.add_argument("--strict", action="store_true", help="exit 1 when any record is refused")
    args = parser.parse_args(argv)
    records = load()
    shown, refused = split(records)
    if refused:
        print("make readme: refused (left out of the table; rerun at HEAD on a clean tree):", file=sys.stderr)
        for x in refused:
            print(f"  {x}", file=sys.stderr)
    current = README.read_text(encoding="utf-8")
    wanted = rewrite(current, render(records, refused))
    if args.strict and refused:
        return 1
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
