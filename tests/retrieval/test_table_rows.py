from __future__ import annotations

from retrieval.table_rows import RowNames
from retrieval.text import IndonesianAnalyzer

CELLS = [
    (0, "Belanja Modal"),
    (0, "Dinas Pekerjaan Umum Aceh"),
    (1, "Belanja Modal Jalan, Irigasi dan Jaringan"),
    (1, "Dinas Pekerjaan Umum Aceh"),
    (2, "Belanja Pegawai"),
    (2, "Dinas Pendidikan Aceh"),
    (3, "Belanja"),
    (3, "5.1.01"),
]


def _names() -> tuple[RowNames, IndonesianAnalyzer]:
    analyze = IndonesianAnalyzer()
    return RowNames(CELLS, analyze), analyze


def test_the_most_specific_named_cell_wins() -> None:
    names, analyze = _names()
    assert names.named(analyze("Berapa belanja modal dalam anggaran 2025?")) == [0]
    assert names.named(analyze("Berapa belanja modal jalan, irigasi dan jaringan?")) == [1]
    # an agency named in full names its rows
    assert names.named(analyze("Berapa anggaran Dinas Pekerjaan Umum Aceh?")) == [0, 1]


def test_one_word_cells_and_codes_name_nothing() -> None:
    names, analyze = _names()
    assert len(names) == 5  # "Belanja" and "5.1.01" are no names; a repeated cell is kept once
    assert names.named(analyze("Berapa belanja daerah 5.1.01?")) == []
    assert names.named(analyze("Berapa modal dasar perseroan?")) == []
