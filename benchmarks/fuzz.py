"""Fuzz every route of ``/openapi.json`` with the schemathesis CLI: every phase, every check (``-c all``),
once per credential (a valid key, a wrong key, none).

``schemathesis run URL/openapi.json -c all --phases examples,coverage,fuzzing,stateful`` sends the schema's
examples, the coverage phase's boundary and type-violating values, generated valid and invalid requests and
stateful sequences (a created conversation read back), and checks every response: no 5xx, a declared status,
content type, headers and body schema, invalid data refused and valid data accepted, auth not ignored,
unsupported methods answered 405. The one 5xx the contract allows (``/playground``'s 503 while verified
identity is off) is set in ``schemathesis.toml``, which every run reads. Without ``--url`` the app is the
in-process one over the demo corpus (the same Ingress routes and checks as every Ray Serve replica; Ray's
proxy is not in front), served by uvicorn on 127.0.0.1. Prints a line per credential and writes
``benchmarks/results/fuzz.json``.

    python -m benchmarks.fuzz [--url http://127.0.0.1:8000 --api-key KEY] [--max-examples N] [--seed N]

``tests/wire/test_schemathesis.py`` runs the same function with a few examples and a fixed seed."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.inprocess import serving

API_KEY = "fuzz-key"
REPO = Path(__file__).resolve().parent.parent
CONFIG_FILE = REPO / "schemathesis.toml"
PHASES = ("examples", "coverage", "fuzzing", "stateful")
OUTPUT_TAIL = 4000  # characters of the CLI's output kept when a run writes no report


def credentials(api_key: str) -> dict[str, list[str]]:
    """The header arguments of each run: a key the server accepts, one it refuses, and none."""
    return {
        "valid_key": ["-H", f"X-API-Key: {api_key}"],
        "wrong_key": ["-H", "X-API-Key: not-a-key"],
        "none": [],
    }


def schemathesis_cli() -> list[str]:
    """The CLI of the running interpreter's environment (``.venv/bin/schemathesis``), else the one on PATH."""
    beside = Path(sys.executable).with_name("schemathesis")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("schemathesis")
    if found is None:
        raise RuntimeError("the schemathesis CLI is not installed (pip install -e '.[dev]')")
    return [found]


def command_line(
    url: str, report: Path, headers: Sequence[str], *, max_examples: int | None, seed: int
) -> list[str]:
    """One ``schemathesis run``: every phase and check, one worker, no example database (a fixed ``seed``
    gives the same cases again), the JSON report at ``report``."""
    args = [
        *schemathesis_cli(), "--config-file", str(CONFIG_FILE), "run", f"{url}/openapi.json",
        "--checks", "all", "--phases", ",".join(PHASES), "--seed", str(seed), "--workers", "1",
        "--generation-database", "none", "--no-color", "--report", "json", "--report-json-path", str(report),
        *headers,
    ]
    if max_examples is not None:
        args += ["--max-examples", str(max_examples)]
    return args


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    """The counts of one JSON run report, and what failed where."""
    cases = report["test_cases"]
    return {
        "cases": cases["generated"],
        "failures": cases["unique_failures"],
        "cases_with_failures": cases["with_failures"],
        "errors": sum(int(e.get("count", 1)) for e in report["errors"]),
        "operations_tested": report["operations"]["tested"],
        "operations_total": report["operations"]["total"],
        "phases": {name: phase["status"] for name, phase in report["phases"].items()},
        "failure_kinds": [
            {"code": f["code"], "title": f["title"], "count": f["count"], "operations": f["operations"]}
            for f in report["failures"]
        ],
        "error_kinds": [{"title": e["title"], "count": e.get("count", 1)} for e in report["errors"]],
        "warnings": {kind: ops for kind, ops in report["warnings"].items() if ops},
        "exit_code": report["exit_code"],
        "schemathesis_version": report["schemathesis_version"],
        "seconds": round(report["running_time"], 1),
    }


def run_once(
    url: str, headers: Sequence[str], *, max_examples: int | None, seed: int, workdir: Path, name: str
) -> dict[str, Any]:
    report = workdir / f"{name}.json"
    done = subprocess.run(
        command_line(url, report, headers, max_examples=max_examples, seed=seed),
        capture_output=True, text=True, check=False, cwd=workdir,
    )
    if not report.is_file():  # the schema did not load, or the CLI refused its arguments
        output = (done.stdout + done.stderr)[-OUTPUT_TAIL:]
        raise RuntimeError(f"schemathesis wrote no report (exit {done.returncode}):\n{output}")
    summary = summarise(json.loads(report.read_text(encoding="utf-8")))
    if summary["failures"] or summary["errors"]:
        summary["output_tail"] = done.stdout[-OUTPUT_TAIL:]
    return summary


def fuzz(
    url: str, *, api_key: str = API_KEY, max_examples: int | None = None, seed: int = 0,
    who: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One schemathesis run per credential (all, or those named in ``who``) against ``url``."""
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, headers in credentials(api_key).items():
            if who is None or name in who:
                runs[name] = run_once(
                    url, headers, max_examples=max_examples, seed=seed, workdir=Path(tmp), name=name
                )
    return {
        "runs": runs,
        "cases": sum(r["cases"] for r in runs.values()),
        "failures": sum(r["failures"] for r in runs.values()),
        "errors": sum(r["errors"] for r in runs.values()),
    }


def demo_app(tmp: Path, api_key: str = API_KEY) -> Any:
    """The in-process app over the demo corpus, in ``tmp`` (index, store)."""
    from serve_app.config import load_config
    from serve_app.runtime import factory, index_setup

    index_dir = tmp / "index"
    env = {
        "ACEH_API_KEYS": api_key,
        "ACEH_INDEX_DIR": str(index_dir),
        "ACEH_DATABASE_URL": f"sqlite:///{tmp / 'fuzz.db'}",
    }
    cfg = load_config(str(REPO / "configs" / "default.yaml"), env=env)
    index_setup.ingest_paths(cfg, [REPO / "configs" / "demo_corpus"], index_dir, progress=False)
    return factory.build_inprocess_app(cfg)


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.harness import Result, command, write_result

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", help="a running service (default: the in-process app on uvicorn, demo corpus)")
    p.add_argument("--api-key", default=API_KEY, help="a key the service at --url accepts")
    p.add_argument("--max-examples", type=int, default=None, help="per operation (default: schemathesis's)")
    p.add_argument("--seed", type=int, default=0, help="schemathesis --seed (the same cases again)")
    p.add_argument("--out", help="result path (default benchmarks/results/fuzz.json)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    if args.url:
        report = fuzz(args.url.rstrip("/"), api_key=args.api_key, max_examples=args.max_examples,
                      seed=args.seed)
        target = args.url
    else:
        with tempfile.TemporaryDirectory() as tmp, serving(demo_app(Path(tmp), args.api_key)) as url:
            report = fuzz(url, api_key=args.api_key, max_examples=args.max_examples, seed=args.seed)
        target = "the in-process app (demo corpus) on uvicorn, 127.0.0.1"
    seconds = time.perf_counter() - started
    print(f"{'credentials':<12} {'cases':>7} {'failures':>9} {'errors':>7}  operations  phases")
    for name, r in report["runs"].items():
        phases = ", ".join(f"{k} {v}" for k, v in r["phases"].items())
        ops = f"{r['operations_tested']}/{r['operations_total']}"
        print(f"{name:<12} {r['cases']:>7} {r['failures']:>9} {r['errors']:>7}  {ops:<10}  {phases}")
        for kind in r["failure_kinds"] + r["error_kinds"]:
            print(f"    {json.dumps(kind, ensure_ascii=False)}")
    print(f"total: {report['cases']} cases, {report['failures']} failures, {report['errors']} errors, "
          f"{seconds:.0f} s")
    path = write_result(
        Result(
            benchmark="fuzz",
            figures={"cases": report["cases"], "failures": report["failures"], "errors": report["errors"]},
            data="schemathesis CLI, -c all, all four phases, on /openapi.json; valid, wrong and no key",
            in_sample=False,
            command=command("fuzz", argv),
            details={**report, "target": target, "seed": args.seed, "max_examples": args.max_examples,
                     "phases_asked": list(PHASES), "config_file": CONFIG_FILE.name,
                     "seconds": round(seconds)},
        ),
        args.out,
    )
    print(f"wrote {path}")
    return 0 if report["failures"] == 0 and report["errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
