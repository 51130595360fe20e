"""Live figures reach the judge as the record read, with its identity (dataset, source, period, the call,
retrieved_at); a computed figure reaches it as its rows, never as the value the tool stated, so the claim is
supported only when it equals the judge's own recomputation."""

from __future__ import annotations

from collections.abc import Sequence

from judge.rules import RuleJudge
from judge.types import JudgeItem, JudgeResult
from serve_app.answer.annotate import Annotator
from serve_app.answer.segments import Aggregate, Passage
from tests.support.answers import StaticFraming, annotate, seg

IDENTITY = {
    "dataset": "penduduk_kecamatan",
    "source": "SQL stats.sqlite",
    "period": "2023",
    "call": "SELECT * FROM penduduk_kecamatan WHERE tahun = :y0 {'y0': '2023'}",
    "retrieved_at": "2026-01-02T03:04:05Z",
}
ROWS = Aggregate(
    operation="sum",
    column="penduduk",
    header=("kabupaten", "kecamatan", "tahun", "penduduk"),
    rows=(
        ("Teluk Rekaan", "Lhok Fiksi", "2023", "41.250"),
        ("Teluk Rekaan", "Ujong Contoh", "2023", "28.730"),
        ("Teluk Rekaan", "Blang Khayal", "2023", "17.415"),
    ),
)
OF = "dari 3 baris tabel penduduk_kecamatan (kabupaten Teluk Rekaan, tahun 2023)"


class Recording:
    """The rule judge, keeping every item it was given."""

    def __init__(self) -> None:
        self.items: list[JudgeItem] = []
        self.judge = RuleJudge()

    async def __call__(self, items: Sequence[JudgeItem]) -> list[JudgeResult]:
        self.items.extend(items)
        return await self.judge.judge(items)


def _judge(stated: str, claim: str, aggregate: Aggregate | None = ROWS) -> tuple[str, JudgeItem]:
    judge = Recording()
    passage = Passage("P1", stated, kind="tool", identity=dict(IDENTITY), aggregate=aggregate)
    _, annotation = annotate(
        Annotator(judge, StaticFraming([])),
        [seg(claim, "fact", "paragraph", "P1")],
        [passage],
        query="Berapa total penduduk Teluk Rekaan 2023?",
    )
    return str(annotation.claims[0]["verdict"]), judge.items[0]


def test_a_record_is_judged_with_its_identity() -> None:
    record = "penduduk_kecamatan: kabupaten = Teluk Rekaan; kecamatan = Lhok Fiksi; tahun = 2023; "
    record += "penduduk = 41.250"
    verdict, item = _judge(record, record, aggregate=None)
    assert verdict == "supported"
    (passage,) = item.passages
    assert passage.text == record
    assert {k: passage.identity[k] for k in IDENTITY} == IDENTITY


def test_a_computed_total_is_supported_when_it_equals_the_recomputation() -> None:
    stated = f"Jumlah penduduk {OF} adalah 87.395 (sekitar 87,4 ribu)."
    verdict, item = _judge(stated, stated)
    assert verdict == "supported"
    (passage,) = item.passages
    assert "| Teluk Rekaan | Lhok Fiksi | 2023 | 41.250 |" in passage.text  # the rows, as read
    assert passage.identity["call"] == IDENTITY["call"]


def test_a_wrong_total_stated_by_the_tool_is_not_supported() -> None:
    # Before issue 21 the claim matched its own tool passage and was supported by construction.
    stated = f"Jumlah penduduk {OF} adalah 87.495."
    verdict, item = _judge(stated, stated)
    assert verdict == "unsupported"
    assert "87.495" not in item.passages[0].text


def test_a_figure_derived_from_the_rows_otherwise_is_not_supported() -> None:
    stated = f"Jumlah penduduk {OF} adalah 87.395."
    assert _judge(stated, "Selisih penduduk Lhok Fiksi dan Ujong Contoh adalah 12.520.")[0] == "unsupported"
    assert _judge(stated, f"Rata-rata penduduk {OF} adalah 29.131,67.")[0] == "unsupported"
