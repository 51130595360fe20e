"""Restatements and one-thing perturbations for the rule-judge development set (see build_judge_dev.py).

A restatement writes a figure in another notation that must still be judged equal; a perturbation changes
exactly one thing (scale word, one digit, year, entity, unit, direction, negation, bound, a reference read as
a quantity, rounding without "sekitar") and must be judged unsupported.
"""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Decimal

ID_SCALES = {6: "juta", 9: "miliar", 12: "triliun", 15: "kuadriliun"}
EN_SCALES = {6: "million", 9: "billion", 12: "trillion", 15: "quadrillion"}
_ID_DIGIT_WORDS = ["nol", "satu", "dua", "tiga", "empat", "lima", "enam", "tujuh", "delapan", "sembilan"]


def group(integer: int, sep: str) -> str:
    text = str(integer)
    parts = []
    while len(text) > 3:
        parts.append(text[-3:])
        text = text[:-3]
    parts.append(text)
    return sep.join(reversed(parts))


def full(value: Decimal, lang: str = "id", cents: bool = False) -> str:
    integer = int(value)
    if lang == "id":
        return group(integer, ".") + (",00" if cents else "")
    return group(integer, ",") + (".00" if cents else "")


def mantissa(value: Decimal, exp: int, decimals: int) -> Decimal:
    step = Decimal(1).scaleb(-decimals)
    return (value / Decimal(10) ** exp).quantize(step, rounding=ROUND_HALF_UP)


def scaled(value: Decimal, exp: int, decimals: int, lang: str = "id") -> str:
    number = mantissa(value, exp, decimals)
    integer, _, fraction = f"{number:f}".partition(".")
    grouped = group(int(integer), "." if lang == "id" else ",")
    if not fraction:
        return grouped
    return grouped + ("," if lang == "id" else ".") + fraction


def natural_exp(value: Decimal) -> int | None:
    for exp in (12, 9, 6):
        if value >= Decimal(10) ** exp:
            return exp
    return None


def spell_id(number: int) -> str:
    """Indonesian words for 0 <= number < 1000 (enough for counts and percents)."""
    if number < 10:
        return _ID_DIGIT_WORDS[number]
    if number < 20:
        return {10: "sepuluh", 11: "sebelas"}.get(number, _ID_DIGIT_WORDS[number - 10] + " belas")
    if number < 100:
        tens, rest = divmod(number, 10)
        return _ID_DIGIT_WORDS[tens] + " puluh" + (" " + _ID_DIGIT_WORDS[rest] if rest else "")
    hundreds, rest = divmod(number, 100)
    head = "seratus" if hundreds == 1 else _ID_DIGIT_WORDS[hundreds] + " ratus"
    return head + (" " + spell_id(rest) if rest else "")


def amount_notations(value: Decimal) -> dict[str, str]:
    """Equivalent ways to write an IDR amount (name → text). Values under a million keep full digits."""
    if value != value.to_integral_value():
        cents = f"{value.quantize(Decimal('0.01')):f}".split(".")[1]
        out = {"id_full": f"Rp{full(value)},{cents}", "en_full": f"Rp {full(value, 'en')}.{cents}"}
    else:
        out = {
            "id_full": f"Rp{full(value)}",
            "id_full_cents": f"Rp{full(value, cents=True)}",
            "en_full": f"Rp {full(value, 'en')}",
        }
    exp = natural_exp(value)
    if exp is None:
        return out
    out["id_scaled"] = f"Rp{scaled(value, exp, 2)} {ID_SCALES[exp]}"
    out["en_scaled"] = f"IDR {scaled(value, exp, 2, 'en')} {EN_SCALES[exp]}"
    out["id_approx"] = f"sekitar Rp{scaled(value, exp, 0)} {ID_SCALES[exp]}"
    if exp - 3 >= 6:
        out["id_lower_scale"] = f"Rp{scaled(value, exp - 3, 2)} {ID_SCALES[exp - 3]}"
    elif mantissa(value, exp + 3, 2) >= Decimal("0.1"):
        out["id_upper_scale"] = f"Rp{scaled(value, exp + 3, 2)} {ID_SCALES[exp + 3]}"
    return out


def amount_perturbations(value: Decimal, rng: random.Random) -> dict[str, str]:
    """One-thing changes of the "id_scaled" (or full-digit) notation."""
    exp = natural_exp(value)
    out: dict[str, str] = {}
    if exp is None:
        digits = full(value)
        out["digit"] = "Rp" + _change_digit(digits, rng)
        out["unit"] = f"US${digits}"
        out["scale"] = f"Rp{digits} ribu"
        return out
    number = scaled(value, exp, 2)
    scale = ID_SCALES[exp]
    other = ID_SCALES[exp - 3] if exp - 3 in ID_SCALES and rng.random() < 0.5 else ID_SCALES[exp + 3]
    out["scale"] = f"Rp{number} {other}"
    out["digit"] = f"Rp{_change_digit(number, rng)} {scale}"
    out["unit"] = f"US${number} {scale}"
    rounded = mantissa(value, exp, 0) * Decimal(10) ** exp
    if rounded != value:
        out["rounding"] = f"Rp{scaled(value, exp, 0)} {scale}"
    return out


def _change_digit(text: str, rng: random.Random) -> str:
    """Change one digit that is not the leading one (so the magnitude stays)."""
    positions = [i for i, ch in enumerate(text) if ch.isdigit()][1:]
    position = rng.choice(positions[-4:]) if positions else 0
    old = int(text[position])
    new = (old + rng.choice([1, 2, 3, 7, 8, 9])) % 10
    return text[:position] + str(new) + text[position + 1 :]


def count_notations(value: Decimal, unit_word: str, en_unit: str | None) -> dict[str, str]:
    integer = int(value)
    out = {"digits": f"{group(integer, '.')} {unit_word}".strip()}
    if value == integer and integer < 1000:
        out["spelled"] = f"{spell_id(integer)} {unit_word}".strip()
        out["twin"] = f"{integer} ({spell_id(integer)}) {unit_word}".strip()
    return out


def percent_notations(value: Decimal) -> dict[str, str]:
    text = f"{value:f}"
    id_text = text.replace(".", ",")
    out = {"sign": f"{id_text}%", "word": f"{id_text} persen", "en_word": f"{text} percent"}
    if value == int(value) and value < 1000:
        out["spelled"] = f"{spell_id(int(value))} persen"
    return out


SWAP_UNITS = {
    "tahun": "bulan",
    "bulan": "tahun",
    "hari": "bulan",
    "orang": "unit",
    "jiwa": "unit",
    "persen": "permil",
    "%": " permil",
    "km": "hektare",
    "hektare": "km",
    "ha": "km",
    "ton": "kg",
    "kali": "tahun",
    "minggu": "hari",
    "jam": "hari",
}
FLIP_BOUNDS = {
    "paling sedikit": "paling banyak",
    "paling banyak": "paling sedikit",
    "paling lama": "paling singkat",
    "paling singkat": "paling lama",
    "paling tinggi": "paling rendah",
    "paling rendah": "paling tinggi",
    "sekurang-kurangnya": "sebanyak-banyaknya",
    "sebanyak-banyaknya": "sekurang-kurangnya",
    "lebih dari": "kurang dari",
    "kurang dari": "lebih dari",
    "minimal": "maksimal",
    "maksimal": "minimal",
    "setinggi-tingginya": "serendah-rendahnya",
}
FLIP_DIRECTIONS = {
    "kenaikan": "penurunan",
    "penurunan": "kenaikan",
    "meningkat": "menurun",
    "menurun": "meningkat",
    "naik": "turun",
    "turun": "naik",
    "peningkatan": "penurunan",
    "bertambah": "berkurang",
    "berkurang": "bertambah",
}
