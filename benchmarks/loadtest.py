"""Load test for a running aceh-rag deployment: open loop, Poisson arrivals.

    python -m benchmarks.loadtest --url http://HOST:8000 --api-key KEY --questions FILE \\
        --rate 4 --duration 60 [--route /query/v2] [--token JWT] [--slo-ms 600] [--out result.json]

Requests arrive at exponential inter-arrival times (seeded) whatever the server does, so a slow server
builds a queue instead of slowing the clients down. The run is bounded: at most rate x duration
requests on average, each with ``--timeout`` seconds; whatever is still running ``--timeout`` seconds
after the last arrival is abandoned and counted. Only the given URL is contacted (no proxies from the
environment, no redirects). Prints a table; ``--out`` also writes the metrics as JSON (never the key).

``run_closed_loop`` runs a fixed number of clients back to back (used by ``benchmarks.query_v2``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchmarks.harness import Figure, Result, command, write_result
from benchmarks.loadtest_metrics import BenchmarkMetrics, Outcome, summarize

ROUTES = ("/query/v2", "/query/v2/stream", "/query", "/search")
TERMINAL_EVENTS = frozenset({"done", "error"})
MAX_REQUESTS = 100_000  # a typo in --rate must not turn into a flood
DRAIN_GRACE_S = 2.0


def load_questions(path: str | Path) -> list[str]:
    """JSONL lines with ``question`` (or ``query``), or plain text, one question per line."""
    out: list[str] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if isinstance(row, dict):
                text = row.get("question") or row.get("query")
                if not isinstance(text, str) or not text.strip():
                    raise ValueError(f"{path}: a JSON line has neither 'question' nor 'query': {line[:80]}")
                out.append(text)
                continue
        out.append(line)
    if not out:
        raise ValueError(f"{path}: no questions")
    return out


def poisson_arrivals(rate: float, duration: float, seed: int, *,
                     max_requests: int = MAX_REQUESTS) -> list[float]:
    """Arrival offsets (s) in [0, duration): a Poisson process of ``rate`` per second."""
    if rate <= 0 or duration <= 0:
        raise ValueError("rate and duration must be positive")
    rng = random.Random(seed)
    out: list[float] = []
    t = rng.expovariate(rate)
    while t < duration and len(out) < max_requests:
        out.append(t)
        t += rng.expovariate(rate)
    return out


# ---------------------------------------------------------------------------- one request


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """(event, data) per complete frame; an unfinished frame at the end is not a frame (SSE rules)."""
    event = "message"
    data: list[str] = []
    async for line in lines:
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)


def _read_answer(out: Outcome, body: Any) -> None:
    if not isinstance(body, dict):
        return
    faith = body.get("faithfulness")
    verification = faith.get("verification") if isinstance(faith, dict) else body.get("verification")
    out.verification = verification if isinstance(verification, str) else None
    if "fallback_used" in body:
        out.fallback_used = bool(body["fallback_used"])
        out.fallback_reason = body.get("fallback_reason")


async def _stream(client: httpx.AsyncClient, route: str, payload: dict[str, Any], headers: dict[str, str],
                  started: float) -> Outcome:
    async with client.stream("POST", route, json=payload, headers=headers) as response:
        if response.status_code != 200:
            await response.aread()
            status = response.status_code
            return Outcome(False, status, str(status), time.perf_counter() - started)
        out = Outcome(True, 200, None, 0.0, terminal_frames=0)
        last_event, last_data = "", ""
        async for event, data in iter_sse(response.aiter_lines()):
            last_event, last_data = event, data
            if event in TERMINAL_EVENTS:
                out.terminal_frames = (out.terminal_frames or 0) + 1
            elif event == "answer.delta" and out.first_delta_s is None:
                out.first_delta_s = time.perf_counter() - started
            elif event == "annotations":
                try:
                    _read_answer(out, json.loads(data))
                except ValueError:
                    pass
        out.latency_s = time.perf_counter() - started
    out.terminal_last = last_event in TERMINAL_EVENTS
    if not out.terminal_last:
        out.ok, out.error = False, "stream_unterminated"
    elif out.terminal_frames != 1:
        out.ok, out.error = False, "stream_extra_terminal"
    elif last_event == "error":
        try:
            error_status = json.loads(last_data).get("status")
        except (ValueError, AttributeError):
            error_status = None
        out.ok, out.error = False, f"stream_error_{error_status}"
    return out


async def send_one(client: httpx.AsyncClient, route: str, question: str, headers: dict[str, str],
                   timeout: float) -> Outcome:
    """One request, bounded by ``timeout`` seconds in all; never raises for a failed request."""
    payload: dict[str, Any] = {"query": question}
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            if route.endswith("/stream"):
                return await _stream(client, route, payload, headers, started)
            response = await client.post(route, json=payload, headers=headers)
            latency = time.perf_counter() - started
    except (TimeoutError, httpx.TimeoutException):
        return Outcome(False, None, "timeout", time.perf_counter() - started)
    except httpx.TransportError:
        return Outcome(False, None, "connection_error", time.perf_counter() - started)
    if not 200 <= response.status_code < 300:
        return Outcome(False, response.status_code, str(response.status_code), latency)
    out = Outcome(True, response.status_code, None, latency)
    try:
        _read_answer(out, response.json())
    except ValueError:
        out.ok, out.error = False, "invalid_json"
    return out


# ---------------------------------------------------------------------------- runs


def _headers(api_key: str, token: str | None) -> dict[str, str]:
    headers = {"X-API-Key": api_key}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _client(url: str, connections: int, timeout: float) -> httpx.AsyncClient:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--url must be http(s)://HOST[:PORT], not {url!r}")
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    # trust_env=False: no proxy from the environment; follow_redirects=False: only this URL is contacted.
    return httpx.AsyncClient(base_url=url.rstrip("/"), limits=limits, timeout=httpx.Timeout(timeout),
                             trust_env=False, follow_redirects=False)


def _check_route(route: str) -> None:
    if route not in ROUTES:
        raise ValueError(f"route must be one of {', '.join(ROUTES)}, not {route!r}")


async def run_open_loop(url: str, api_key: str, questions: list[str], *, rate: float, duration: float,
                        route: str = "/query/v2", token: str | None = None, seed: int = 0,
                        concurrency_cap: int = 256, timeout: float = 30.0, slo_ms: float = 600.0,
                        max_requests: int = MAX_REQUESTS) -> BenchmarkMetrics:
    """Send Poisson arrivals for ``duration`` s; at most ``concurrency_cap`` requests in flight (the rest
    wait, and the wait counts against the SLO). Returns when every request finished or was abandoned."""
    _check_route(route)
    arrivals = poisson_arrivals(rate, duration, seed, max_requests=max_requests)
    headers = _headers(api_key, token)
    slots = asyncio.Semaphore(concurrency_cap)
    outcomes: list[Outcome] = []

    async with _client(url, concurrency_cap, timeout) as client:
        t0 = time.perf_counter()

        async def one(i: int, at: float) -> None:
            capped = slots.locked()
            async with slots:
                wait = max(0.0, time.perf_counter() - (t0 + at))
                out = await send_one(client, route, questions[i % len(questions)], headers, timeout)
            out.wait_s, out.waited_for_cap = wait, capped
            outcomes.append(out)

        tasks: list[asyncio.Task[None]] = []
        for i, at in enumerate(arrivals):
            delay = t0 + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i, at)))
        pending: set[asyncio.Task[None]] = set()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout + DRAIN_GRACE_S)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        elapsed = time.perf_counter() - t0
    metrics = summarize(outcomes, elapsed, route=route, slo_ms=slo_ms, sent=len(arrivals))
    if pending:
        metrics.errors["abandoned"] = len(pending)
    metrics.extra.update(mode="open", rate=rate, duration=duration, seed=seed,
                         concurrency_cap=concurrency_cap, expected=round(rate * duration, 1))
    return metrics


async def run_closed_loop(url: str, api_key: str, questions: list[str], clients: int, requests: int,
                          route: str, token: str | None = None, *, timeout: float = 60.0,
                          slo_ms: float = 600.0) -> dict[str, Any]:
    """``clients`` clients send ``requests`` requests in all, each waiting for its previous answer."""
    _check_route(route)
    headers = _headers(api_key, token)
    counter = iter(range(requests))
    outcomes: list[Outcome] = []
    async with _client(url, clients, timeout) as client:
        t0 = time.perf_counter()

        async def worker() -> None:
            for i in counter:
                question = questions[i % len(questions)]
                outcomes.append(await send_one(client, route, question, headers, timeout))

        await asyncio.gather(*(worker() for _ in range(clients)))
        elapsed = time.perf_counter() - t0
    metrics = summarize(outcomes, elapsed, route=route, slo_ms=slo_ms)
    metrics.extra.update(mode="closed", clients=clients, requests=requests)
    return asdict(metrics)


# ---------------------------------------------------------------------------- report


def format_table(m: dict[str, Any]) -> str:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f} ms"

    rows = [
        ("route", m["route"]),
        ("sent / completed / failed", f"{m['sent']} / {m['completed']} / {m['failed']}"),
        ("duration", f"{m['duration_s']:.2f} s"),
        ("throughput", f"{m['throughput_rps']:.2f} req/s"),
        (f"goodput (SLO {m['slo_ms']:g} ms)", f"{m['goodput_rps']:.2f} req/s"
         + ("" if m["slo_attainment"] is None else f" ({m['slo_attainment']:.1%} of sent)")),
        ("latency mean / p50", f"{ms(m['mean_latency_ms'])} / {ms(m['p50_latency_ms'])}"),
        ("latency p95 / p99 / max", f"{ms(m['p95_latency_ms'])} / {ms(m['p99_latency_ms'])} / "
                                    f"{ms(m['max_latency_ms'])}"),
        ("errors", ", ".join(f"{k}: {v}" for k, v in m["errors"].items()) or "none"),
        ("verification", ", ".join(f"{k}: {v}" for k, v in m["verification"].items())),
        ("fallback used", f"{m['fallback_used']}" + (" (" + ", ".join(f"{k}: {v}" for k, v in
                                                                     m["fallback_reasons"].items()) + ")"
                                                      if m["fallback_reasons"] else "")),
    ]
    if m["streams"]:
        rows += [
            ("first answer.delta p50/p95/p99",
             " / ".join(ms(m[f"{q}_first_delta_ms"]) for q in ("p50", "p95", "p99"))),
            ("streams with one terminal frame", f"{m['streams_terminal_ok']} / {m['streams']}"
             + (" (all)" if m["streams_all_terminal_ok"] else " (NOT all)")),
        ]
    if m["cap_waits"]:
        rows.append(("waited for concurrency cap", f"{m['cap_waits']} (p95 wait {ms(m['p95_wait_ms'])})"))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def figures(metrics: dict[str, Any]) -> dict[str, Figure]:
    """Headline: latency quantiles, throughput and goodput of the completed requests."""
    return {"p50 / p95 ms": f"{metrics['p50_latency_ms']} / {metrics['p95_latency_ms']}",
            "req/s": metrics["throughput_rps"],
            f"goodput under {metrics['slo_ms']:g} ms": metrics["goodput_rps"], "failed": metrics["failed"]}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.loadtest", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="base URL of the deployment, e.g. http://127.0.0.1:8000")
    p.add_argument("--api-key", required=True, help="sent as X-API-Key")
    p.add_argument("--token", help="a JWT, sent as Authorization: Bearer")
    p.add_argument("--questions", required=True, help="JSONL (question/query) or plain text, one per line")
    p.add_argument("--rate", type=float, required=True, help="mean arrivals per second (Poisson)")
    p.add_argument("--duration", type=float, required=True, help="seconds of arrivals")
    p.add_argument("--route", default="/query/v2", choices=ROUTES)
    p.add_argument("--concurrency-cap", type=int, default=256, help="most requests in flight at once")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request, in all")
    p.add_argument("--slo-ms", type=float, default=600.0, help="latency objective for goodput")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="write the metrics as JSON here")
    return p


def _redacted(argv: list[str]) -> list[str]:
    out, hide = [], False
    for arg in argv:
        name = arg.split("=", 1)[0]
        if hide:
            out.append("***")
        elif name in ("--api-key", "--token") and "=" in arg:
            out.append(f"{name}=***")
        else:
            out.append(arg)
        hide = arg in ("--api-key", "--token")
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rate * args.duration > MAX_REQUESTS:
        print(f"loadtest: rate x duration is over {MAX_REQUESTS} requests; lower one", file=sys.stderr)
        return 2
    if args.concurrency_cap < 1 or args.timeout <= 0:
        print("loadtest: --concurrency-cap must be >= 1 and --timeout > 0", file=sys.stderr)
        return 2
    questions = load_questions(args.questions)
    metrics = asyncio.run(run_open_loop(
        args.url, args.api_key, questions, rate=args.rate, duration=args.duration, route=args.route,
        token=args.token, seed=args.seed, concurrency_cap=args.concurrency_cap, timeout=args.timeout,
        slo_ms=args.slo_ms))
    result = asdict(metrics)
    print(format_table(result))
    if args.out:
        settings = {k: v for k, v in vars(args).items() if k not in ("api_key", "token")}
        record = Result(
            benchmark="loadtest", figures=figures(result),
            data=f"{args.questions} against {args.url}{args.route}", in_sample=False,
            command=command("loadtest", _redacted(sys.argv[1:] if argv is None else argv)),
            details={"settings": settings, "metrics": result})
        print(f"wrote {write_result(record, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
