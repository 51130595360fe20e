"""Fuzz every route of ``/openapi.json`` with schemathesis, with a valid key, a wrong key and none.

Each case is checked for: no 5xx, a status the route declares (the contract's status table), the declared
content type, and a body valid against the declared schema; invalid bodies (negative mode) must be refused
with a 4xx. The app is the in-process one over the demo corpus (the same routes and checks as every Ingress
replica). Prints cases and failures per route and writes ``benchmarks/results/fuzz.json``.

    python -m benchmarks.fuzz [--examples 200] [--seed N] [--out PATH]

``tests/contract/test_fuzz.py`` runs the same function with a few examples per route in ``make test``."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import schemathesis
from hypothesis import HealthCheck
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.result import Ok

API_KEY = "fuzz-key"
AUTH_HEADERS = ("x-api-key", "authorization")
CREDENTIALS: dict[str, dict[str, str]] = {
    "valid_key": {"X-API-Key": API_KEY},
    "wrong_key": {"X-API-Key": "not-a-key"},
    "none": {},
}
# No 5xx (checked in ``_fuzz_one``: the contract's 503 of /playground while verified identity is off is
# the one allowed), a declared status, the declared content type and a body valid against its schema.
CHECKS = [status_code_conformance, content_type_conformance, response_schema_conformance]
ALLOWED_5XX = {("POST /playground", 503)}
MAX_FAILURES_KEPT = 5  # per route: the first few, as examples


def _with_credentials(case: Any, credentials: dict[str, str]) -> None:
    """Our credentials only: schemathesis would send made-up values for the declared security schemes."""
    headers = {k: v for k, v in (case.headers or {}).items() if k.lower() not in AUTH_HEADERS}
    case.headers = {**headers, **credentials}


@dataclass
class Tally:
    cases: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    statuses: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    failures: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _fuzz_one(
    operation: Any, mode: GenerationMode, who: str, headers: dict[str, str], examples: int, seed: int | None,
    tally: Tally,
) -> None:
    route = operation.label
    checks = CHECKS + ([negative_data_rejection] if mode == GenerationMode.NEGATIVE else [])
    cases, statuses, failures, failed = tally.cases, tally.statuses, tally.failures, tally.failed

    @hypothesis.settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is not None,
        phases=[hypothesis.Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        _with_credentials(case, headers)
        response = case.call()
        cases[route] += 1
        statuses[route][str(response.status_code)] += 1
        try:
            if response.status_code >= 500 and (route, response.status_code) not in ALLOWED_5XX:
                raise AssertionError(f"server error {response.status_code}: {response.text[:200]}")
            case.validate_response(response, checks=checks)
        except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - counted, kept as an example; run goes on
            failed[route] += 1
            if len(failures[route]) < MAX_FAILURES_KEPT:
                text = " ".join(str(exc).split())[:400]
                failures[route].append(f"{who}/{mode.value}: {response.status_code}: {text}")

    try:
        run()
    except hypothesis.errors.Unsatisfiable:
        pass  # negative mode on a route without parameters or body: there is nothing invalid to send


def fuzz(
    app: Any,
    *,
    examples: int,
    seed: int | None = 0,
    modes: Sequence[GenerationMode] = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE),
    credentials: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Run ``examples`` cases per route, generation mode and credential; returns counts per route."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    credentials = credentials if credentials is not None else CREDENTIALS
    tally = Tally()
    for result in schema.get_all_operations():
        if not isinstance(result, Ok):
            raise RuntimeError(f"/openapi.json has an invalid operation: {result.err()}")
        operation = result.ok()
        for mode in modes:
            for who, headers in credentials.items():
                _fuzz_one(operation, mode, who, headers, examples, seed, tally)
    cases, statuses, failures, failed = tally.cases, tally.statuses, tally.failures, tally.failed
    routes: dict[str, dict[str, Any]] = {
        route: {
            "cases": cases[route],
            "failures": failed[route],
            "statuses": dict(sorted(statuses[route].items())),
            "failure_examples": failures[route],
        }
        for route in sorted(cases)
    }
    return {
        "routes": routes,
        "cases": sum(cases.values()),
        "failures": sum(failed.values()),
        "server_errors": sum(
            n for route, r in routes.items() for code, n in r["statuses"].items()
            if code[0] == "5" and (route, int(code)) not in ALLOWED_5XX
        ),
    }


def demo_app(tmp: Path) -> Any:
    """The in-process app over the demo corpus, in ``tmp`` (index, store)."""
    from serve_app.config import load_config
    from serve_app.runtime import factory, index_setup

    repo = Path(__file__).resolve().parent.parent
    index_dir = tmp / "index"
    env = {
        "ACEH_API_KEYS": API_KEY,
        "ACEH_INDEX_DIR": str(index_dir),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'fuzz.db'}",
    }
    cfg = load_config(str(repo / "configs" / "default.yaml"), env=env)
    index_setup.ingest_paths(cfg, [repo / "configs" / "demo_corpus"], index_dir, progress=False)
    return factory.build_inprocess_app(cfg)


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.harness import Result, command, write_result

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--examples", type=int, default=200, help="cases per route, mode and credential")
    p.add_argument("--seed", type=int, default=None, help="fixed generation (default: random)")
    p.add_argument("--out", help="result path (default benchmarks/results/fuzz.json)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        report = fuzz(demo_app(Path(tmp)), examples=args.examples, seed=args.seed)
    seconds = time.perf_counter() - started
    print(f"{'route':<44} {'cases':>7} {'failures':>9}  statuses")
    for route, r in report["routes"].items():
        print(f"{route:<44} {r['cases']:>7} {r['failures']:>9}  {json.dumps(r['statuses'])}")
        for example in r["failure_examples"]:
            print(f"    {example}")
    print(f"total: {report['cases']} cases, {report['failures']} failures, {seconds:.0f} s")
    path = write_result(
        Result(
            benchmark="fuzz",
            figures={"cases": report["cases"], "failures": report["failures"]},
            data="schemathesis cases from /openapi.json (demo corpus), valid/wrong/no key, positive+negative",
            in_sample=False,
            command=command("fuzz", argv),
            details={**report, "examples_per_route_mode_credential": args.examples,
                     "seconds": round(seconds)},
        ),
        args.out,
    )
    print(f"wrote {path}")
    return 0 if report["failures"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
