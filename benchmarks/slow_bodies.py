"""Issue #35's "Done when" for slow bodies: N sockets (default 1,000) that send a request's headers with
``Content-Length: 50000`` and then one body byte every few seconds, first without a key and then with a valid
key. Measured throughout each phase: ``GET /healthz`` latency (goal: max < 2 s, none fails), whether a valid
``/query/v2`` sent while the sockets are open is answered 200, and whether every slow socket is answered
(401, 408, 413 or 503) and closed by the server within 15 s of its headers.

    python -m benchmarks.slow_bodies [--sockets 1000] [--interval-s 3] [--url URL --api-key KEY]
                                     [--out /tmp/slow_bodies.json]

Without ``--url`` the service is the in-process app over the demo corpus on uvicorn (as ``benchmarks.fuzz``
serves it: the same Ingress middleware and routes as a Ray Serve replica; Ray's proxy is not in front), in a
child process of its own so that the client's work is not counted as the server's latency. ``--url``
measures a running service instead (``aceh-rag serve``/``make serve``). One valid query warms the service up
before the first phase. The client uses plain asyncio sockets, so what is measured is the server's handling
of raw HTTP/1.1. Prints a table and writes the JSON record to ``--out`` (default /tmp/slow_bodies.json),
never into benchmarks/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.harness import Result, command, percentile, write_result

API_KEY = "slow-bodies-key"
ANSWERED = frozenset({401, 408, 413, 503})
GOAL_HEALTHZ_S, GOAL_CLOSED_S = 2.0, 15.0
QUESTION = "Berapa pagu belanja pendidikan dalam APBA 2023?"  # invented, over the demo corpus
PROBE_TIMEOUT_S, QUERY_TIMEOUT_S = 10.0, 120.0


@dataclass
class SocketOutcome:
    status: int | None = None
    answered_s: float | None = None
    closed_s: float | None = None
    error: str | None = None


@dataclass
class Phase:
    name: str
    sockets: list[SocketOutcome] = field(default_factory=list)
    healthz_s: list[float | None] = field(default_factory=list)
    healthz_at_s: list[float] = field(default_factory=list)  # when each probe was sent, from the start
    queries: list[dict[str, Any]] = field(default_factory=list)
    opened_s: float = 0.0


async def _read_response(reader: asyncio.StreamReader, timeout_s: float) -> tuple[int, float, float | None]:
    """The status of the response on ``reader``, when it came and when the server closed the connection
    (monotonic times; None: not closed within ``timeout_s`` of the call)."""
    deadline = time.monotonic() + timeout_s
    line = await asyncio.wait_for(reader.readline(), timeout_s)
    if not line:
        raise ConnectionError("closed without an answer")
    status, answered = int(line.split()[1]), time.monotonic()
    try:
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            while await reader.read(65_536):
                pass
    except TimeoutError:
        return status, answered, None
    return status, answered, time.monotonic()


async def _request(host: str, port: int, raw: bytes, timeout_s: float) -> tuple[int, float, bytes]:
    """One complete request on its own connection (``Connection: close``): status, seconds, body."""
    started = time.monotonic()
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    try:
        writer.write(raw)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(-1), timeout_s)
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), time.monotonic() - started, body


def _head(method: str, host: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def slow_socket(
    host: str, port: int, key: str | None, *, length: int, interval_s: float, give_up_s: float
) -> SocketOutcome:
    """Headers, then one space (valid JSON padding) every ``interval_s``, until the server answers."""
    out = SocketOutcome()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), give_up_s)
    except (OSError, TimeoutError) as e:
        out.error = f"connect: {type(e).__name__}"
        return out
    headers = {"Content-Type": "application/json", "Content-Length": str(length)}
    if key is not None:
        headers["X-API-Key"] = key

    async def drip() -> None:
        try:
            for _ in range(length):
                await asyncio.sleep(interval_s)
                writer.write(b" ")
                await writer.drain()
        except OSError:
            return  # the server closed the connection: nothing more to send

    started = time.monotonic()
    writer.write(_head("POST", host, "/query/v2", headers))
    dripping = asyncio.create_task(drip())
    try:
        out.status, answered, closed = await _read_response(reader, give_up_s)
        out.answered_s = answered - started
        out.closed_s = None if closed is None else closed - started
    except (OSError, ConnectionError, TimeoutError, ValueError, IndexError) as e:
        out.error = type(e).__name__
    finally:
        dripping.cancel()
        writer.close()
    return out


async def probe_healthz(host: str, port: int, phase: Phase, stop: asyncio.Event) -> None:
    raw = _head("GET", host, "/healthz", {"Connection": "close"})
    started = time.monotonic()
    while not stop.is_set():
        phase.healthz_at_s.append(round(time.monotonic() - started, 2))
        try:
            status, seconds, _ = await _request(host, port, raw, PROBE_TIMEOUT_S)
            phase.healthz_s.append(seconds if status == 200 else None)
        except (OSError, TimeoutError, ValueError, IndexError):
            phase.healthz_s.append(None)
        await asyncio.sleep(0.2)


async def valid_query(host: str, port: int, key: str) -> dict[str, Any]:
    body = json.dumps({"query": QUESTION}).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "X-API-Key": key,
               "Connection": "close"}
    try:
        status, seconds, answer = await _request(
            host, port, _head("POST", host, "/query/v2", headers) + body, QUERY_TIMEOUT_S
        )
    except (OSError, TimeoutError, ValueError, IndexError) as e:
        return {"status": None, "seconds": None, "error": type(e).__name__}
    return {"status": status, "seconds": round(seconds, 3), "bytes": len(answer)}


async def run_phase(
    name: str, host: str, port: int, *, slow_key: str | None, api_key: str, sockets: int, length: int,
    interval_s: float, give_up_s: float,
) -> Phase:
    phase = Phase(name)
    stop = asyncio.Event()
    probe = asyncio.create_task(probe_healthz(host, port, phase, stop))
    started = time.monotonic()
    slow = [
        asyncio.create_task(
            slow_socket(host, port, slow_key, length=length, interval_s=interval_s, give_up_s=give_up_s)
        )
        for _ in range(sockets)
    ]
    await asyncio.sleep(0.5)  # every socket has sent its headers: a valid query now, and twice more
    phase.opened_s = time.monotonic() - started
    for at in (0.0, 4.0, 8.0):
        await asyncio.sleep(max(0.0, started + phase.opened_s + at - time.monotonic()))
        sent_at = round(time.monotonic() - started, 2)
        phase.queries.append({"at_s": sent_at, **await valid_query(host, port, api_key)})
    phase.sockets = list(await asyncio.gather(*slow))
    stop.set()
    await probe
    return phase


def summary(phase: Phase) -> dict[str, Any]:
    answered = [s for s in phase.sockets if s.status in ANSWERED]
    closed = [s.closed_s for s in phase.sockets if s.closed_s is not None]
    probes = [h for h in phase.healthz_s if h is not None]
    statuses: dict[str, int] = {}
    for s in phase.sockets:
        key = str(s.status) if s.status is not None else f"none ({s.error})"
        statuses[key] = statuses.get(key, 0) + 1
    return {
        "sockets": len(phase.sockets),
        "statuses": statuses,
        "answered": len(answered),
        "closed_within_goal": sum(1 for c in closed if c < GOAL_CLOSED_S),
        "max_answered_s": round(max((s.answered_s or 0.0) for s in phase.sockets), 2),
        "max_closed_s": round(max(closed), 2) if closed else None,
        "healthz_probes": len(phase.healthz_s),
        "healthz_failed": len(phase.healthz_s) - len(probes),
        "healthz_max_s": round(max(probes), 3) if probes else None,
        "healthz_p50_s": round(percentile(probes, 0.5), 3) if probes else None,
        "healthz_slowest": sorted(
            ({"at_s": at, "s": None if h is None else round(h, 3)} for at, h in zip(phase.healthz_at_s,
             phase.healthz_s, strict=True)), key=lambda x: -1.0 if x["s"] is None else -x["s"])[:5],
        "queries": phase.queries,
        "query_answered": all(q["status"] == 200 for q in phase.queries),
        "goals_met": (
            len(answered) == len(phase.sockets)
            and sum(1 for c in closed if c < GOAL_CLOSED_S) == len(phase.sockets)
            and len(probes) == len(phase.healthz_s) and bool(probes) and max(probes) < GOAL_HEALTHZ_S
            and all(q["status"] == 200 for q in phase.queries)
        ),
    }


def raise_fd_limit(sockets: int) -> tuple[int, int]:
    """Room for every slow socket twice (the client's end and, in-process, the server's) plus the rest."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * sockets + 1024
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            raise SystemExit(f"RLIMIT_NOFILE hard limit {hard} < {need} needed for {sockets} sockets")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


async def measure(url: str, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    out: dict[str, dict[str, Any]] = {"warm_up": {"queries": [await valid_query(host, port, args.api_key)]}}
    for name, key in (("no_key", None), ("valid_key", args.api_key)):
        phase = await run_phase(
            name, host, port, slow_key=key, api_key=args.api_key, sockets=args.sockets,
            length=args.content_length, interval_s=args.interval_s, give_up_s=args.give_up_s,
        )
        out[name] = summary(phase)
        out[name]["sockets_detail_sample"] = [asdict(s) for s in phase.sockets[:5]]
    return out


def print_table(report: dict[str, dict[str, Any]]) -> None:
    print(f"{'slow sockets':<12} {'n':>5} {'answered':>9} {'closed<15s':>11} {'max close s':>12} "
          f"{'healthz max s':>14} {'healthz fail':>13}  {'queries (status, s)':<28} goals")
    for name, r in report.items():
        if name == "warm_up":
            continue
        queries = ", ".join(f"{q['status']} {q['seconds']}" for q in r["queries"])
        print(f"{name:<12} {r['sockets']:>5} {r['answered']:>9} {r['closed_within_goal']:>11} "
              f"{r['max_closed_s']!s:>12} {r['healthz_max_s']!s:>14} {r['healthz_failed']:>13}  "
              f"{queries:<28} {'met' if r['goals_met'] else 'NOT met'}")
        print(f"{'':<12} statuses {json.dumps(r['statuses'])}")


def _serve_demo(api_key: str, urls: Any, stop: Any) -> None:
    """The child process: the demo app on uvicorn until ``stop`` is set; its URL goes to ``urls``."""
    from benchmarks.fuzz import demo_app
    from benchmarks.inprocess import serving

    with tempfile.TemporaryDirectory() as tmp, serving(demo_app(Path(tmp), api_key)) as url:
        urls.put(url)
        stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sockets", type=int, default=1000)
    p.add_argument("--content-length", type=int, default=50_000)
    p.add_argument("--interval-s", type=float, default=3.0, help="seconds between two body bytes")
    p.add_argument("--give-up-s", type=float, default=30.0, help="a socket not answered by then: failed")
    p.add_argument("--url", help="a running service (default: the in-process app on uvicorn, demo corpus)")
    p.add_argument("--api-key", default=API_KEY, help="a key the service at --url accepts")
    p.add_argument("--out", default="/tmp/slow_bodies.json")
    args = p.parse_args(argv)
    limits = raise_fd_limit(args.sockets)
    started = time.perf_counter()
    if args.url:
        report = asyncio.run(measure(args.url.rstrip("/"), args))
        target = args.url
    else:
        context = multiprocessing.get_context("spawn")
        urls, stop = context.Queue(), context.Event()
        server = context.Process(target=_serve_demo, args=(args.api_key, urls, stop), daemon=True)
        server.start()
        try:
            report = asyncio.run(measure(urls.get(timeout=600), args))
        finally:
            stop.set()
            server.join(timeout=30)
        target = "the in-process app (demo corpus) on uvicorn (h11, defaults), 127.0.0.1, own process"
    print_table(report)
    phases = {k: v for k, v in report.items() if k != "warm_up"}
    path = write_result(
        Result(
            benchmark="slow_bodies",
            figures={
                "healthz max s (no key / key)": f"{report['no_key']['healthz_max_s']} / "
                                                 f"{report['valid_key']['healthz_max_s']}",
                "goals met": all(r["goals_met"] for r in phases.values()),
            },
            # short: the README table shows it (details hold Content-Length and the byte interval)
            data=f"{args.sockets} slow-body sockets, no key then a valid key",
            in_sample=False,
            command=command("slow_bodies", argv),
            details={**report, "target": target, "content_length": args.content_length,
                     "interval_s": args.interval_s, "rlimit_nofile": list(limits),
                     "seconds": round(time.perf_counter() - started)},
        ),
        args.out,
    )
    print(f"wrote {path}")
    return 0 if all(r["goals_met"] for r in phases.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
