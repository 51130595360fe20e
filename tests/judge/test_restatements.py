"""Restatements the rule judge must accept, each beside the wrong claim of the same kind it must still reject:
a prohibition or a negated modal before a bound, list lead-ins, OCR-damaged entity words. Invented passages
(invented qanun, regions and amounts) written for these tests."""

from __future__ import annotations

import pytest

from language.qualifiers import qualifiers
from tests.support.claims import ClaimCase, claim_cases

PROHIBITED = (
    "(2) Iuran pengelolaan pasar yang dipungut dari setiap pedagang di Kabupaten Lhok Sembilan dilarang "
    "melebihi Rp 75.000,00 (tujuh puluh lima ribu rupiah) dan dari koperasi pasar tidak boleh lebih dari "
    "Rp420.000,00 (empat ratus dua puluh ribu rupiah) setiap bulan."
)

NEGATED_BOUNDS = [
    *claim_cases(
        "prohibited",
        PROHIBITED,
        ("Iuran pengelolaan pasar dari setiap pedagang paling banyak Rp75 ribu setiap bulan.", "supported"),
        ("Iuran pengelolaan pasar dari koperasi pasar maksimal Rp420 ribu setiap bulan.", "supported"),
        # the bound flips to a maximum, never a minimum, and the figure itself must still agree
        ("Iuran pengelolaan pasar dari setiap pedagang paling sedikit Rp75 ribu per bulan.", "unsupported"),
        ("Iuran pengelolaan pasar dari koperasi pasar lebih dari Rp420 ribu setiap bulan.", "unsupported"),
        ("Iuran pengelolaan pasar dari setiap pedagang paling banyak Rp57 ribu setiap bulan.", "unsupported"),
    ),
]


@pytest.mark.parametrize("case", NEGATED_BOUNDS)
def test_negated_bounds(case: ClaimCase) -> None:
    case.check()


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("dilarang melebihi ", "max"),
        ("tidak boleh lebih dari ", "max"),
        ("tidak dapat kurang dari ", "min"),
        ("dilarang kurang dari ", "min"),
        ("dapat lebih dari ", "gt"),  # a modal alone negates nothing
        ("boleh kurang dari ", "lt"),
    ],
)
def test_negation_before_a_bound(text: str, bound: str) -> None:
    assert qualifiers(text + "12 hari", len(text))[1] == bound


RP_WITH_DOT = (
    "Retribusi izin keramaian di Kota Ujong Meulaboh ditetapkan paling banyak Rp.45.000.000,00 (empat puluh "
    "lima juta rupiah) untuk setiap kegiatan."
)
PERCENT_AS_O_SLASH_O = (
    "Tarif pajak reklame papan ditetapkan paling rendah 2Oo/o (dua puluh persen) dan paling tinggi 35% "
    "(tiga puluh lima persen) dari nilai sewa reklame."
)

NOTATIONS = [
    *claim_cases(
        "rp_with_dot",
        RP_WITH_DOT,
        ("Retribusi izin keramaian ditetapkan paling banyak Rp45 juta untuk setiap kegiatan.", "supported"),
        ("Retribusi izin keramaian ditetapkan paling sedikit Rp45 juta per kegiatan.", "unsupported"),
        ("Retribusi izin keramaian ditetapkan paling banyak Rp54 juta untuk setiap kegiatan.", "unsupported"),
        ("Retribusi izin keramaian ditetapkan paling banyak 45 juta orang.", "unsupported"),
    ),
    *claim_cases(
        "o_slash_o",
        PERCENT_AS_O_SLASH_O,
        ("Tarif pajak reklame papan paling rendah 20% dan paling tinggi 35% dari nilai sewa.", "supported"),
        ("Tarif pajak reklame papan paling tinggi 20% dari nilai sewa reklame.", "unsupported"),
        ("Tarif pajak reklame papan paling rendah 25% dari nilai sewa reklame.", "unsupported"),
    ),
]


@pytest.mark.parametrize("case", NOTATIONS)
def test_damaged_or_dotted_notations(case: ClaimCase) -> None:
    case.check()


LEAD_IN_TOTAL = (
    "(4) Dana Cadangan Pemulihan Pesisir sebagaimana dimaksud pada ayat (1) huruf b direncanakan sebesar "
    "Rp9.400.000.000,00 (sembilan miliar empat ratus juta rupiah), dengan rincian sebagai berikut:\n"
    "a. penanaman bakau sebesar Rp5.100.000.000,00 (lima miliar seratus juta rupiah);\n"
    "b. pemecah ombak sebesar Rp3.200.000.000,00 (tiga miliar dua ratus juta rupiah); dan\n"
    "c. pelatihan nelayan sebesar Rp1.100.000.000,00 (satu miliar seratus juta rupiah)."
)

LEAD_INS = [
    *claim_cases(
        "lead_in_total",
        LEAD_IN_TOTAL,
        ("Dari Dana Cadangan Pemulihan Pesisir, penanaman bakau sebesar Rp5,1 miliar.", "supported"),
        ("Dana Cadangan Pemulihan Pesisir untuk pemecah ombak direncanakan Rp3,2 miliar.", "supported"),
        # the lead-in names the whole, never an item: the item's own words must still be right
        ("Dari Dana Cadangan Pemulihan Pesisir, pemecah ombak sebesar Rp5,1 miliar.", "unsupported"),
        ("Dana Cadangan Pemulihan Pesisir direncanakan sebesar Rp5,1 miliar.", "unsupported"),
        ("Dari Dana Cadangan Pemulihan Pesisir, pelatihan nelayan sebesar Rp3,2 miliar.", "unsupported"),
        ("Dari Dana Cadangan Pemulihan Hutan, penanaman bakau sebesar Rp5,1 miliar.", "unsupported"),
    ),
]


@pytest.mark.parametrize("case", LEAD_INS)
def test_list_lead_in_names_the_whole(case: ClaimCase) -> None:
    case.check()


PER_PERIOD = (
    "Atas keterlambatan penyetoran retribusi pelabuhan perikanan Kuala Bireun dikenakan denda sebesar 3 % "
    "(tiga persen) sebulan, paling lama 12 (dua belas) bulan sejak jatuh tempo."
)
TWO_DURATIONS = (
    "(1) Izin usaha tambak garam berlaku untuk jangka waktu 5 (lima) tahun.\n"
    "(2) Izin usaha tambak garam dapat diperpanjang untuk jangka waktu 3 (tiga) tahun."
)
RATE_THEN_DURATION = (
    "Pinjaman daerah dari bank milik Kabupaten Teluk Rameune dikenakan bunga 1 % (satu persen) sebulan "
    "atas sisa pokok untuk jangka waktu paling lama 6 (enam) bulan."
)

PERIODS_AND_DURATIONS = [
    *claim_cases(
        "per_period",
        PER_PERIOD,
        ("Keterlambatan penyetoran retribusi didenda 3% per bulan paling lama 12 bulan.", "supported"),
        ("Keterlambatan penyetoran retribusi didenda 3% per tahun paling lama 12 bulan.", "unsupported"),
        ("Keterlambatan penyetoran retribusi didenda 3% per bulan paling lama 12 tahun.", "unsupported"),
        ("Keterlambatan penyetoran retribusi didenda 3% per bulan paling lama 18 bulan.", "unsupported"),
    ),
    *claim_cases(
        "two_durations",
        TWO_DURATIONS,
        ("Izin usaha tambak garam berlaku 5 tahun.", "supported"),
        ("Izin usaha tambak garam dapat diperpanjang 3 tahun.", "supported"),
        # "jangka waktu" names no duration: what tells the two apart still must
        ("Izin usaha tambak garam dapat diperpanjang 5 tahun.", "unsupported"),
        ("Izin usaha tambak garam berlaku untuk jangka waktu 3 tahun.", "unsupported"),
    ),
    *claim_cases(
        "rate_then_duration",
        RATE_THEN_DURATION,
        ("Pinjaman daerah dikenakan bunga 1% per bulan paling lama 6 bulan.", "supported"),
        ("Pinjaman daerah dikenakan bunga 1% per bulan paling lama 6 tahun.", "unsupported"),
        ("Pinjaman daerah dikenakan bunga 1% per bulan paling lama 8 bulan.", "unsupported"),
        ("Pinjaman daerah dikenakan bunga 1% per tahun paling lama 6 bulan.", "unsupported"),
    ),
]


@pytest.mark.parametrize("case", PERIODS_AND_DURATIONS)
def test_per_period_and_durations(case: ClaimCase) -> None:
    case.check()


OPEN_RANGE = (
    "Tarif retribusi persampahan bagi usaha dengan omzet di atas Rp20.000.000,00 (dua puluh juta rupiah) "
    "sampai dengan Rp80.000.000,00 (delapan puluh juta rupiah) setiap bulan di Kota Lamkuta adalah 4% "
    "(empat persen)."
)

RANGES = [
    *claim_cases(
        "open_range",
        OPEN_RANGE,
        ("Usaha dengan omzet di atas Rp20 juta sampai Rp80 juta setiap bulan dikenai tarif 4%.", "supported"),
        ("Usaha dengan omzet di atas Rp20 juta hingga Rp80 juta setiap bulan dikenai tarif 4%.", "supported"),
        # the open lower end stays open, and each end keeps its side
        ("Usaha dengan omzet paling sedikit Rp20 juta setiap bulan dikenai tarif 4%.", "unsupported"),
        ("Usaha dengan omzet di atas Rp80 juta setiap bulan dikenai tarif 4%.", "unsupported"),
        ("Usaha dengan omzet di atas Rp20 juta sampai Rp90 juta sebulan dikenai tarif 4%.", "unsupported"),
    ),
]


@pytest.mark.parametrize("case", RANGES)
def test_ranges_with_an_open_lower_end(case: ClaimCase) -> None:
    case.check()


SCANNED_BOUND = (
    "Tarif retribusi tempat pelelangan ikan di Pelabuhan Kuala Seunong ditetapkan paling tingqi 3% (tiga "
    "persen) dari nilai transaksi dan paling rendab 1% (satu persen) bagi nelayan kecil."
)

SCANNED_BOUNDS = [
    *claim_cases(
        "scanned_bound",
        SCANNED_BOUND,
        ("Tarif retribusi tempat pelelangan ikan paling tinggi 3% dari nilai transaksi.", "supported"),
        ("Tarif retribusi tempat pelelangan ikan bagi nelayan kecil paling rendah 1%.", "supported"),
        # the damaged word is read as the one bound it is near, never as its opposite
        ("Tarif retribusi tempat pelelangan ikan paling rendah 3% dari nilai transaksi.", "unsupported"),
        ("Tarif retribusi tempat pelelangan ikan bagi nelayan kecil paling tinggi 1%.", "unsupported"),
    ),
]


@pytest.mark.parametrize("case", SCANNED_BOUNDS)
def test_scanned_bound_words(case: ClaimCase) -> None:
    case.check()


@pytest.mark.parametrize("text", ["paling tengah ", "paling lamu ", "paling ", "palinq tingqi "])
def test_only_a_near_paling_bound_is_read(text: str) -> None:
    assert qualifiers(text + "5 hari", len(text))[1] is None


EITHER_WAY = (
    "(3) Ketua Majelis Adat Gampong Lamseupeung dapat dipilih kembali paling banyak 2 (dua) kali masa bakti, "
    "berturut-turut maupun tidak berturut-turut."
)
DENIED_RUN = (
    "(3) Ketua Majelis Adat Gampong Lamseupeung dapat dipilih kembali paling banyak 2 (dua) kali masa bakti "
    "dan tidak dapat dipilih berturut-turut."
)

WHETHER_OR_NOT = [
    *claim_cases(
        "either_way",
        EITHER_WAY,
        (
            "Ketua Majelis Adat dapat dipilih lagi paling banyak dua kali, berturut-turut atau tidak.",
            "supported",
        ),
        ("Ketua Majelis Adat Gampong dapat dipilih kembali paling banyak 3 kali masa bakti.", "unsupported"),
        (
            "Ketua Majelis Adat Gampong dapat dipilih kembali paling banyak dua kali, tidak berturut-turut.",
            "unsupported",
        ),
    ),
    *claim_cases(
        "denied_run",
        DENIED_RUN,
        # "atau tidak" in the claim does not undo the passage's own denial
        (
            "Ketua Majelis Adat dapat dipilih lagi paling banyak dua kali, berturut-turut atau tidak.",
            "unsupported",
        ),
    ),
]


@pytest.mark.parametrize("case", WHETHER_OR_NOT)
def test_whether_or_not_denies_nothing(case: ClaimCase) -> None:
    case.check()


MALFORMED = (
    "(1) Pendapatan Kabupaten Simpang Ulee diperkirakan bertambah dengan Rp.3.000.000.000,00 yang terdiri "
    "dari:\na. Pendapatan Asli bertambah dengan Rp.12.345,000.000,00 dan b. Pendapatan Transfer berkurang "
    "dengan Rp.9.345.000.000,00."
)

UNREADABLE = [
    *claim_cases(
        "malformed_amount",
        MALFORMED,
        ("Pendapatan Transfer Kabupaten Simpang Ulee berkurang dengan Rp9,345 miliar.", "supported"),
        # an amount no figure reads leaves its direction unchecked: the claim cannot be supported
        (
            "Pendapatan Asli berkurang dengan Rp.12.345,000.000,00 dan Pendapatan Transfer berkurang dengan "
            "Rp9,345 miliar.",
            "figure_mismatch",
        ),
    ),
]


@pytest.mark.parametrize("case", UNREADABLE)
def test_an_unreadable_amount_is_never_supported(case: ClaimCase) -> None:
    case.check()
