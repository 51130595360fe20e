from __future__ import annotations

import pytest

from retrieval.legal import (
    find_references,
    format_ref,
    format_reference,
    identity_from_title,
    relation_of,
)

# (text, [(doc_type, number, year, pasal, ayat, huruf, issuer, matched text)])
CASES = [
    (
        "Undang-Undang Nomor 11 Tahun 2006",
        [("UU", "11", 2006, None, None, None, "Republik Indonesia", "Undang-Undang Nomor 11 Tahun 2006")],
    ),
    ("lihat UU No. 11/2006.", [("UU", "11", 2006, None, None, None, "Republik Indonesia", "UU No. 11/2006")]),
    (
        "Pasal 183 UU 11/2006",
        [("UU", "11", 2006, "183", None, None, "Republik Indonesia", "Pasal 183 UU 11/2006")],
    ),
    (
        "Qanun Aceh Nomor 1 Tahun 2023",
        [("Qanun", "1", 2023, None, None, None, "Aceh", "Qanun Aceh Nomor 1 Tahun 2023")],
    ),
    (
        "dalam Pasal 183 ayat (1) huruf b Undang-Undang Nomor 11 Tahun 2006 tentang",
        [
            (
                "UU",
                "11",
                2006,
                "183",
                "1",
                "b",
                "Republik Indonesia",
                "Pasal 183 ayat (1) huruf b Undang-Undang Nomor 11 Tahun 2006",
            )
        ],
    ),
    # OCR noise of the real corpus: O for 0, a line wrap inside "Undang-Undang", l for 1
    (
        "Undang- Undang Nomor 2 Tahun 2O2O tentang",
        [("UU", "2", 2020, None, None, None, "Republik Indonesia", "Undang- Undang Nomor 2 Tahun 2O2O")],
    ),
    (
        "Peraturan Pemerintah Nomor l2 Tahun 2019",
        [
            (
                "PP",
                "12",
                2019,
                None,
                None,
                None,
                "Republik Indonesia",
                "Peraturan Pemerintah Nomor l2 Tahun 2019",
            )
        ],
    ),
    (
        "UNDANG UNDANG REPUBLIK INDONESIA NOMOR 11 TAHUN 2006 TENTANG PEMERINTAHAN ACEH",
        [
            (
                "UU",
                "11",
                2006,
                None,
                None,
                None,
                "Republik Indonesia",
                "UNDANG UNDANG REPUBLIK INDONESIA NOMOR 11 TAHUN 2006",
            )
        ],
    ),
    (
        "Undang-undang Nomor 19 Prp tahun 1960 terhadap",
        [("UU", "19", 1960, None, None, None, "Republik Indonesia", "Undang-undang Nomor 19 Prp tahun 1960")],
    ),
    (
        "Qanun Provinsi Nanggroe Aceh Darussalam Nomor 3 Tahun 2005 tentang",
        [
            (
                "Qanun",
                "3",
                2005,
                None,
                None,
                None,
                "Aceh",
                "Qanun Provinsi Nanggroe Aceh Darussalam Nomor 3 Tahun 2005",
            )
        ],
    ),
    (
        "Peraturan Menteri Keuangan Nomor 5/PMK.07/2020",
        [
            (
                "Permen",
                "5/PMK.07",
                2020,
                None,
                None,
                None,
                "Keuangan",
                "Peraturan Menteri Keuangan Nomor 5/PMK.07/2020",
            )
        ],
    ),
    (
        "Pergub Aceh No 5 Tahun 2021",
        [("Pergub", "5", 2021, None, None, None, "Aceh", "Pergub Aceh No 5 Tahun 2021")],
    ),
    (
        "Peraturan Daerah Kabupaten Aceh Besar Nomor 3 Tahun 2010",
        [
            (
                "Perda",
                "3",
                2010,
                None,
                None,
                None,
                "Kabupaten Aceh Besar",
                "Peraturan Daerah Kabupaten Aceh Besar Nomor 3 Tahun 2010",
            )
        ],
    ),
    (
        "Pasal 18B Undang-Undang Dasar Negara Republik Indonesia Tahun 1945",
        [
            (
                "UUD",
                None,
                1945,
                "18B",
                None,
                None,
                "Republik Indonesia",
                "Pasal 18B Undang-Undang Dasar Negara Republik Indonesia Tahun 1945",
            )
        ],
    ),
    ("sebagaimana dimaksud dalam Pasal 12", [(None, None, None, "12", None, None, None, "Pasal 12")]),
    # Not references: a gazette number, a regulation without number
    ("Lembaran Negara Republik Indonesia Tahun 2006 Nomor 62", []),
    ("Undang-Undang tentang Pemerintahan Aceh", []),
    ("sebesar Rpl.963.482.528.000.000,00", []),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_find_references(text: str, expected: list[tuple[object, ...]]) -> None:
    refs = find_references(text)
    got = [
        (r.doc_type, r.number, r.year, r.pasal, r.ayat, r.huruf, r.issuer, text[r.start : r.end])
        for r in refs
    ]
    assert got == expected


def test_several_articles_only_the_last_takes_the_regulation() -> None:
    text = (
        "Pasal 1 ayat (1), Pasal 5 ayat (1), Pasal 18, dan Pasal 20 Undang-Undang Dasar Negara "
        "Republik Indonesia Tahun 1945;"
    )
    refs = find_references(text)
    assert [(r.pasal, r.ayat, r.doc_type) for r in refs] == [
        ("1", "1", None),
        ("5", "1", None),
        ("18", None, None),
        ("20", None, "UUD"),
    ]


def test_format_reference() -> None:
    assert (
        format_reference("Qanun", "1", 2023, issuer="Aceh", pasal="12", ayat="3")
        == "Qanun Aceh Nomor 1 Tahun 2023, Pasal 12 ayat (3)"
    )
    assert (
        format_reference("UU", "11", 2006, issuer="Republik Indonesia") == "Undang-Undang Nomor 11 Tahun 2006"
    )
    assert (
        format_reference(None, title="Laporan", pasal="Penjelasan Pasal 5") == "Laporan, Penjelasan Pasal 5"
    )
    assert format_reference(None) is None
    ref = find_references("Pasal 183 ayat (1) huruf b UU 11/2006")[0]
    assert format_ref(ref) == "Undang-Undang Nomor 11 Tahun 2006, Pasal 183 ayat (1) huruf b"


def test_identity_from_title() -> None:
    assert identity_from_title(
        "PERATURAN PEMERINTAH REPUBLIK INDONESIA NOMOR 3 TAHUN 2015 TENTANG KEWENANGAN"
    ) == ("PP", "3", 2015, "Republik Indonesia")
    assert identity_from_title("Statistik Kemiskinan Aceh") == (None, None, None, None)


@pytest.mark.parametrize(
    ("text", "section", "relation"),
    [
        (
            "Pada saat Undang-Undang ini mulai berlaku, Undang-Undang Nomor 18 Tahun 2001 tentang Otonomi "
            "dicabut dan dinyatakan tidak berlaku.",
            None,
            "revokes",
        ),
        ("Undang-Undang ini mencabut Undang-Undang Nomor 18 Tahun 2001.", None, "revokes"),
        ("UNDANG-UNDANG TENTANG PERUBAHAN ATAS UNDANG-UNDANG NOMOR 11 TAHUN 2006", None, "amends"),
        (
            "Undang-Undang Nomor 32 Tahun 2004 sebagaimana telah diubah terakhir dengan "
            "Undang-Undang Nomor 12 Tahun 2008",
            "Mengingat",
            "as_amended",
        ),
        ("2. Undang-Undang Nomor 11 Tahun 2006 tentang Pemerintahan Aceh;", "Mengingat", "legal_basis"),
        ("bahwa untuk melaksanakan Pasal 270 Undang-Undang Nomor 11 Tahun 2006", "Menimbang", "considers"),
        ("sesuai dengan Undang-Undang Nomor 11 Tahun 2006", ("BAB I"), "cites"),
    ],
)
def test_relation_of(text: str, section: str | None, relation: str) -> None:
    ref = [r for r in find_references(text) if r.names_document][-1]
    assert relation_of(text, ref, section) == relation


def test_a_type_year_number_path_names_the_regulation() -> None:
    from retrieval.documents import with_path_identity
    from retrieval.legal import identity_from_path
    from retrieval.types import DocumentIdentity

    assert identity_from_path("uu/2016/18.md") == ("UU", "18", 2016)
    assert identity_from_path("corpus/pp/2015/118.md") == ("PP", "118", 2015)
    assert identity_from_path("uu/uu_11_2006.md") is None
    assert identity_from_path("data/2016/18.md") is None
    # OCR broke the title's number ("NOMOR 1 8"): the path's identity wins, the title stays
    broken = DocumentIdentity(title="18")
    fixed = with_path_identity(broken, "uu/2016/18.md")
    assert (fixed.doc_type, fixed.number, fixed.year) == ("UU", "18", 2016)
    assert fixed.issuer == "Republik Indonesia"
    assert fixed.title == "18"
    right = DocumentIdentity("UU 18/2016", "UU", "18", 2016, "Republik Indonesia")
    assert with_path_identity(right, "uu/2016/18.md") is right
