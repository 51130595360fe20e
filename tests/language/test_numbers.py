"""Figure extraction and equality: every notation, both languages, references, OCR noise (table-driven)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from language.numbers import Figure, extract_figures, extract_references, figures_equal


def quantities(text: str, lang: str | None = None) -> list[Figure]:
    return [f for f in extract_figures(text, lang=lang) if f.kind not in ("year", "period", "date")]


def one(text: str, lang: str | None = None) -> Figure:
    found = quantities(text, lang)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "lang", "value", "kind", "unit"),
    [
        # digit grouping in both conventions
        ("sebesar Rp1.500.000,75", None, "1500000.75", "amount", "IDR"),
        ("a total of Rp 1,500,000.75", "en", "1500000.75", "amount", "IDR"),
        ("sebanyak 1.500 orang", "id", "1500", "count", "person"),
        ("about 1.500 people", "en", "1.5", "count", "person"),
        ("1,500 people attended", "en", "1500", "count", "person"),
        ("naik 1,5 persen", "id", "1.5", "percent", None),
        ("Rp1.500", "en", "1500", "amount", "IDR"),
        ("tumbuh 2.5 persen", "id", "2.5", "percent", None),
        # scale words and abbreviations
        ("Rp871,67 miliar", None, "871670000000", "amount", "IDR"),
        ("Rp 5 milyar", None, "5000000000", "amount", "IDR"),
        ("Rp5 M", None, "5000000000", "amount", "IDR"),
        ("Rp 15,58 Triliun", None, "15580000000000", "amount", "IDR"),
        ("Rp 2 T", None, "2000000000000", "amount", "IDR"),
        ("Rp250 rb", None, "250000", "amount", "IDR"),
        ("Rp3,5 jt", None, "3500000", "amount", "IDR"),
        ("2,02 kuadriliun rupiah", None, "2020000000000000", "amount", "IDR"),
        ("IDR 871.67 billion", "en", "871670000000", "amount", "IDR"),
        ("US$1.5 million", "en", "1500000", "amount", "USD"),
        ("USD 2 trillion", "en", "2000000000000", "amount", "USD"),
        ("10k residents", "en", "10000", "count", "person"),
        ("2 juta ha", None, "2000000", "count", "ha"),
        # percent and per-mille
        ("sebesar 20%", None, "20", "percent", None),
        ("9 persen", None, "9", "percent", None),
        ("3.5 percent", "en", "3.5", "percent", None),
        ("angka kematian 5‰", None, "5", "permille", None),
        ("2 permil", None, "2", "permille", None),
        # units
        ("sepanjang 12 km", None, "12", "count", "km"),
        ("120 hektare sawah", None, "120", "count", "ha"),
        ("5.000 ton beras", None, "5000", "count", "ton"),
        ("30 unit kendaraan", None, "30", "count", "unit"),
        ("233.360 jiwa", None, "233360", "count", "person"),
        ("Rp 5.000 per kg", None, "5000", "amount", "IDR/kg"),
        ("60 km per jam", None, "60", "count", "km/hour"),
    ],
)
def test_notation(text: str, lang: str | None, value: str, kind: str, unit: str | None) -> None:
    figure = one(text, lang)
    assert figure.value == Decimal(value)
    assert (figure.kind, figure.unit) == (kind, unit)


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        (
            "Rp2.021.223.677.000.000,00 (dua kuadriliun dua puluh satu triliun dua ratus dua puluh tiga "
            "miliar enam ratus tujuh puluh tujuh juta rupiah)",
            "2021223677000000",
            "IDR",
        ),
        ("paling sedikit 15 (lima belas) tahun", "15", "year"),
        ("20% (dua puluh perseratus)", "20", None),
        ("sebesar 2,5% (dua koma lima persen)", "2.5", None),
    ],
)
def test_statute_spelled_twin_equals_digits(text: str, value: str, unit: str | None) -> None:
    digits, spelled = quantities(text)
    assert spelled.spelled and not digits.spelled
    assert digits.value == spelled.value == Decimal(value)
    assert digits.unit == spelled.unit == unit
    assert digits.bound == spelled.bound


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("seratus dua puluh sembilan juta enam ratus dua puluh satu ribu rupiah", "129621000"),
        ("sebelas ribu orang", "11000"),
        ("seribu sembilan ratus empat puluh lima", "1945"),
        ("twenty-one thousand five hundred people", "21500"),
        ("Empat sahabat", "4"),
    ],
)
def test_spelled_numbers(text: str, value: str) -> None:
    assert one(text).value == Decimal(value)


@pytest.mark.parametrize(
    "text", ["salah satu album terlarisnya", "satu-satunya jalan", "Kendaraan Bermotor Beroda Dua"]
)
def test_idioms_and_names_are_not_counts(text: str) -> None:
    assert quantities(text) == []


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Tahun Anggaran 2023", "2023"),
        ("TA. 2025", "2025"),
        ("APBN TAHUN ANGGARAN 1995/96", "1995/1996"),
        ("semester I tahun 2023", "2023-S1"),
        ("semester kedua 2022", "2022-S2"),
        ("triwulan III 2024", "2024-Q3"),
        ("Q3 2024", "2024-Q3"),
        ("first half of 2023", "2023-S1"),
        ("bulan Maret 2020", "2020-03"),
        ("31 Desember 2023", "2023-12-31"),
        ("January 1, 2023", "2023-01-01"),
        ("periode 2019–2024", "2019..2024"),
        ("tahun 2020 sampai dengan tahun 2024", "2020..2024"),
        ("anggaran pendidikan 2023", "2023"),
    ],
)
def test_periods(text: str, key: str) -> None:
    periods = [f.period for f in extract_figures(text) if f.kind in ("year", "period", "date")]
    assert periods == [key]


@pytest.mark.parametrize(
    "text",
    [
        "sebagaimana dimaksud dalam Pasal 2",
        "Pasal 5, 6, dan 7 serta ayat (2) huruf a",
        "Undang-Undang Nomor 17 Tahun 2003 tentang Keuangan Negara",
        "UU 28/2022 dan PP 12/2019",
        "Lembaran Negara Republik Indonesia Tahun 2003 Nomor 47",
        "Lampiran II BAB IV",
        "Law No. 28 of 2022, Article 5",
        "(1) Penerimaan negara",
        "Undang-Undang Dasar Negara Republik Indonesia Tahun 1945",
    ],
)
def test_references_are_never_quantities(text: str) -> None:
    assert extract_figures(text) == []
    assert extract_references(text)


def test_codes_are_not_numbers() -> None:
    assert quantities("kode rekening 5.1.02.01.01.0024, COVID-19, A4, ke-2") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Rpl.963.482.528.000.000,00", "1963482528000000.00"),  # l for 1 after Rp (uu/2022/28.md)
        ("RpS.076.940.000.000,00", "5076940000000.00"),  # S for 5 after Rp
    ],
)
def test_ocr_noise_repaired_where_unambiguous(text: str, value: str) -> None:
    figure = one(text)
    assert figure.value == Decimal(value) and figure.ocr_repaired


def test_ocr_year_and_spelled_words() -> None:
    assert [f.period for f in extract_figures("pada tahun 2O2O")] == ["2020"]
    spelled = one("(dua triliun delapan ratus sepuluh rniliar seratus juta rupiah)")
    assert spelled.value == Decimal("2810100000000")


def test_ocr_repair_contradicted_by_the_spelled_twin_is_dropped() -> None:
    found = quantities("Rpl.000.000,00 (dua juta rupiah)")
    assert [f.value for f in found] == [Decimal(2000000)]


@pytest.mark.parametrize(
    "text", ["Rp19.79a.677 .77 L,OO", "nilai 1B.000", "tahun 20t4", "RpO.5", "4G dan 3D"]
)
def test_ambiguous_ocr_is_left_unparsed(text: str) -> None:
    assert quantities(text) == []  # seen in the corpus (pp/2016/16.md); never guessed


@pytest.mark.parametrize(
    ("claim", "source", "equal"),
    [
        ("Rp871,67 miliar", "Rp871.667.219.294", True),
        ("Rp871,68 miliar", "Rp871.667.219.294", False),
        ("Rp872 miliar", "Rp871.667.219.294", False),
        ("sekitar Rp872 miliar", "Rp871.667.219.294", True),
        ("kurang lebih Rp872 miliar", "Rp871.667.219.294", True),
        ("about IDR 872 billion", "Rp871.667.219.294", True),
        ("Rp871,67 juta", "Rp871.667.219.294", False),
        ("Rp2.021,22 triliun", "Rp2.021.223.677.000.000,00", True),
        ("sekitar 2,02 kuadriliun rupiah", "Rp2.021.223.677.000.000,00", True),
        ("sekitar Rp2 triliun", "Rp2.021.223.677.000.000,00", False),
        ("Rp871.670.000.000", "Rp871,67 miliar", True),
        ("Rp871.667.000.000", "Rp871,67 miliar", False),
        ("Rp6 miliar", "Rp6.000.000.000,00", True),
        ("9%", "9,2 persen", False),
        ("sekitar 9%", "9,2 persen", True),
        ("9,2%", "9,24 persen", True),
        ("US$5 miliar", "Rp5 miliar", False),
        ("Rp5 miliar", "sekitar Rp5 miliar", False),
        ("paling sedikit 15 tahun", "paling sedikit 15 (lima belas) tahun", True),
        ("paling banyak 15 tahun", "paling sedikit 15 tahun", False),
    ],
)
def test_equality_at_the_claims_precision(claim: str, source: str, equal: bool) -> None:
    assert figures_equal(one(claim), quantities(source)[0]) is equal


def test_ratios_keep_their_written_orientation() -> None:
    (one_two,) = quantities("rasio 1:2")
    (two_four,) = quantities("rasio 2 : 4")
    (two_one,) = quantities("3 berbanding 1 dan 2:1")[1:]
    assert figures_equal(one_two, two_four)
    assert not figures_equal(one_two, two_one)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a duration written as a count of time spans is their product, the bound before the factor its own
        ("diperiksa paling lambat 2x24 (dua kali dua puluh empat) jam sejak", [("hour", 48, "max")]),
        ("ditahan tidak lebih dari 3 x 24 jam.", [("hour", 72, "max")]),
        ("dibayar dalam 2×7 hari kerja", [("day", 14, None)]),
        ("papan berukuran 3x4 meter", []),  # not a duration: left unread, as before
    ],
)
def test_a_count_of_time_spans_is_their_product(
    text: str, expected: list[tuple[str, int, str | None]]
) -> None:
    found = [(f.unit, int(f.value), f.bound) for f in quantities(text)]
    assert found == expected
