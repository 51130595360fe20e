"""Property-based checks: equivalent notations parse equal, one-thing perturbations are caught, references are
never quantities, and extraction never fails on arbitrary text."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from judge.rules import check_claim
from judge.types import JudgePassage
from language.numbers import Figure, extract_figures, figures_equal, scale_differs

SCALES = {6: ("juta", "million"), 9: ("miliar", "billion"), 12: ("triliun", "trillion")}
amounts = st.integers(min_value=10**6, max_value=10**15 - 1)


def group(value: int, sep: str) -> str:
    return f"{value:,}".replace(",", sep)


def scaled(value: int, exp: int, decimals: int, lang: str) -> str:
    number = (Decimal(value) / Decimal(10) ** exp).quantize(
        Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP
    )
    integer, _, fraction = f"{number:f}".partition(".")
    grouped = group(int(integer), "." if lang == "id" else ",")
    return grouped + (("," if lang == "id" else ".") + fraction if fraction else "")


def exponent(value: int) -> int:
    return max(exp for exp in SCALES if value >= 10**exp)


def amount(text: str) -> Figure:
    found = [f for f in extract_figures(text) if f.kind == "amount"]
    assert len(found) == 1, (text, found)
    return found[0]


@settings(max_examples=150, deadline=None)
@given(amounts)
def test_every_full_notation_parses_to_the_same_value(value: int) -> None:
    notations = [
        f"sebesar Rp{group(value, '.')}",
        f"sebesar Rp{group(value, '.')},00",
        f"sebesar Rp {group(value, ',')}",
        f"sebesar IDR {group(value, ',')}.00",
        f"sebesar {group(value, '.')} rupiah",
    ]
    for text in notations:
        assert amount(text).value == value, text


@settings(max_examples=150, deadline=None)
@given(amounts, st.sampled_from(["id", "en"]))
def test_scaled_notations_equal_the_full_amount(value: int, lang: str) -> None:
    exp = exponent(value)
    source = amount(f"Rp{group(value, '.')},00")
    word = SCALES[exp][0 if lang == "id" else 1]
    prefix = "Rp" if lang == "id" else "IDR "
    assert figures_equal(amount(f"{prefix}{scaled(value, exp, 2, lang)} {word}"), source)
    if exp > 6:  # the same value under the next smaller scale word
        lower = SCALES[exp - 3][0 if lang == "id" else 1]
        assert figures_equal(amount(f"{prefix}{scaled(value, exp - 3, 2, lang)} {lower}"), source)
    whole = f"{prefix}{scaled(value, exp, 0, lang)} {word}"
    marker = "sekitar" if lang == "id" else "about"
    assert figures_equal(amount(f"{marker} {whole}"), source)
    lossy = Decimal(scaled(value, exp, 0, "en").replace(",", "")) * 10**exp != value
    assert figures_equal(amount(whole), source) is not lossy


@settings(max_examples=150, deadline=None)
@given(amounts, st.data())
def test_one_thing_perturbations_are_caught(value: int, data: st.DataObject) -> None:
    exp = exponent(value)
    source = amount(f"Rp{group(value, '.')},00")
    mantissa = scaled(value, exp, 2, "id")
    word = SCALES[exp][0]
    other_word = SCALES[data.draw(st.sampled_from([e for e in SCALES if e != exp]))][0]
    wrong_scale = amount(f"Rp{mantissa} {other_word}")
    assert not figures_equal(wrong_scale, source) and scale_differs(wrong_scale, source)
    digits = [i for i, ch in enumerate(mantissa) if ch.isdigit()]
    position = data.draw(st.sampled_from(digits[1:]))
    changed = str((int(mantissa[position]) + data.draw(st.integers(1, 9))) % 10)
    wrong_digit = mantissa[:position] + changed + mantissa[position + 1 :]
    assert not figures_equal(amount(f"Rp{wrong_digit} {word}"), source)
    assert not figures_equal(amount(f"US${mantissa} {word}"), source)


PASSAGE = "Pada Dinas Pendidikan Aceh, belanja pegawai Tahun Anggaran {year} dianggarkan sebesar Rp{full},00."


@settings(max_examples=60, deadline=None)
@given(amounts, st.integers(min_value=2000, max_value=2030))
def test_claim_level_perturbations(value: int, year: int) -> None:
    passage = JudgePassage("P1", PASSAGE.format(year=year, full=group(value, ".")))
    exp = exponent(value)
    note = f"Rp{scaled(value, exp, 2, 'id')} {SCALES[exp][0]}"
    claim = "Belanja pegawai Dinas Pendidikan Aceh tahun {year} {verb} {note}."
    assert check_claim(claim.format(year=year, verb="sebesar", note=note), [passage]).verdict == "supported"
    for changed in (
        claim.format(year=year + 1, verb="sebesar", note=note),
        claim.format(year=year, verb="tidak sebesar", note=note),
        claim.format(year=year, verb="naik menjadi", note=note),
        claim.format(year=year, verb="paling sedikit", note=note),
        claim.format(year=year, verb="sebesar", note=note.replace("Rp", "US$")),
        claim.replace("pegawai", "modal").format(year=year, verb="sebesar", note=note),
    ):
        assert check_claim(changed, [passage]).verdict == "unsupported", changed


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["Pasal", "pasal", "ayat", "huruf", "angka", "Lampiran", "BAB", "Nomor", "Article"]),
    st.integers(min_value=1, max_value=999),
)
def test_references_are_never_quantities(word: str, number: int) -> None:
    assume(not (word == "huruf"))
    text = f"sebagaimana dimaksud dalam {word} {number} undang-undang ini"
    assert all(f.value != number for f in extract_figures(text))
    claim = f"Terdapat {number} ketentuan dalam undang-undang ini."
    result = check_claim(claim, [JudgePassage("P1", text)])
    assert "reference_as_quantity" in result.reasons


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=200))
def test_extraction_never_fails_and_spans_are_exact(text: str) -> None:
    for figure in extract_figures(text):
        assert 0 <= figure.start < figure.end <= len(text)
        assert len(figure.text) == figure.end - figure.start


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Rp",
                "1.500",
                "2,5",
                " ",
                "miliar",
                "persen",
                "Pasal",
                "(",
                ")",
                "tahun",
                "2023",
                "sekitar",
                "tidak",
                "-",
                "lima",
                "belas",
                ":",
                "|",
                "\n",
            ]
        ),
        max_size=25,
    )
)
def test_rule_check_never_fails_on_number_soup(parts: list[str]) -> None:
    text = " ".join(parts)
    result = check_claim(text, [JudgePassage("P1", text[::-1] + " " + text)], context=text)
    assert result.verdict in ("supported", "unsupported")
