from __future__ import annotations

from typing import TypedDict

import pytest

from retrieval.types import Chunk
from serve_app.budget import RequestBudget
from tests.support.agents import FakeRetriever, FakeTable, make_chunk
from tests.support.answers import make_budget

BUDGET_HEADER = "Urusan | Tahun | Anggaran"
BUDGET_ROWS = [
    "Pendidikan | 2023 | Rp1.250.000.000.000",
    "Kesehatan | 2023 | Rp830.500.000.000",
    "Pendidikan | 2022 | Rp1.100.000.000.000",
    "Kesehatan | 2022 | Rp790.000.000.000",
    "Pekerjaan Umum | 2023 | Rp2.400.000.000.000",
]


class IdentityKwargs(TypedDict):
    """make_chunk's identity keywords, shared by all of one document's chunks."""

    title: str
    doc_type: str
    number: str
    year: int


def corpus_chunks() -> list[Chunk]:
    apba: IdentityKwargs = dict(title="Qanun Aceh tentang APBA", doc_type="Qanun", number="1", year=2023)
    uu_aceh: IdentityKwargs = dict(
        title="Undang-Undang tentang Pemerintahan Aceh", doc_type="UU", number="11", year=2006
    )
    table_rows = "\n".join([BUDGET_HEADER, *BUDGET_ROWS])
    return [
        make_chunk("apba", 0, table_rows, context=BUDGET_HEADER, kind="table", **apba),
        make_chunk(
            "apba",
            1,
            "Pasal 12 (1) Belanja urusan pendidikan dialokasikan paling sedikit 20% dari APBA. (2) Ketentuan "
            "lebih lanjut mengenai alokasi belanja diatur dengan Peraturan Gubernur.",
            section=("BAB IV", "Pasal 12"),
            legal_reference="Qanun Aceh Nomor 1 Tahun 2023, Pasal 12",
            **apba,
        ),
        make_chunk(
            "uu-11-2006",
            0,
            "Pasal 7 (1) Pemerintahan Aceh dan kabupaten/kota berwenang mengatur dan mengurus urusan "
            "pemerintahan dalam semua sektor publik kecuali urusan pemerintahan yang menjadi kewenangan "
            "Pemerintah.",
            section=("BAB IV", "Pasal 7"),
            legal_reference="UU Nomor 11 Tahun 2006, Pasal 7",
            **uu_aceh,
        ),
        make_chunk(
            "uu-11-2006",
            1,
            "Pasal 8 (1) Rencana persetujuan internasional yang berkaitan langsung dengan Pemerintahan Aceh "
            "yang dibuat oleh Pemerintah dilakukan dengan konsultasi dan pertimbangan DPRA.",
            section=("BAB IV", "Pasal 8"),
            legal_reference="UU Nomor 11 Tahun 2006, Pasal 8",
            **uu_aceh,
        ),
        make_chunk(
            "perppu-2-2008",
            0,
            "Undang-Undang ini mengubah ketentuan dalam Undang-Undang Nomor 11 Tahun 2006 tentang "
            "Pemerintahan Aceh mengenai calon perseorangan.",
            title="Perubahan atas UU Pemerintahan Aceh",
            doc_type="UU",
            number="2",
            year=2008,
        ),
        make_chunk(
            "perikanan",
            0,
            "Pasal 3 Pengelolaan perikanan dilaksanakan untuk meningkatkan taraf hidup nelayan kecil.",
            title="Undang-Undang tentang Perikanan",
            doc_type="UU",
            number="31",
            year=2004,
        ),
    ]


def budget_table() -> FakeTable:
    return FakeTable(
        columns=["Urusan", "Tahun", "Anggaran"],
        rows=[("apba-c0", [c.strip() for c in row.split("|")]) for row in BUDGET_ROWS],
    )


@pytest.fixture
def retriever() -> FakeRetriever:
    return FakeRetriever(
        corpus_chunks(),
        tables={"apba": budget_table()},
        articles={("UU", "11", 2006, "7"): ["uu-11-2006-c0"], ("UU", "31", 2004, "3"): ["perikanan-c0"]},
        cross={("UU", "11", 2006): [("perppu-2-2008-c0", "mengubah")]},
    )


@pytest.fixture
def budget() -> RequestBudget:
    return make_budget()
