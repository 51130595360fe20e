"""A computed figure is judged against the judge's own recomputation from the rows it came from: supported
only when equal at the claim's precision; a figure derived any other way is not supported."""

from __future__ import annotations

from decimal import Decimal

import pytest

from judge.aggregate import format_id, recompute, restate
from judge.rules import check_claim
from judge.types import JudgePassage

HEADER = ("kabupaten", "kecamatan", "tahun", "penduduk")
ROWS = (
    ("Teluk Rekaan", "Lhok Fiksi", "2023", "41.250"),
    ("Teluk Rekaan", "Ujong Contoh", "2023", "28.730"),
    ("Teluk Rekaan", "Blang Khayal", "2023", "17.415"),
)
OF = "dari 3 baris tabel penduduk_kecamatan (kabupaten Teluk Rekaan, tahun 2023)"


def _verdict(operation: str, claim: str, rows: tuple[tuple[str, ...], ...] = ROWS) -> str:
    text = restate(operation, "penduduk", HEADER, rows, dataset="penduduk_kecamatan")
    identity: dict[str, str | int | None] = {"dataset": "penduduk_kecamatan", "period": "2023"}
    passage = JudgePassage("P1", text, identity)
    return check_claim(claim, [passage]).verdict


def test_recompute_reads_the_cells_as_written() -> None:
    assert recompute("sum", "penduduk", HEADER, ROWS).value == Decimal(87395)
    assert recompute("count", "penduduk", HEADER, ROWS).value == Decimal(3)
    mean = recompute("mean", "penduduk", HEADER, ROWS).value
    assert mean is not None and abs(mean - Decimal("29131.666666666667")) < Decimal("1e-9")
    money = recompute("sum", "pagu", ("urusan", "pagu"), (("a", "Rp1,5 miliar"), ("b", "Rp250.000.000")))
    assert (money.value, money.unit_prefix) == (Decimal(1_750_000_000), "Rp")


@pytest.mark.parametrize(
    "cells",
    [("41.250", "n/a"), ("41.250", "12%"), ("Rp1.000", "1.000"), ("1 dan 2", "3")],
)
def test_cells_that_are_not_one_figure_of_one_kind_are_not_recomputed(cells: tuple[str, str]) -> None:
    rows = tuple(("x", c) for c in cells)
    assert recompute("sum", "v", ("k", "v"), rows).value is None
    assert "tidak dapat dihitung ulang" in restate("sum", "v", ("k", "v"), rows)


def test_the_stated_value_never_reaches_the_judge() -> None:
    text = restate("sum", "penduduk", HEADER, ROWS, dataset="penduduk_kecamatan")
    assert text.splitlines()[-1] == f"Dihitung ulang: jumlah penduduk {OF} adalah 87.395."
    assert format_id(Decimal("2.125")) == "2,1250" and format_id(Decimal("1234567.5")) == "1.234.567,5"


@pytest.mark.parametrize(
    ("operation", "claim", "verdict"),
    [
        ("sum", f"Jumlah penduduk {OF} adalah 87.395.", "supported"),
        ("sum", f"Jumlah penduduk {OF} adalah 87.395 (sekitar 87,4 ribu).", "supported"),
        ("sum", f"Jumlah penduduk {OF} adalah 87.396.", "unsupported"),  # off by one
        ("sum", f"Jumlah penduduk {OF} adalah 87.000.", "unsupported"),  # rounded without saying so
        ("sum", f"Jumlah penduduk {OF} adalah 87,39 ribu.", "unsupported"),  # rounded the wrong way
        ("sum", f"Jumlah penduduk {OF} adalah 874 ribu.", "unsupported"),  # another magnitude
        ("mean", f"Rata-rata penduduk {OF} adalah 29.131,67.", "supported"),
        ("mean", f"Rata-rata penduduk {OF} adalah 29.131,6.", "unsupported"),
        ("mean", f"Rata-rata penduduk {OF} adalah 87.395.", "unsupported"),  # the total is not the mean
        ("count", f"Banyaknya penduduk {OF} adalah 3.", "supported"),
        ("count", f"Banyaknya penduduk {OF} adalah 4.", "unsupported"),
        # derived figures that are neither the recomputed aggregate nor a row: never supported
        ("sum", "Selisih penduduk Lhok Fiksi dan Ujong Contoh adalah 12.520.", "unsupported"),
        ("sum", f"Penduduk Lhok Fiksi adalah 47,2 persen dari jumlah penduduk {OF}.", "unsupported"),
    ],
)
def test_supported_only_when_equal_to_the_recomputed_value(operation: str, claim: str, verdict: str) -> None:
    assert _verdict(operation, claim) == verdict


def test_a_row_figure_is_still_read_from_its_row() -> None:
    assert _verdict("sum", "Penduduk kecamatan Lhok Fiksi tahun 2023 adalah 41.250.") == "supported"
