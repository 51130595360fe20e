"""Soak: closed-loop clients ask without pause for several minutes; per minute the latency quantiles and
errors, and the resident memory (RSS) of every Ray Serve replica process, sampled at the end of each minute.

    python -m benchmarks.soak --index DIR [--minutes 10] [--clients 32] [--questions FILE]
    python -m benchmarks.soak --url http://127.0.0.1:8000 --api-key KEY [--serve-pid PID] ...

With ``--index`` it starts ``make serve`` itself (``ACEH_INDEX_DIR=DIR`` served as it is, ``ACEH_CORPUS``
unset, a free port, a throw-away SQLite store) and stops it with Ctrl-C's SIGINT at the end; with ``--url``
it uses a service that is already running (memory is then read from the replica processes on this host:
``--serve-pid`` limits them to one process tree, e.g. that of ``make serve``).

Goals (issue 16): no error at all; the p95 latency of the last minute at most 1.2x that of the second
minute; the RSS of every replica grows by under 10 % from the end of minute 2 to the end of the run.
Replicas are the processes whose title Ray sets to ``ray::ServeReplica:APP:DEPLOYMENT``; the proxy
(``ray::ProxyActor``) is sampled too. A replica that is replaced during the run has no growth figure and
fails the memory goal. Prints a table; writes JSON (``--out``, default ``benchmarks/results/soak.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO, Figure, Result, command, percentile, write_result
from benchmarks.loadtest import ROUTES, _client, _headers, _redacted, load_questions, send_one
from benchmarks.loadtest_metrics import Outcome

QUESTIONS = REPO / "benchmarks" / "data" / "legal_questions.jsonl"
API_KEY = "soak-key"
P95_GROWTH_LIMIT = 1.2  # last minute's p95 / second minute's
RSS_GROWTH_LIMIT = 0.10  # per replica, end of minute 2 → end of the run
BASELINE_MINUTE = 2
_REPLICA = re.compile(r"ray::(?:\S*:)?ServeReplica:(?P<app>[^:\s]+):(?P<deployment>[A-Za-z0-9_-]+)")
_PROXY = re.compile(r"ray::ProxyActor\b")


# ---------------------------------------------------------------------------- load


@dataclass
class Minute:
    minute: int  # 1-based
    requests: int
    errors: dict[str, int]
    p50_ms: float | None
    p95_ms: float | None


def per_minute(done: list[tuple[float, Outcome]], minutes: int) -> list[Minute]:
    """Responses by the minute they completed in (offset from the start); a request still running when the
    run ended counts in the last minute."""
    rows = []
    for m in range(minutes):
        bucket = [o for t, o in done if min(int(t // 60), minutes - 1) == m]
        ok = [o.latency_s * 1000 for o in bucket if o.ok]
        errors: dict[str, int] = {}
        for o in bucket:
            if not o.ok:
                errors[o.error or "unknown"] = errors.get(o.error or "unknown", 0) + 1
        rows.append(Minute(
            m + 1, len(bucket), dict(sorted(errors.items())),
            round(percentile(ok, 0.5), 1) if ok else None, round(percentile(ok, 0.95), 1) if ok else None,
        ))
    return rows


async def closed_loop(url: str, api_key: str, questions: list[str], *, clients: int, seconds: float,
                      route: str, timeout: float) -> list[tuple[float, Outcome]]:
    """``clients`` clients, each sending its next question when its previous answer is in, until
    ``seconds`` have passed; returns (completion offset, outcome) per request."""
    done: list[tuple[float, Outcome]] = []
    headers = _headers(api_key, None)
    async with _client(url, clients, timeout) as client:
        t0 = time.perf_counter()

        async def worker(k: int) -> None:
            i = k
            while time.perf_counter() - t0 < seconds:
                out = await send_one(client, route, questions[i % len(questions)], headers, timeout)
                done.append((time.perf_counter() - t0, out))
                i += clients

        await asyncio.gather(*(worker(k) for k in range(clients)))
    return done


# ---------------------------------------------------------------------------- memory


@dataclass
class Replica:
    role: str  # the deployment name, or "proxy"
    pid: int
    rss_mb: list[float | None] = field(default_factory=list)  # one sample per minute end; None: gone

    def growth(self, baseline_minute: int) -> float | None:
        """(last sample - the sample at the end of ``baseline_minute``) / that sample; None when the
        replica was not there at both."""
        if len(self.rss_mb) <= baseline_minute:
            return None
        base, last = self.rss_mb[baseline_minute], self.rss_mb[-1]
        if base is None or last is None or base <= 0:
            return None
        return round((last - base) / base, 4)


def find_replicas(app: str, root_pid: int | None) -> dict[int, str]:
    """pid → role of the Ray Serve replica processes of ``app`` (and the proxies) on this host, only among
    the descendants of ``root_pid`` when given (other Ray clusters may run here)."""
    import psutil

    if root_pid is not None:
        try:
            procs = psutil.Process(root_pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return {}
    else:
        procs = list(psutil.process_iter())
    found: dict[int, str] = {}
    for proc in procs:
        try:
            title = " ".join(proc.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        m = _REPLICA.search(title)
        if m is not None and m.group("app") == app:
            found[proc.pid] = m.group("deployment")
        elif _PROXY.search(title):
            found[proc.pid] = "proxy"
    return found


def rss_mb(pid: int) -> float | None:
    import psutil

    try:
        rss: int = psutil.Process(pid).memory_info().rss
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    return round(rss / 2**20, 1)


class MemorySampler:
    """Samples every replica's RSS now (minute 0) and at the end of each minute, in a thread."""

    def __init__(self, app: str, root_pid: int | None, minutes: int) -> None:
        self.app, self.root_pid, self.minutes = app, root_pid, minutes
        self.replicas: dict[int, Replica] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self, index: int) -> None:
        for pid, role in find_replicas(self.app, self.root_pid).items():
            self.replicas.setdefault(pid, Replica(role, pid, [None] * index))
        for replica in self.replicas.values():
            replica.rss_mb.append(rss_mb(replica.pid))

    def _run(self) -> None:
        t0 = time.monotonic()
        self.sample(0)
        for minute in range(1, self.minutes + 1):
            if self._stop.wait(max(0.0, t0 + 60 * minute - time.monotonic())):
                return
            self.sample(minute)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            self._stop.set()
        self._thread.join(timeout=30)  # the last sample lands at the end of the last minute
        self._stop.set()


# ---------------------------------------------------------------------------- make serve


@contextmanager
def make_serve(index: Path, *, port: int, timeout_s: float) -> Iterator[subprocess.Popen[bytes]]:
    """``make serve`` on ``index`` as an operator runs it; SIGINT to its process group at the end (what
    Ctrl-C sends), SIGKILL if it has not stopped within two minutes."""
    from benchmarks.service import wait_healthy

    with tempfile.TemporaryDirectory(prefix="aceh-soak-") as tmp:
        env = {k: v for k, v in os.environ.items() if k != "ACEH_CORPUS"}
        env.update(ACEH_INDEX_DIR=str(index), ACEH_PORT=str(port), ACEH_API_KEYS=API_KEY,
                   ACEH_DATABASE_URL=f"sqlite:///{tmp}/soak.db")
        log = open(Path(tmp) / "serve.log", "wb")  # noqa: SIM115 - closed below, after the process
        proc = subprocess.Popen(["make", "serve"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", timeout_s=timeout_s, alive=lambda: proc.poll() is None)
            yield proc
        except RuntimeError:
            log.flush()
            sys.stderr.write((Path(tmp) / "serve.log").read_text(errors="replace")[-3000:])
            raise
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            log.close()


# ---------------------------------------------------------------------------- report


def goals(rows: list[Minute], replicas: list[Replica], baseline_minute: int) -> dict[str, Any]:
    errors = sum(sum(r.errors.values()) for r in rows)
    second, last = (rows[baseline_minute - 1].p95_ms if len(rows) >= baseline_minute else None,
                    rows[-1].p95_ms if rows else None)
    ratio = round(last / second, 3) if second and last is not None else None
    growths = {f"{r.role}:{r.pid}": r.growth(baseline_minute) for r in replicas}
    known = [g for g in growths.values() if g is not None]
    return {
        "errors": errors,
        "errors_met": errors == 0,
        "p95_last_over_second_minute": ratio,
        "p95_met": ratio is not None and ratio <= P95_GROWTH_LIMIT,
        "rss_growth": growths,
        "rss_growth_max": max(known) if known else None,
        "rss_met": bool(growths) and len(known) == len(growths) and max(known) < RSS_GROWTH_LIMIT,
    }


def format_report(rows: list[Minute], replicas: list[Replica], result: dict[str, Any]) -> str:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    lines = [f"{'minute':>6} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8}  errors"]
    for r in rows:
        errs = ", ".join(f"{k}: {v}" for k, v in r.errors.items()) or "0"
        lines.append(f"{r.minute:>6} {r.requests:>8} {ms(r.p50_ms):>8} {ms(r.p95_ms):>8}  {errs}")
    lines.append("")
    lines.append("RSS MB at the end of each minute (minute 0: the start)")
    for rep in sorted(replicas, key=lambda x: (x.role, x.pid)):
        samples = " ".join("gone" if v is None else f"{v:.0f}" for v in rep.rss_mb)
        growth = result["rss_growth"][f"{rep.role}:{rep.pid}"]
        shown = "n/a" if growth is None else f"{growth:+.1%}"
        lines.append(f"  {rep.role:<10} pid {rep.pid:<8} {samples}  growth {shown}")
    verdict = {True: "met", False: "MISSED"}
    lines.append("")
    lines.append(f"errors {result['errors']} ({verdict[result['errors_met']]}); p95 last / second minute "
                 f"{result['p95_last_over_second_minute']} ({verdict[result['p95_met']]}); RSS growth max "
                 f"{result['rss_growth_max']} ({verdict[result['rss_met']]})")
    return "\n".join(lines)


def figures(result: dict[str, Any], requests: int) -> dict[str, Figure]:
    growth = result["rss_growth_max"]
    return {
        "errors": result["errors"],
        "p95 last / 2nd minute": result["p95_last_over_second_minute"] or "n/a",
        "max RSS growth": "n/a" if growth is None else f"{growth:.1%}",
        "requests": requests,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0])
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--index", help="start `make serve` on this index (served as it is)")
    target.add_argument("--url", help="a running service, e.g. http://127.0.0.1:8000")
    p.add_argument("--api-key", help="X-API-Key for --url (with --index the run sets its own)")
    p.add_argument("--serve-pid", type=int, help="with --url: sample only replicas under this process")
    p.add_argument("--app", default="aceh-rag", help="the Ray Serve application's name")
    p.add_argument("--minutes", type=int, default=10)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--questions", default=str(QUESTIONS), help="JSONL (question/query) or text lines")
    p.add_argument("--route", default="/query/v2", choices=ROUTES)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request, in all")
    p.add_argument("--startup-timeout", type=float, default=900.0, help="seconds for `make serve` to be up")
    p.add_argument("--out", help="results JSON (default benchmarks/results/soak.json)")
    args = p.parse_args(argv)
    if args.minutes < BASELINE_MINUTE or args.clients < 1:
        p.error(f"--minutes must be at least {BASELINE_MINUTE} and --clients at least 1")
    if args.url and not args.api_key:
        p.error("--url needs --api-key")
    questions = load_questions(args.questions)
    seconds = 60.0 * args.minutes

    def soak(url: str, api_key: str, root_pid: int | None) -> tuple[list[tuple[float, Outcome]],
                                                                    list[Replica]]:
        with MemorySampler(args.app, root_pid, args.minutes) as sampler:
            done = asyncio.run(closed_loop(url, api_key, questions, clients=args.clients, seconds=seconds,
                                           route=args.route, timeout=args.timeout))
        return done, list(sampler.replicas.values())

    if args.index:
        from benchmarks.service import free_port

        port = free_port()
        with make_serve(Path(args.index), port=port, timeout_s=args.startup_timeout) as proc:
            done, replicas = soak(f"http://127.0.0.1:{port}", API_KEY, proc.pid)
        target_text = f"make serve on {args.index}"
    else:
        done, replicas = soak(args.url, args.api_key, args.serve_pid)
        target_text = args.url
    rows = per_minute(done, args.minutes)
    result = goals(rows, replicas, BASELINE_MINUTE)
    print(format_report(rows, replicas, result))
    details = {
        "target": target_text, "route": args.route, "clients": args.clients, "minutes": args.minutes,
        "questions": args.questions, "goals": result, "minutes_table": [asdict(r) for r in rows],
        "replicas": [asdict(r) for r in replicas],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
    }
    # The default questions are the 44 the serving path was profiled on (as in query_v2): in-sample.
    asked = Path(args.questions).resolve()
    shown = asked.relative_to(REPO) if asked.is_relative_to(REPO) else asked  # no checkout path in the README
    record = Result(benchmark="soak", figures=figures(result, len(done)),
                    data=f"{shown} via {target_text}", in_sample=True,
                    command=command("soak", _redacted(sys.argv[1:] if argv is None else argv)),
                    details=details)
    print(f"wrote {write_result(record, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
