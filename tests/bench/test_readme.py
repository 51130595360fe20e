"""The README's benchmark table is what benchmarks/readme_table.py writes from the result records, and no
README line runs past 300 characters."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import readme_table
from benchmarks.harness import RECORD_FIELDS, REPO, RESULTS, read_result, valid_in_sample

MAX_LINE = 300


def test_readme_table_equals_the_results() -> None:
    readme = readme_table.README.read_text(encoding="utf-8")
    wanted = readme_table.rewrite(readme, readme_table.render(readme_table.load()))
    assert readme == wanted, "README.md's benchmark table differs from benchmarks/results/*.json: make readme"


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.stem)
def test_every_latest_result_is_a_record(path: Path) -> None:
    record = read_result(path)
    assert set(RECORD_FIELDS) <= set(record) and record["figures"], path.name
    assert valid_in_sample(record["in_sample"]) and record["command"].startswith("python -m benchmarks.")
    readme_table.in_sample_label(record)  # every record's value has its words in the table


@pytest.mark.parametrize("name", ["README.md", "benchmarks/README.md"])
def test_no_readme_line_over_300_characters(name: str) -> None:
    text = (REPO / name).read_text(encoding="utf-8")
    long = [(n, len(line)) for n, line in enumerate(text.splitlines(), 1) if len(line) > MAX_LINE]
    assert long == [], f"{name}: lines over {MAX_LINE} characters (line, length): {long}"


def test_rewrite_needs_both_markers() -> None:
    with pytest.raises(ValueError, match="markers"):
        readme_table.rewrite("# no table here\n", "| a |")
    text = f"x\n{readme_table.BEGIN}\nold\n{readme_table.END}\ny\n"
    assert readme_table.rewrite(text, "new") == f"x\n{readme_table.BEGIN}\nnew\n{readme_table.END}\ny\n"
