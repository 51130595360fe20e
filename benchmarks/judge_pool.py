"""Judge pool throughput on CPU (issue 5): the same judge requests through the Ray Serve ``JudgePool``
(``@serve.batch`` across requests) and through the plain in-process judge, at 1, 8 and 32 concurrent requests.

    .venv/bin/python -m benchmarks.judge_pool [--quick] [--requests N] [--runs N]

Each request is one answer's judge items: six segment/passage pairs over demo-like Indonesian budget passages
(neighbouring segments cite the same passage). The engine is the embedded rule judge. Modes:

* ``direct``: ``judge_batch(judge, items)`` per request (one batch per request, no cross-request batching);
* ``collector``: ``BatchCollector`` with the config's batch settings (cross-request batching in one process);
* ``ray``: ``JudgePool.judge_many`` through a deployment handle; batch sizes come from the replica's
  ``aceh_judge_batch_size`` histogram (``metrics_text``), differenced around each level.

Two workloads: ``warm`` repeats the same claims (the rule judge's parsing caches are hot, so the figures show
the pool's own overhead) and ``fresh`` gives every request new text (as a new answer over new passages). The
modes run interleaved, run by run, on one Ray instance (``num_cpus=2``, replica ``num_cpus`` from the config).
CPU per item: the driver process's, plus the replica's (read from /proc) for ``ray``.

Prints a table and writes benchmarks/results/judge_pool.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO, Figure, Result, command, percentile, write_result
from judge.types import JudgeItem, JudgePassage, JudgeResult

LEVELS = (1, 8, 32)
ITEMS_PER_REQUEST = 6
# Upper bounds of the replica's histogram (serve_app.metrics.BATCH_BUCKETS) as bins: "1", "2", "3-4", ...
BIN_EDGES = (1, 2, 4, 8, 16, 32, 64, 128)

Identity = dict[str, str | int | None]

_QANUN: Identity = {
    "title": "Qanun Aceh Nomor 1 Tahun 2023 tentang Anggaran Pendapatan dan Belanja Aceh Tahun Anggaran 2023",
    "type": "Qanun", "number": "1", "year": 2023, "issuer": "Pemerintah Aceh"}
_LRA: Identity = {
    "title": "Laporan Realisasi Anggaran Pemerintah Aceh Tahun Anggaran 2023", "type": "Laporan",
    "year": 2024, "issuer": "Badan Pengelolaan Keuangan Aceh"}
_BPS: Identity = {
    "title": "Statistik Kemiskinan dan Kependudukan Aceh 2022-2023", "type": "Statistik", "year": 2023,
    "issuer": "Badan Pusat Statistik Provinsi Aceh"}
_OTSUS: Identity = {
    "title": "Peraturan Gubernur Aceh Nomor 12 Tahun 2023 tentang Pedoman Pengalokasian dan Penggunaan Dana "
             "Otonomi Khusus Aceh", "type": "Peraturan Gubernur", "number": "12", "year": 2023,
    "issuer": "Gubernur Aceh"}


def _passage(key: str, identity: Identity, *lines: str) -> JudgePassage:
    return JudgePassage(key, "\n".join(lines), identity)


# Passages in the style of configs/demo_corpus (fictitious figures).
PASSAGES: dict[str, JudgePassage] = {
    "pendapatan": _passage(
        "P1", {**_QANUN, "section": "Pasal 2"},
        "(1) Pendapatan Aceh Tahun Anggaran 2023 direncanakan sebesar Rp4.012.785.301.118 (empat triliun "
        "dua belas miliar tujuh ratus delapan puluh lima juta tiga ratus satu ribu seratus delapan belas "
        "rupiah).",
        "(2) Pendapatan sebagaimana dimaksud pada ayat (1) terdiri atas:",
        "a. Pendapatan Asli Daerah (PAD) sebesar Rp1.572.003.574.118;",
        "b. pendapatan transfer sebesar Rp2.428.281.727.000; dan",
        "c. lain-lain pendapatan daerah yang sah sebesar Rp12.500.000.000."),
    "transfer": _passage(
        "P2", {**_QANUN, "section": "Pasal 4"},
        "(1) Pendapatan transfer sebagaimana dimaksud dalam Pasal 2 ayat (2) huruf b terdiri atas:",
        "a. Dana Otonomi Khusus sebesar Rp1.482.360.000.000;",
        "b. tambahan Dana Bagi Hasil minyak dan gas bumi sebesar Rp104.735.120.000;",
        "c. Dana Bagi Hasil sebesar Rp212.940.330.000;",
        "d. Dana Alokasi Umum sebesar Rp346.809.367.000; dan",
        "e. Dana Alokasi Khusus sebesar Rp281.436.910.000.",
        "(2) Dana Otonomi Khusus sebagaimana dimaksud pada ayat (1) huruf a merupakan 36,9 persen dari "
        "total Pendapatan Aceh Tahun Anggaran 2023."),
    "pendidikan": _passage(
        "P3", {**_QANUN, "section": "Pasal 6"},
        "(1) Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.294 (delapan ratus tujuh puluh "
        "satu miliar enam ratus enam puluh tujuh juta dua ratus sembilan belas ribu dua ratus sembilan "
        "puluh empat rupiah).",
        "(2) Belanja sebagaimana dimaksud pada ayat (1) setara dengan 20,1 persen dari total belanja, "
        "sesuai dengan ketentuan alokasi pendidikan paling sedikit 20 (dua puluh) persen dalam Qanun Aceh "
        "Nomor 9 Tahun 2022 tentang Penyelenggaraan Pendidikan."),
    "realisasi": _passage(
        "P4", {**_LRA, "section": "Ringkasan"},
        "- Realisasi Pendapatan Aceh mencapai Rp4.011.303.699.490 atau 99,96 persen dari target "
        "Rp4.012.785.301.118.",
        "- Realisasi Belanja Aceh mencapai Rp4.006.200.990.234 atau 92,35 persen dari pagu "
        "Rp4.338.210.745.602.",
        "- Realisasi belanja urusan pendidikan sebesar Rp822.592.351.730 atau 94,37 persen dari pagu "
        "Rp871.667.219.294."),
    "kemiskinan": _passage(
        "P5", {**_BPS, "section": "Ringkasan"},
        "- Jumlah penduduk miskin Aceh pada Maret 2023 sebanyak 806.250 jiwa (14,44 persen), turun "
        "12.220 jiwa dibandingkan Maret 2022 sebanyak 818.470 jiwa (14,75 persen).",
        "- Persentase penduduk miskin turun 0,31 poin persen dalam satu tahun.",
        "- Garis kemiskinan naik dari Rp592.483 per kapita per bulan pada 2022 menjadi Rp627.310 per "
        "kapita per bulan pada 2023."),
    "otsus": _passage(
        "P6", {**_OTSUS, "section": "Pasal 3"},
        "(1) Dana Otsus dialokasikan:",
        "a. 60 (enam puluh) persen untuk program dan kegiatan Pemerintah Aceh; dan",
        "b. 40 (empat puluh) persen untuk program dan kegiatan kabupaten/kota.",
        "(2) Berdasarkan ketentuan pada ayat (1), alokasi Tahun Anggaran 2023 adalah Rp889.416.000.000 "
        "untuk Pemerintah Aceh dan Rp592.944.000.000 untuk kabupaten/kota."),
}

# (segment, cited passages): supported, wrong figure, wrong entity and wrong direction cases, three per
# passage so that neighbouring segments of a request share a passage.
CLAIMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Pendapatan Aceh Tahun Anggaran 2023 direncanakan sebesar Rp4,01 triliun.", ("pendapatan",)),
    ("Pendapatan Asli Daerah (PAD) tahun 2023 sebesar Rp1.572.003.574.118.", ("pendapatan",)),
    ("Pendapatan transfer Aceh tahun 2023 sebesar Rp2,5 triliun.", ("pendapatan",)),
    ("Dana Otonomi Khusus tahun 2023 sebesar Rp1.482.360.000.000.", ("transfer",)),
    ("Dana Otonomi Khusus merupakan 36,9 persen dari total Pendapatan Aceh 2023.", ("transfer",)),
    ("Dana Alokasi Umum tahun 2023 sebesar Rp281.436.910.000.", ("transfer",)),
    ("Belanja urusan pendidikan tahun 2023 ditetapkan sebesar Rp871,67 miliar.", ("pendidikan",)),
    ("Belanja pendidikan setara dengan 20,1 persen dari total belanja.", ("pendidikan",)),
    ("Belanja pendidikan mencapai 25 persen dari total belanja 2023.", ("pendidikan",)),
    ("Realisasi belanja pendidikan 2023 sebesar Rp822.592.351.730 atau 94,37 persen dari pagu.",
     ("realisasi", "pendidikan")),
    ("Realisasi Pendapatan Aceh 2023 mencapai 99,96 persen dari target.", ("realisasi",)),
    ("Realisasi Belanja Aceh 2023 mencapai 95 persen dari pagu.", ("realisasi",)),
    ("Jumlah penduduk miskin Aceh pada Maret 2023 sebanyak 806.250 jiwa.", ("kemiskinan",)),
    ("Jumlah penduduk miskin Aceh naik dibandingkan Maret 2022.", ("kemiskinan",)),
    ("Garis kemiskinan naik menjadi Rp627.310 per kapita per bulan pada 2023.", ("kemiskinan",)),
    ("Dana Otsus 2023 dialokasikan 60 persen untuk program dan kegiatan Pemerintah Aceh.", ("otsus",)),
    ("Alokasi Dana Otsus untuk kabupaten/kota tahun 2023 adalah Rp592.944.000.000.", ("otsus", "transfer")),
    ("Alokasi Dana Otsus untuk Pemerintah Aceh tahun 2023 adalah Rp592.944.000.000.", ("otsus",)),
)


def _tag(number: int) -> str:
    letters = ""
    while True:
        number, rest = divmod(number, 26)
        letters = chr(97 + rest) + letters
        if not number:
            return "zq" + letters  # a made-up word: no acronym, figure or reference the judge could use


def request_items(request_no: int, *, size: int = ITEMS_PER_REQUEST, fresh: bool = False,
                  deadline: float | None = None) -> list[JudgeItem]:
    """One request's judge items: ``size`` consecutive claims (cycling through :data:`CLAIMS`).

    ``fresh``: the request's heading and passages carry a request-specific word, so the judge meets them as
    new text (parsing caches miss, as for a new answer over newly retrieved passages) while the verdicts stay
    those of the plain items."""
    heading, source_line = "## Ringkasan anggaran Aceh", ""
    if fresh:
        heading += f": jawaban {_tag(request_no)}"
        source_line = f"\nSalinan {_tag(request_no)}."
    out = []
    for i in range(size):
        claim, keys = CLAIMS[(request_no * size + i) % len(CLAIMS)]
        passages = tuple(replace(PASSAGES[k], text=PASSAGES[k].text + source_line) for k in keys)
        out.append(JudgeItem(f"r{request_no}-s{i}", claim, passages, context=heading, deadline=deadline))
    return out


def verdict_key(result: JudgeResult) -> tuple[Any, ...]:
    """A result without its request-specific item id, to compare two paths' verdicts on the same claims."""
    return (result.verdict, result.reasons, result.unverified_reason, result.spans)


def batch_histogram(metrics_text: str) -> dict[str, float]:
    """The ``aceh_judge_batch_size`` histogram of a replica's exposition text: cumulative ``le`` bucket
    counts (keys like ``"8.0"``, ``"+Inf"``) plus ``count`` and ``sum``."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, float] = {}
    for family in text_string_to_metric_families(metrics_text):
        if family.name != "aceh_judge_batch_size":
            continue
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                out[sample.labels["le"]] = sample.value
            elif sample.name.endswith("_count"):
                out["count"] = sample.value
            elif sample.name.endswith("_sum"):
                out["sum"] = sample.value
    return out


def histogram_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {key: after[key] - before.get(key, 0.0) for key in after}


def bins_from_cumulative(cumulative: dict[str, float]) -> dict[str, int]:
    """Cumulative ``le`` counts → batches per bin ("1", "2", "3-4", ..., ">128"), empty bins left out."""
    out: dict[str, int] = {}
    below, low = 0.0, 1
    for edge in BIN_EDGES:
        at = cumulative.get(f"{float(edge)}", below)
        if at - below:
            out[str(edge) if low == edge else f"{low}-{edge}"] = int(at - below)
        below, low = at, edge + 1
    if cumulative.get("+Inf", below) - below:
        out[f">{BIN_EDGES[-1]}"] = int(cumulative["+Inf"] - below)
    return out


def cumulative_from_sizes(sizes: Iterable[int]) -> dict[str, float]:
    sizes = list(sizes)
    out = {f"{float(edge)}": float(sum(1 for s in sizes if s <= edge)) for edge in BIN_EDGES}
    out.update({"+Inf": float(len(sizes)), "count": float(len(sizes)), "sum": float(sum(sizes))})
    return out


class Workload:
    """Request numbers never repeat within a run (so ``fresh`` requests stay new to every cache), and every
    result is checked against the in-process ``judge_batch`` verdicts of the same claims."""

    def __init__(self, fresh: bool, expected: dict[int, list[tuple[Any, ...]]]) -> None:
        self.fresh = fresh
        self.expected = expected
        self._next = 0

    def take(self, count: int) -> range:
        first, self._next = self._next, self._next + count
        return range(first, first + count)


async def closed_loop(call: Callable[[list[JudgeItem]], Awaitable[list[JudgeResult]]], clients: int,
                      total: int, workload: Workload) -> dict[str, Any]:
    """``clients`` concurrent callers issue ``total`` requests between them; checks every result."""
    latencies: list[float] = []
    mismatches = 0
    numbers = iter(workload.take(total))

    async def client() -> None:
        nonlocal mismatches
        for n in numbers:
            items = request_items(n, fresh=workload.fresh)
            started = time.perf_counter()
            results = await call(items)
            latencies.append(time.perf_counter() - started)
            if [r.item_id for r in results] != [i.item_id for i in items] or \
                    [verdict_key(r) for r in results] != workload.expected[n % len(workload.expected)]:
                mismatches += 1

    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return {"clients": clients, "requests": total, "items": total * ITEMS_PER_REQUEST,
            "wall_s": round(wall, 3), "items_per_s": round(total * ITEMS_PER_REQUEST / wall, 1),
            "p50_ms": round(percentile(latencies, 0.5) * 1000, 2),
            "p95_ms": round(percentile(latencies, 0.95) * 1000, 2), "mismatched_requests": mismatches,
            "driver_cpu_ms_per_item": round(cpu * 1000 / (total * ITEMS_PER_REQUEST), 3)}


def replica_cpu_s(marker: str = "ServeReplica:judgepool:JudgePool") -> float | None:
    """CPU seconds (user + system, all threads) used so far by the JudgePool replica process, read from
    /proc; None where that is not possible (not Linux, replica not found)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14 and 15 of stat)
    return None


def judge_pool_app(raw_config: dict[str, Any]) -> Any:
    """The JudgePool deployment alone, bound with the config's JudgePool options (ray imported lazily)."""
    from serve_app.app import JudgePoolDeployment
    from serve_app.config import AppConfig

    d = AppConfig.model_validate(raw_config).serve.deployment("JudgePool")
    options = {"num_replicas": d.num_replicas, "ray_actor_options": {"num_cpus": d.num_cpus},
               "max_ongoing_requests": d.max_ongoing_requests}
    deployment: Any = JudgePoolDeployment  # a Ray Serve Deployment; mypy sees the decorated class
    return deployment.options(**options).bind(raw_config)


def figures(details: dict[str, Any]) -> dict[str, Figure]:
    """Headline: Ray's items/s over the in-process judge's, at the lowest and highest concurrency."""
    ratios = details["items_per_s_ratio"]
    out: dict[str, Figure] = {}
    for workload in ("warm", "fresh"):
        levels = sorted(ratios.get(workload, {}), key=int)
        if levels:
            lo, hi = levels[0], levels[-1]
            low, high = ratios[workload][lo]["ray_over_direct"], ratios[workload][hi]["ray_over_direct"]
            out[f"Ray / in-process items/s, {workload}, {lo}-{hi} requests"] = f"{low:.2f}-{high:.2f}x"
    return out


class Rows:
    """One row per (workload, mode, concurrency): the median run by items/s, batches over all runs."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, workload: str, mode: str, runs: list[dict[str, Any]], cumulative: dict[str, float]) -> None:
        row = dict(sorted(runs, key=lambda r: r["items_per_s"])[len(runs) // 2])
        count = cumulative.get("count", 0.0)
        row.update(items_per_s_runs=[r["items_per_s"] for r in runs],
                   mismatched_requests=sum(r["mismatched_requests"] for r in runs), batches=int(count),
                   mean_batch=round(cumulative.get("sum", 0.0) / count, 2) if count else None,
                   batch_bins=bins_from_cumulative(cumulative))
        self.rows.append({"workload": workload, "mode": mode, **row})

    def ratios(self) -> dict[str, dict[str, dict[str, float]]]:
        by = {(r["workload"], r["mode"], r["clients"]): r["items_per_s"] for r in self.rows}
        out: dict[str, dict[str, dict[str, float]]] = {}
        for w, _, n in by:
            if (w, "ray", n) in by:
                out.setdefault(w, {})[str(n)] = {
                    f"ray_over_{base}": round(by[(w, "ray", n)] / by[(w, base, n)], 3)
                    for base in ("direct", "collector")}
        return out

    def print(self) -> None:
        print(f"{'workload':<8} {'mode':<10} {'conc':>4} {'items/s':>8} {'p50 ms':>8} {'p95 ms':>8} "
              f"{'cpu ms/item':>14} {'mean batch':>10}  batch sizes (batches)")
        for r in sorted(self.rows, key=lambda r: (r["workload"] != "warm", r["clients"], r["mode"])):
            cpu = f"{r['driver_cpu_ms_per_item']}"
            if "replica_cpu_ms_per_item" in r:
                cpu += f"+{r['replica_cpu_ms_per_item']}"
            print(f"{r['workload']:<8} {r['mode']:<10} {r['clients']:>4} {r['items_per_s']:>8} "
                  f"{r['p50_ms']:>8} {r['p95_ms']:>8} {cpu:>14} {r['mean_batch']:>10}  {r['batch_bins']}")
        for w, levels in self.ratios().items():
            print(f"{w}: Ray items/s over in-process items/s: " + ", ".join(
                f"{n} conc {v['ray_over_direct']}x direct / {v['ray_over_collector']}x collector"
                for n, v in levels.items()))


async def _measure(handle: Any, judge: Any, cfg: Any, workloads: dict[str, Workload], rows: Rows, *,
                   total: int, runs: int) -> None:
    """All modes interleaved run by run, so drifting load on a shared machine hits them alike."""
    from judge.batching import BatchCollector, judge_batch

    sizes: list[int] = []

    async def direct(items: list[JudgeItem]) -> list[JudgeResult]:
        sizes.append(len(items))
        return await judge_batch(judge, items)

    async def ray_call(items: list[JudgeItem]) -> list[JudgeResult]:
        results: list[JudgeResult] = await handle.judge_many.remote(items)
        return results

    for name, workload in workloads.items():
        for call in (direct, ray_call):
            await closed_loop(call, 4, 16, workload)  # warm-up (for "warm": fills both processes' caches)
        for n in LEVELS:
            sizes.clear()
            collector = BatchCollector(judge, max_batch_size=cfg.judge.max_batch_size,
                                       batch_wait_timeout_s=cfg.judge.batch_wait_timeout_s,
                                       batch_history=1 << 20)
            before = batch_histogram(await handle.metrics_text.remote())
            level: dict[str, list[dict[str, Any]]] = {"direct": [], "collector": [], "ray": []}
            for _ in range(runs):
                level["direct"].append(await closed_loop(direct, n, total, workload))
                level["collector"].append(await closed_loop(collector.submit_many, n, total, workload))
                cpu_before = replica_cpu_s()
                run = await closed_loop(ray_call, n, total, workload)
                cpu_after = replica_cpu_s()
                if cpu_before is not None and cpu_after is not None:
                    run["replica_cpu_ms_per_item"] = round((cpu_after - cpu_before) * 1000 / run["items"], 3)
                level["ray"].append(run)
            after = batch_histogram(await handle.metrics_text.remote())
            await collector.aclose()
            rows.add(name, "direct", level["direct"], cumulative_from_sizes(sizes))
            rows.add(name, "collector", level["collector"], cumulative_from_sizes(collector.batch_sizes))
            rows.add(name, "ray", level["ray"], histogram_delta(before, after))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=192, help="requests per level, mode and run")
    parser.add_argument("--runs", type=int, default=3, help="runs per level and mode (median reported)")
    parser.add_argument("--quick", action="store_true", help="48 requests, one run")
    args = parser.parse_args(argv)
    total, runs = (48, 1) if args.quick else (args.requests, args.runs)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

    import ray
    from ray import serve

    from judge.batching import judge_batch
    from serve_app.config import load_config
    from serve_app.runtime import factory

    cfg = load_config(str(REPO / "configs" / "default.yaml"), env={})
    raw = cfg.model_dump(mode="json")
    judge = factory.build_judge(cfg)
    expected = {n: [verdict_key(r) for r in asyncio.run(judge_batch(judge, request_items(n)))]
                for n in range(len(CLAIMS))}
    # Each workload keeps one request counter over both processes, so no request is seen twice anywhere.
    workloads = {"warm": Workload(False, expected), "fresh": Workload(True, expected)}
    load_before = os.getloadavg()
    rows = Rows()

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        serve.start(proxy_location="Disabled")
        handle = serve.run(judge_pool_app(raw), name="judgepool", route_prefix=None)
        asyncio.run(_measure(handle, judge, cfg, workloads, rows, total=total, runs=runs))
    finally:
        serve.shutdown()
        ray.shutdown()

    rows.print()
    bad = sum(r["mismatched_requests"] for r in rows.rows)
    if bad:
        print(f"WARNING: {bad} requests came back with results unlike the in-process judge_batch")
    d = cfg.serve.deployment("JudgePool")
    details = {
        "settings": {"engine": "embedded rule judge (judge.rules.RuleJudge)", "ray_init_num_cpus": 2,
                     "replica": {"num_replicas": d.num_replicas, "num_cpus": d.num_cpus,
                                 "max_ongoing_requests": d.max_ongoing_requests},
                     "max_batch_size": cfg.judge.max_batch_size,
                     "batch_wait_timeout_s": cfg.judge.batch_wait_timeout_s,
                     "items_per_request": ITEMS_PER_REQUEST, "distinct_claims": len(CLAIMS),
                     "distinct_passages": len(PASSAGES), "requests_per_level": total, "runs": runs,
                     "threads": "one asyncio loop per process; the rule judge runs on the event-loop thread",
                     "workloads": {"warm": "the same 3 requests' claims repeat (judge caches hot)",
                                   "fresh": "every request's heading and passages are new text"},
                     "reported": "median run by items/s; batch histogram summed over all runs of a level"},
        "loadavg_before": [round(x, 2) for x in load_before],
        "rows": rows.rows, "items_per_s_ratio": rows.ratios(),
    }
    result = Result(benchmark="judge_pool", figures=figures(details),
                    data="synthetic budget claims and passages (6 items a request)", in_sample=False,
                    command=command("judge_pool", argv), details=details)
    print(f"written to {write_result(result, quick=args.quick)}")
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
