"""Build the rule-judge development set from the real texts in ../shared/data (never committed).

Passages come from the statutes in indo_legal_corpus/ (sentences holding figures, cut to chunk size) and
from the APBA 2025 line items in apba_aceh_2025/ (rows of one SKPD rendered as a table or as prose, as
ingestion renders CSV tables). Each passage gets supported restatements (other notations and scales) and
unsupported claims that change exactly one thing. Items are split by document (statute; SKPD for the APBA) into ``dev`` and
``heldout``: tune on dev only.

    .venv/bin/python -m benchmarks.build_judge_dev [--quick] [--out benchmarks/data/judge_dev.jsonl]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

from benchmarks.judge_dev_claims import (
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
from judge.numbers import PERIOD_KINDS
from judge.textunits import _sentences, build_view

APBA_TITLE = "Qanun Aceh tentang Anggaran Pendapatan dan Belanja Aceh Tahun Anggaran 2025"
APBA_YEAR = 2025
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


def data_dir() -> Path:
    env = os.environ.get("ACEH_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def split_of(document: str) -> str:
    return "heldout" if hashlib.sha1(document.encode()).digest()[0] % 5 == 0 else "dev"


def _item(
    items: list[dict],
    base: dict,
    claim: str,
    label: str,
    perturbation: str,
    *,
    context: str = "",
    notation: str = "",
) -> None:
    items.append(
        {
            **base,
            "id": f"{base['group']}:{len(items)}",
            "claim": claim,
            "label": label,
            "perturbation": perturbation,
            "notation": notation,
            "context": context,
        }
    )


# --- APBA 2025 line items ------------------------------------------------------------


def _apba_windows(csv_path: Path, rng: random.Random, groups: int) -> list[tuple[str, list[dict]]]:
    by_skpd: dict[str, list[dict]] = {}
    with csv_path.open(encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            if float(row["jumlah_rp"] or 0) >= 1000 and row["uraian"].strip():
                by_skpd.setdefault(row["nama_skpd"], []).append(row)
    windows = []
    for skpd, rows in by_skpd.items():
        for start in range(0, len(rows) - 4, 4):
            chunk = rows[start : start + 4]
            if len({r["uraian"] for r in chunk}) == 4 and len({r["jumlah_rp"] for r in chunk}) == 4:
                windows.append((skpd, chunk))
    rng.shuffle(windows)
    return windows[:groups]


def _render_apba(skpd: str, rows: list[dict], table: bool) -> str:
    if table:
        lines = [
            f"Lampiran II APBA {APBA_YEAR} — {skpd}",
            "| Kode Rekening | Uraian | Jumlah (Rp) |",
            "|---|---|---|",
        ]
        lines += [f"| {r['kode_rekening']} | {r['uraian']} | {_rupiah(r)} |" for r in rows]
        return "\n".join(lines)
    first, *rest = rows
    parts = [f"Pada {skpd}, {first['uraian']} dianggarkan sebesar Rp{_rupiah(first)}."]
    parts += [f"{r['uraian']} dianggarkan sebesar Rp{_rupiah(r)}." for r in rest]
    return " ".join(parts)


def _rupiah(row: dict) -> str:
    from benchmarks.judge_dev_claims import full

    return full(Decimal(row["jumlah_rp"]).to_integral_value(), cents=True)


def apba_items(csv_path: Path, rng: random.Random, groups: int) -> list[dict]:
    items: list[dict] = []
    windows = _apba_windows(csv_path, rng, groups * 3)
    foreign_pool = [row["uraian"] for _, rows in windows[groups:] for row in rows]
    for number, (skpd, rows) in enumerate(windows[:groups]):
        table = rng.random() < 0.6
        target, sibling = rng.sample(rows, 2)
        value = Decimal(target["jumlah_rp"]).to_integral_value()
        passage_text = _render_apba(skpd, rows, table)
        base = {
            "group": f"apba{number}",
            "source": "apba",
            "document": f"apba:{skpd}",
            "split": split_of(skpd),
            "passages": [
                {
                    "key": "P1",
                    "text": passage_text,
                    "identity": {
                        "title": APBA_TITLE,
                        "type": "Qanun",
                        "year": APBA_YEAR,
                        "issuer": "Pemerintah Aceh",
                        "section": "Lampiran II",
                    },
                }
            ],
        }
        uraian, year = target["uraian"], APBA_YEAR
        notes = amount_notations(value)
        base_note = notes.get("id_scaled", notes["id_full"])

        def t1(amount: str, name: str = uraian, when: int = year, *, verb: str = "sebesar") -> str:
            return f"Anggaran {name} pada {skpd} dalam APBA {when} {verb} {amount}."

        _item(items, base, t1(notes["id_full_cents"]), "supported", "none", notation="id_full_cents")
        _item(
            items,
            base,
            f"{uraian} {skpd} Tahun Anggaran {year} dialokasikan {base_note}.",
            "supported",
            "none",
            notation="id_scaled",
        )
        if "id_approx" in notes:
            _item(
                items,
                base,
                f"Pada APBA {year}, {skpd} menganggarkan {notes['id_approx']} untuk {uraian}.",
                "supported",
                "none",
                notation="id_approx",
            )
        if "en_scaled" in notes:
            _item(
                items,
                base,
                f"In the {year} Aceh budget, {skpd} allocated {notes['en_scaled']} for {uraian}.",
                "supported",
                "none",
                notation="en_scaled",
            )
        for name in ("id_lower_scale", "id_upper_scale", "en_full"):
            if name in notes:
                _item(items, base, t1(notes[name]), "supported", "none", notation=name)
        header = f"| Uraian | Anggaran {year} |"
        _item(
            items,
            base,
            f"| {uraian} | {base_note} |",
            "supported",
            "none",
            context=header,
            notation="table_row",
        )
        for kind, text in amount_perturbations(value, rng).items():
            _item(items, base, t1(text), "unsupported", kind)
        _item(items, base, t1(base_note, when=year - 1), "unsupported", "year")
        _item(
            items,
            base,
            f"| {uraian} | {base_note} |",
            "unsupported",
            "year",
            context=f"| Uraian | Anggaran {year - 1} |",
        )
        _item(items, base, t1(base_note, name=sibling["uraian"]), "unsupported", "entity")
        foreign = next((f for f in foreign_pool[number * 3 :] if f.lower() not in passage_text.lower()), None)
        if foreign:
            _item(items, base, t1(base_note, name=foreign), "unsupported", "entity")
        _item(items, base, t1(base_note, verb="tidak sebesar"), "unsupported", "negation")
        _item(items, base, t1(base_note, verb="naik menjadi"), "unsupported", "direction")
        _item(items, base, t1(base_note, verb="lebih dari"), "unsupported", "bound")
    return items


# --- statutes ----------------------------------------------------------------------


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


def _label(view, figure_index: int) -> str | None:
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


def _figure_claims(fig, rng: random.Random, refs: list[str], others: set[Decimal]) -> tuple[dict, dict]:
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


def legal_items(corpus: Path, rng: random.Random, groups: int) -> list[dict]:
    rows = list(csv.DictReader((corpus / "manifest.tsv").open(encoding="utf-8"), delimiter="\t"))
    demo = {line.strip() for line in (corpus / "demo_subset.txt").open() if line.strip() and line[0] != "#"}
    chosen = [r for r in rows if int(r["rupiah_amounts"] or 0) > 0 or r["path"] in demo]
    rest = [r for r in rows if r not in chosen]
    chosen += rng.sample(rest, min(len(rest), 200))
    rng.shuffle(chosen)
    items: list[dict] = []
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
            for name, note in notes.items():
                _item(items, base, f"{label} {note}.", "supported", "none", notation=name)
            first_note = next(iter(notes.values()))
            main_note = notes.get("id_scaled", first_note)
            stated = {f.value for f in view.figures}
            for kind, note in perturb.items():
                changed = next((f for f in build_view(note).figures if f.kind not in PERIOD_KINDS), None)
                if kind in ("digit", "reference") and changed is not None and changed.value in stated:
                    continue  # the "wrong" value is stated in the passage for something else
                _item(items, base, f"{label} {note}.", "unsupported", kind)
            _legal_structural(items, base, view, index, label, main_note, ta, foreign_labels, passage, rng)
            foreign_labels.append(label)
    return items


def _is_twin(view, index: int) -> bool:
    fig = view.figures[index]
    return (
        fig.spelled
        and index > 0
        and bool(re.fullmatch(r"\s*\(\s*", view.text[view.figures[index - 1].end : fig.start]))
    )


def _legal_structural(items, base, view, index, label, note, ta, foreign_labels, passage, rng) -> None:
    low = label.lower()
    for phrase, flipped in FLIP_BOUNDS.items():
        if re.search(rf"\b{re.escape(phrase)}\b", low):
            _item(items, base, f"{_replace(label, phrase, flipped)} {note}.", "unsupported", "bound")
            break
    for word, flipped in FLIP_DIRECTIONS.items():
        if re.search(rf"\b{word}\b", low):
            _item(items, base, f"{_replace(label, word, flipped)} {note}.", "unsupported", "direction")
            break
    verb = next((m for m in _VERB_RE.finditer(label) if m.group(1).lower() not in _NOT_VERBS), None)
    if (
        verb
        and not re.search(r"\b(tidak|bukan|belum)\b", low)
        and f"tidak {verb.group(1).lower()}" not in passage.lower()
    ):
        negated = label[: verb.start()] + "tidak " + label[verb.start() :]
        _item(items, base, f"{negated} {note}.", "unsupported", "negation")
    siblings = [
        i
        for i in view.quantities
        if i != index and not _is_twin(view, i) and view.figures[i].value != view.figures[index].value
    ]
    other = _label(view, siblings[0]) if siblings else None
    if other and other.lower() != low:
        _item(items, base, f"{other} {note}.", "unsupported", "entity")
    elif foreign_labels:
        foreign = rng.choice(foreign_labels[-50:])
        if foreign.lower() not in passage.lower():
            _item(items, base, f"{foreign} {note}.", "unsupported", "entity")
    if ta:
        year = int(ta.group(1))
        # the wrong year must not be stated anywhere the claim could take it from (passage, identity)
        taken = (
            {f.period for f in view.figures if f.kind in PERIOD_KINDS}
            | {str(base["passages"][0]["identity"]["year"])}
            | set(re.findall(r"\d{4}", base["passages"][0]["identity"]["title"]))
        )
        wrong = next((str(y) for y in (year + 1, year - 1, year + 2) if str(y) not in taken), None)
        if wrong and not re.search(r"\b(?:19|20)\d\d\b", label):
            _item(
                items,
                base,
                f"{label} {note} pada Tahun Anggaran {year}.",
                "supported",
                "none",
                notation="with_year",
            )
            _item(items, base, f"{label} {note} pada Tahun Anggaran {wrong}.", "unsupported", "year")


def _replace(label: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, label, count=1, flags=re.IGNORECASE)


def build(root: Path, *, seed: int = 13, quick: bool = False) -> list[dict]:
    rng = random.Random(seed)
    items = apba_items(root / "apba_aceh_2025" / "MASTER_01_RINCIAN_APBD.csv", rng, 60 if quick else 400)
    items += legal_items(root / "indo_legal_corpus", rng, 80 if quick else 700)
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/judge_dev.jsonl"))
    args = parser.parse_args()
    items = build(data_dir(), quick=args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    counts = Counter((i["split"], i["label"], i["perturbation"]) for i in items)
    for key, count in sorted(counts.items()):
        print(*key, count)
    print(f"{len(items)} items → {args.out}")


if __name__ == "__main__":
    main()
