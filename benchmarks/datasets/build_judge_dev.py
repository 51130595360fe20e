"""Build the rule-judge development set from the real texts in ../shared/data (never committed).

Passages come from the statutes in indo_legal_corpus/ (sentences holding figures, cut to chunk size) and
from the APBA 2025 line items in apba_aceh_2025/ (rows of one SKPD rendered as a table or as prose, as
ingestion renders CSV tables). Each passage gets supported restatements (other notations and scales) and
unsupported claims that change exactly one thing. Items are split by document (statute; SKPD for the APBA)
into ``dev`` and ``heldout``: tune on dev only.

    .venv/bin/python -m benchmarks.datasets.build_judge_dev [--quick] [--out .aceh/judge_dev.jsonl]

The default output lies under the git-ignored .aceh/: the items quote the shared data, which is never
committed. benchmarks/judge_rules.py builds the same set in memory and needs no file.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.datasets.judge_dev_claims import amount_notations, amount_perturbations, full
from benchmarks.datasets.judge_dev_common import Group, split_of
from benchmarks.datasets.judge_dev_legal import legal_items
from benchmarks.harness import shared_data

APBA_TITLE = "Qanun Aceh tentang Anggaran Pendapatan dan Belanja Aceh Tahun Anggaran 2025"
APBA_YEAR = 2025


def data_dir() -> Path:
    return shared_data()


# --- APBA 2025 line items ------------------------------------------------------------


def _apba_windows(csv_path: Path, rng: random.Random, groups: int) -> list[tuple[str, list[dict[str, Any]]]]:
    by_skpd: dict[str, list[dict[str, Any]]] = {}
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


def _render_apba(skpd: str, rows: list[dict[str, Any]], table: bool) -> str:
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


def _rupiah(row: dict[str, Any]) -> str:
    return full(Decimal(row["jumlah_rp"]).to_integral_value(), cents=True)


def apba_items(csv_path: Path, rng: random.Random, groups: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    windows = _apba_windows(csv_path, rng, groups * 3)
    foreign_pool = [row["uraian"] for _, rows in windows[groups:] for row in rows]
    for number, (skpd, rows) in enumerate(windows[:groups]):
        table = rng.random() < 0.6
        target, sibling = rng.sample(rows, 2)
        value = Decimal(target["jumlah_rp"]).to_integral_value()
        passage_text = _render_apba(skpd, rows, table)
        group = Group(
            items,
            {
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
            },
        )
        uraian, year = target["uraian"], APBA_YEAR
        notes = amount_notations(value)
        base_note = notes.get("id_scaled", notes["id_full"])

        def t1(amount: str, name: str = uraian, when: int = year, *, verb: str = "sebesar") -> str:
            return f"Anggaran {name} pada {skpd} dalam APBA {when} {verb} {amount}."

        group.add(t1(notes["id_full_cents"]), "supported", "none", notation="id_full_cents")
        group.add(
            f"{uraian} {skpd} Tahun Anggaran {year} dialokasikan {base_note}.",
            "supported",
            "none",
            notation="id_scaled",
        )
        if "id_approx" in notes:
            group.add(
                f"Pada APBA {year}, {skpd} menganggarkan {notes['id_approx']} untuk {uraian}.",
                "supported",
                "none",
                notation="id_approx",
            )
        if "en_scaled" in notes:
            group.add(
                f"In the {year} Aceh budget, {skpd} allocated {notes['en_scaled']} for {uraian}.",
                "supported",
                "none",
                notation="en_scaled",
            )
        for name in ("id_lower_scale", "id_upper_scale", "en_full"):
            if name in notes:
                group.add(t1(notes[name]), "supported", "none", notation=name)
        header = f"| Uraian | Anggaran {year} |"
        group.add(
            f"| {uraian} | {base_note} |",
            "supported",
            "none",
            context=header,
            notation="table_row",
        )
        for kind, text in amount_perturbations(value, rng).items():
            group.add(t1(text), "unsupported", kind)
        group.add(t1(base_note, when=year - 1), "unsupported", "year")
        group.add(
            f"| {uraian} | {base_note} |",
            "unsupported",
            "year",
            context=f"| Uraian | Anggaran {year - 1} |",
        )
        group.add(t1(base_note, name=sibling["uraian"]), "unsupported", "entity")
        foreign = next((f for f in foreign_pool[number * 3 :] if f.lower() not in passage_text.lower()), None)
        if foreign:
            group.add(t1(base_note, name=foreign), "unsupported", "entity")
        group.add(t1(base_note, verb="tidak sebesar"), "unsupported", "negation")
        group.add(t1(base_note, verb="naik menjadi"), "unsupported", "direction")
        group.add(t1(base_note, verb="lebih dari"), "unsupported", "bound")
    return items


def build(root: Path, *, seed: int = 13, quick: bool = False) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items = apba_items(root / "apba_aceh_2025" / "MASTER_01_RINCIAN_APBD.csv", rng, 60 if quick else 400)
    items += legal_items(root / "indo_legal_corpus", rng, 80 if quick else 700)
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(".aceh/judge_dev.jsonl"))
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
