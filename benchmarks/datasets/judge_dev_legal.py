"""Statute passages for the rule-judge development set: sentences holding figures, cut to chunk size, with
restatements of one figure and one-thing perturbations (see build_judge_dev.py)."""

from __future__ import annotations

import csv
import random
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.datasets.judge_dev_claims import (
    FLIP_BOUNDS,
    FLIP_DIRECTIONS,
    ID_SCALES,
    SWAP_UNITS,
    amount_notations,
    amount_perturbations,
    count_notations,
    natural_exp,
    percent_notations,
)
from benchmarks.datasets.judge_dev_common import Group, split_of
from language.figure import Figure
from language.numbers import PERIOD_KINDS, figures_equal
from language.textunits import TextView, _sentences, build_view

COUNT_UNITS = {
    "tahun",
    "bulan",
    "hari",
    "orang",
    "jiwa",
    "kali",
    "km",
    "hektare",
    "ha",
    "ton",
    "minggu",
    "jam",
}
_LABEL_LEAD_RE = re.compile(
    r"^[\s;:,.)\]]*(?:(?:dan|serta|atau|yaitu)\s+)?(?:\(?[a-z0-9]{1,2}[.)]\s+)?", re.IGNORECASE
)
_VERB_RE = re.compile(r"\b((?:di|me|ber|ter)[a-z]{4,})\b")
_GENERIC = {
    "paling",
    "tinggi",
    "rendah",
    "sedikit",
    "banyak",
    "lama",
    "singkat",
    "sebesar",
    "sebanyak",
    "setinggi",
    "sekurang-kurangnya",
    "sebanyak-banyaknya",
    "setinggi-tingginya",
    "minimal",
    "maksimal",
    "lebih",
    "kurang",
    "dari",
    "sampai",
    "dengan",
    "dalam",
    "waktu",
    "jangka",
    "selama",
    "sejumlah",
    "senilai",
    "jumlah",
    "sekitar",
    "masing-masing",
    "setiap",
    "adalah",
    "yaitu",
    "untuk",
    "atau",
    "serta",
}
_NOT_VERBS = {
    "dimaksud",
    "dimana",
    "diatas",
    "dibawah",
    "dalam",
    "terhadap",
    "tersebut",
    "termasuk",
    "terdiri",
    "merupakan",
    "berdasarkan",
    "berupa",
    "bersama",
    "terakhir",
    "tertentu",
    "menurut",
    "mengenai",
    "melalui",
    "meliputi",
    "diantaranya",
    "terutama",
}


def _passages(text: str, rng: random.Random, per_doc: int) -> list[str]:
    out = []
    sentences = _sentences(text)
    candidates = [i for i, (s, e) in enumerate(sentences) if re.search(r"\d", text[s:e]) and 60 < e - s < 900]
    rng.shuffle(candidates)
    for index in candidates[: per_doc * 3]:
        start, end = sentences[index]
        following = index + 1
        while end - start < 250 and following < len(sentences):
            end = sentences[following][1]
            following += 1
        if end - start > 480:
            end = text.rfind(" ", start, start + 480)
        out.append(text[start:end].strip())
    return out


def _label(view: TextView, figure_index: int) -> str | None:
    ranges = view.neighbourhood(figure_index)
    if not ranges:
        return None
    label = view.text[ranges[0][0] : ranges[0][1]]
    label = _LABEL_LEAD_RE.sub("", label.replace("\n", " "))
    label = re.sub(r"\s+", " ", label).strip(" ,;:")
    words = label.split()
    if not 3 <= len(words) <= 22 or label.count("(") != label.count(")") or re.search(r"\d{5,}", label):
        return None
    if sum(1 for w in words if re.fullmatch(r"[A-Za-z-]{4,}", w)) < 2:
        return None
    if not any(
        w.lower().strip(",.;:()") not in _GENERIC for w in words if re.fullmatch(r"[A-Za-z-]{4,}[,.;:]?", w)
    ):
        return None  # "Paling tinggi sebesar" names nothing
    return label[0].upper() + label[1:]


def _figure_claims(
    fig: Figure, rng: random.Random, refs: list[str], others: set[Decimal]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(supported notations, perturbations) for one statute figure; empty when the figure is not usable."""
    if fig.kind == "amount" and fig.unit == "IDR" and fig.value >= 10**6:
        notes = amount_notations(fig.value)
        notes.pop("id_approx" if fig.approximate else "", None)
        perturb = amount_perturbations(fig.value, rng)
        exp = natural_exp(fig.value)
        ref = next((r for r in refs if Decimal(r) * 10 ** (exp or 0) not in others), None)
        if ref and exp:
            perturb["reference"] = f"Rp{ref} {ID_SCALES[exp]}"
        return notes, perturb
    if fig.kind == "percent":
        notes = percent_notations(fig.value)
        number = notes["word"].split()[0]
        changed = f"{fig.value + rng.choice([1, 2, 5])}".replace(".", ",")
        perturb = {"digit": f"{changed} persen", "unit": f"{number} permil"}
        ref = next((r for r in refs if Decimal(r) not in others and Decimal(r) != fig.value), None)
        if ref:
            perturb["reference"] = f"{ref} persen"
        return notes, perturb
    unit_word = fig.text.split()[-1].lower() if fig.text.split() else ""
    if fig.kind == "count" and unit_word in COUNT_UNITS and fig.value == int(fig.value) and not fig.spelled:
        notes = count_notations(fig.value, unit_word, None)
        perturb = {
            "digit": f"{int(fig.value) + rng.choice([1, 2, 3, 10])} {unit_word}",
            "unit": f"{int(fig.value)} {SWAP_UNITS.get(unit_word, 'unit')}",
        }
        ref = next((r for r in refs if Decimal(r) not in others and Decimal(r) != fig.value), None)
        if ref:
            perturb["reference"] = f"{ref} {unit_word}"
        return notes, perturb
    return {}, {}


def legal_items(corpus: Path, rng: random.Random, groups: int) -> list[dict[str, Any]]:
    with (corpus / "manifest.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    demo_lines = (corpus / "demo_subset.txt").read_text(encoding="utf-8").splitlines()
    demo = {line.strip() for line in demo_lines if line.strip() and line[0] != "#"}
    chosen = [r for r in rows if int(r["rupiah_amounts"] or 0) > 0 or r["path"] in demo]
    rest = [r for r in rows if r not in chosen]
    chosen += rng.sample(rest, min(len(rest), 200))
    rng.shuffle(chosen)
    items: list[dict[str, Any]] = []
    foreign_labels: list[str] = []
    made = 0
    for row in chosen:
        if made >= groups:
            break
        text = (corpus / row["path"]).read_text(encoding="utf-8", errors="replace")
        title = row["title"].strip()
        ta = re.search(r"TAHUN ANGGARAN (\d{4})\b(?!/)", title)
        identity = {"title": title, "type": row["jenis"], "number": row["nomor"], "year": int(row["tahun"])}
        for passage in _passages(text, rng, 2):
            if made >= groups:
                break
            view = build_view(passage)
            quantities = [i for i in view.quantities if not _is_twin(view, i)]
            if not quantities:
                continue
            index = rng.choice(quantities)
            fig = view.figures[index]
            label = _label(view, index)
            refs = [r.value for r in view.parsed.references if r.value.isdigit() and r.kind != "marker"]
            others = {f.value for f in view.figures}
            notes, perturb = _figure_claims(fig, rng, refs, others)
            if not label or not notes:
                continue
            made += 1
            base = {
                "group": f"legal{made}",
                "source": "legal",
                "document": row["path"],
                "split": split_of(row["path"]),
                "passages": [{"key": "P1", "text": passage, "identity": identity}],
            }
            group = Group(items, base)
            for name, note in notes.items():
                group.add(f"{label} {note}.", "supported", "none", notation=name)
            first_note = next(iter(notes.values()))
            main_note = notes.get("id_scaled", first_note)
            stated = {f.value for f in view.figures}
            for kind, note in perturb.items():
                changed = next((f for f in build_view(note).figures if f.kind not in PERIOD_KINDS), None)
                if kind in ("digit", "reference") and changed is not None and changed.value in stated:
                    continue  # the "wrong" value is stated in the passage for something else
                group.add(f"{label} {note}.", "unsupported", kind)
            _legal_structural(group, view, index, label, main_note, ta, foreign_labels, passage, rng)
            foreign_labels.append(label)
    return items


def _is_twin(view: TextView, index: int) -> bool:
    fig = view.figures[index]
    return (
        fig.spelled
        and index > 0
        and bool(re.fullmatch(r"\s*\(\s*", view.text[view.figures[index - 1].end : fig.start]))
    )


def _legal_structural(
    group: Group,
    view: TextView,
    index: int,
    label: str,
    note: str,
    ta: re.Match[str] | None,
    foreign_labels: list[str],
    passage: str,
    rng: random.Random,
) -> None:
    low = label.lower()
    for phrase, flipped in FLIP_BOUNDS.items():
        if re.search(rf"\b{re.escape(phrase)}\b", low):
            group.add(f"{_replace(label, phrase, flipped)} {note}.", "unsupported", "bound")
            break
    for word, flipped in FLIP_DIRECTIONS.items():
        if re.search(rf"\b{word}\b", low):
            group.add(f"{_replace(label, word, flipped)} {note}.", "unsupported", "direction")
            break
    verb = next((m for m in _VERB_RE.finditer(label) if m.group(1).lower() not in _NOT_VERBS), None)
    if (
        verb
        and not re.search(r"\b(tidak|bukan|belum)\b", low)
        and f"tidak {verb.group(1).lower()}" not in passage.lower()
    ):
        negated = label[: verb.start()] + "tidak " + label[verb.start() :]
        group.add(f"{negated} {note}.", "unsupported", "negation")
    siblings = [
        i
        for i in view.quantities
        if i != index and not _is_twin(view, i) and view.figures[i].value != view.figures[index].value
    ]
    other = _label(view, siblings[0]) if siblings else None
    own_words = _words(label)
    stated = next((f for f in build_view(note).figures if f.kind not in PERIOD_KINDS), None)
    if stated is not None and any(figures_equal(stated, view.figures[i]) for i in siblings):
        other = None  # at this precision the note also states the sibling's figure: no swap
    if other and not _words(other) <= own_words:
        group.add(f"{other} {note}.", "unsupported", "entity")
    elif foreign_labels:
        foreign = rng.choice(foreign_labels[-50:])
        if not _words(foreign) <= _words(passage):  # a "foreign" label the passage states is no swap
            group.add(f"{foreign} {note}.", "unsupported", "entity")
    if ta:
        year = int(ta.group(1))
        # the wrong year must not be stated anywhere the claim could take it from (passage, identity)
        taken = (
            {f.period for f in view.figures if f.kind in PERIOD_KINDS}
            | {str(group.base["passages"][0]["identity"]["year"])}
            | set(re.findall(r"\d{4}", group.base["passages"][0]["identity"]["title"]))
        )
        wrong = next((str(y) for y in (year + 1, year - 1, year + 2) if str(y) not in taken), None)
        if wrong and not re.search(r"\b(?:19|20)\d\d\b", label):
            group.add(
                f"{label} {note} pada Tahun Anggaran {year}.",
                "supported",
                "none",
                notation="with_year",
            )
            group.add(f"{label} {note} pada Tahun Anggaran {wrong}.", "unsupported", "year")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _GENERIC}


def _replace(label: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, label, count=1, flags=re.IGNORECASE)
