"""What every benchmark shares: one ``percentile``, the machine it ran on, one result record and one writer.

A benchmark measures, builds a :class:`Result` (a few headline ``figures`` for the README table, the data set
in words, whether that data was looked at while tuning, the command, everything else under ``details``) and
calls :func:`write_result`, which writes ``benchmarks/results/<name>.json`` atomically. ``make readme`` turns
the top-level files of ``results/`` into the README's benchmark table (``benchmarks/readme_table.py``).
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
# Smoke runs (--quick, --tiny) land here, apart from the results the README quotes (git ignores the folder).
QUICK = RESULTS / "quick"

# The packages whose versions move the figures: the serving stack, the encoders, the indexes and the store.
PACKAGES = (
    "ray",
    "starlette",
    "pydantic",
    "numpy",
    "torch",
    "onnxruntime",
    "transformers",
    "sentence-transformers",
    "bm25s",
    "faiss-cpu",
    "sqlalchemy",
    "psycopg",
)

Figure = float | int | str
# How a figure was made: True (in-sample: the data was looked at while tuning, or labelled by our own code),
# False (out-of-sample: nothing was tuned or chosen on it) or "selection" (an internal split whose items were
# not read but whose scores chose among versions: optimistic, not out-of-sample).
InSample = bool | Literal["selection"]


def valid_in_sample(value: object) -> bool:
    """True, False or "selection" exactly (1 and 0 are not booleans here: a record says which it is)."""
    return value is True or value is False or value == "selection"
RECORD_FIELDS = ("benchmark", "figures", "data", "in_sample", "command", "date", "machine")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (``0 <= q <= 1``) by linear interpolation between the closest ranks, numpy's default
    (``method="linear"``, Hyndman & Fan type 7): position ``(n - 1) * q`` in the sorted values. ``q = 0.5`` is
    the median. Raises ``ValueError`` on no values, so an empty sample is never reported as a figure."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"percentile: q must lie in [0, 1], got {q}")
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = math.floor(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table's lines: the header, its rule, then one line per row (each cell as ``str``)."""

    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(str(c) for c in cells) + " |"

    return [line(headers), line(["---"] * len(headers)), *(line(row) for row in rows)]


def shared_data() -> Path:
    """The read-only data sets: ``$ACEH_SHARED_DATA``, else ``../shared/data`` beside the checkout (or
    ``../../shared/data`` for a worktree one level deeper)."""
    env = os.environ.get("ACEH_SHARED_DATA")
    if env:
        return Path(env)
    near, far = REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data"
    return far if not near.is_dir() and far.is_dir() else near


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def command(module: str, argv: Sequence[str] | None) -> str:
    """The command line that reproduces a run: ``python -m benchmarks.<module> ARGS``."""
    args = " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    return f"python -m benchmarks.{module}" + (f" {args}" if args else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def machine_info() -> dict[str, Any]:
    """Cores, CPU model, RAM, Python, package versions, git commit, and the load when the run ended (on a
    shared host other work skews timings: the 1/5/15-minute load averages say how much)."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": _cpu_model(),
        "ram_gb": _ram_gb(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": _versions(),
        "git_commit": _git("rev-parse", "--short=12", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
        "loadavg": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }


def machine_summary(machine: dict[str, Any] | str) -> str:
    """One short phrase for a table: ``2 cores, Intel Xeon Platinum 8375C, 7.8 GB``. Records written before
    this harness hold a string or a few fields; they say only the core count."""
    if isinstance(machine, str):
        found = re.search(r"(\d+) cores", machine)
        if found:
            return f"{found.group(1)} cores, CPU model not recorded"
        return f"{machine}, cores not recorded"
    cores = machine.get("cores") or machine.get("cpus") or machine.get("cpu_count")
    model = str(machine.get("cpu_model") or "")
    for noise in ("(R)", "(TM)", " CPU", " Processor"):
        model = model.replace(noise, "")
    model = " ".join(model.split(" @ ")[0].split())
    parts = [f"{cores} cores" if cores else "cores not recorded", model or "CPU model not recorded"]
    if machine.get("ram_gb"):
        parts.append(f"{machine['ram_gb']} GB")
    if machine.get("gpu"):
        parts.append(str(machine["gpu"]))
    return ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class Result:
    """One benchmark run. ``figures`` are the few headline numbers the README table shows (name to value, in
    reading order); ``data`` names the data set; ``in_sample`` is true when that data was looked at while the
    code was tuned or was labelled by our own code (then the figure is a consistency check, not a quality
    estimate), ``"selection"`` when versions were chosen on its scores without its items being read, false
    only when neither; ``details`` holds everything else the run measured."""

    benchmark: str
    figures: dict[str, Figure]
    data: str
    in_sample: InSample
    command: str
    details: dict[str, Any] = field(default_factory=dict)
    date: str = field(default_factory=now)
    machine: dict[str, Any] = field(default_factory=machine_info)
    # True only for the one run of a development set made before any code was changed against it: the
    # honest (out-of-sample) figure of that set; every later run on it is in-sample.
    first_look: bool = False

    def __post_init__(self) -> None:
        if not valid_in_sample(self.in_sample):
            raise ValueError(f"in_sample must be true, false or 'selection', not {self.in_sample!r}")

    def to_json(self) -> dict[str, Any]:
        clash = (set(RECORD_FIELDS) | {"first_look"}) & set(self.details)
        if clash:
            raise ValueError(f"details may not reuse record fields: {sorted(clash)}")
        head = {name: getattr(self, name) for name in RECORD_FIELDS}
        return {**head, "first_look": self.first_look, **self.details}


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so a reader sees the old file or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes the file owner-only; results are for everyone to read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def result_path(name: str, *, quick: bool = False) -> Path:
    return (QUICK if quick else RESULTS) / f"{name}.json"


def write_first_look(result: Result) -> Path:
    """Write a first-look record (``results/<benchmark>.json``); refused when one exists, since a set is
    looked at for the first time only once."""
    if not result.first_look or result.in_sample is not False:
        raise ValueError("a first-look record has first_look true and in_sample false")
    path = result_path(result.benchmark)
    if path.exists():
        raise FileExistsError(f"{path.name}: the first look at this set was already taken; it is not retaken")
    return write_result(result, path)


def write_result(result: Result, out: Path | str | None = None, *, quick: bool = False) -> Path:
    """Write the record to ``out`` (default ``benchmarks/results/<benchmark>.json``, or ``results/quick/``
    for smoke runs) and return the path."""
    path = Path(out) if out is not None else result_path(result.benchmark, quick=quick)
    atomic_write(path, json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    return path


def read_result(path: Path) -> dict[str, Any]:
    """A result file, checked to carry every record field."""
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    missing = [name for name in RECORD_FIELDS if name not in record]
    if missing:
        raise ValueError(f"{path.name}: not a benchmark record, missing {', '.join(missing)}")
    return record
