"""Kill one replica of each role while clients ask questions; measure what they got and how long until the
graph answered again.

Every role runs in its own deployment (``serve.colocate: []``) over the demo corpus. Client threads send
``POST /query/v2`` without pause. For each role in turn, one of its replica actors is killed (``ray.kill``,
what a crashed process looks like to Ray Serve); the run records every response during the fault window
(statuses, answers whose claims are marked ``supported``) and the recovery time: from the kill until Ray
Serve reports the deployment healthy again and a request is answered 200.

    python -m benchmarks.faults [--clients 4] [--settle 5] [--out PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROLES = ("Retriever", "Agent", "Annotator", "JudgePool", "Guard", "Ingress")
QUESTION = "Berapa anggaran pendidikan Aceh tahun 2023?"
API_KEY = "faults-key"


@dataclass(frozen=True)
class Record:
    """One response: when it came, its status (0: no HTTP answer at all), the verdicts of a 200's claims,
    the contract error code of any other answer ("" when its body is not the contract's) and its
    ``X-Request-ID`` (to find the request in the replicas' JSON logs)."""

    at: float
    status: int
    verdicts: dict[str, int]
    error: str
    request_id: str

    @property
    def outcome(self) -> str:
        """``200``, or the status with its error code, e.g. ``503 not_ready`` (``500`` alone: no body of
        ours, Ray's proxy or uvicorn answered)."""
        return f"{self.status} {self.error}".strip()


def _error_code(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("error", "")) if isinstance(body, dict) else ""


class Load:
    """Client threads asking without pause; every response kept as a :class:`Record`."""

    def __init__(self, base: str, clients: int) -> None:
        self.base = base
        self.records: list[Record] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(clients)]

    def _run(self) -> None:
        with httpx.Client(
            base_url=self.base, headers={"X-API-Key": API_KEY}, timeout=60, trust_env=False
        ) as c:
            while not self.stop.is_set():
                try:
                    r = c.post("/query/v2", json={"query": QUESTION})
                except httpx.HTTPError:  # refused or reset: no HTTP answer at all
                    self.records.append(Record(time.monotonic(), 0, {}, "", ""))
                    continue
                verdicts: dict[str, int] = {}
                if r.status_code == 200:
                    verdicts = dict(Counter(cl["verdict"] for cl in r.json().get("claims", [])))
                error = "" if r.status_code == 200 else _error_code(r)
                rid = r.headers.get("x-request-id", "")
                self.records.append(Record(time.monotonic(), r.status_code, verdicts, error, rid))

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=90)


def _kill_one(role: str) -> str:
    import ray

    prefix = f"SERVE_REPLICA::aceh-rag#{role}#"
    names = sorted(
        a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith(prefix)
    )
    if not names:
        raise RuntimeError(f"no replica of {role} is running")
    ray.kill(ray.get_actor(names[0], namespace="serve"), no_restart=True)
    name: str = names[0]
    return name


def _healthy(role: str) -> bool:
    from ray import serve

    status = serve.status().applications["aceh-rag"].deployments[role]
    return str(status.status).endswith("HEALTHY") and not str(status.status).endswith("UNHEALTHY")


def _recover(base: str, role: str, killed_at: float, timeout_s: float = 180.0) -> float | None:
    deadline = killed_at + timeout_s
    time.sleep(1.0)  # let the controller notice the dead actor first
    while time.monotonic() < deadline:
        try:
            if _healthy(role):
                r = httpx.post(
                    base + "/query/v2",
                    json={"query": QUESTION},
                    headers={"X-API-Key": API_KEY},
                    timeout=30,
                    trust_env=False,
                )
                if r.status_code == 200:
                    return time.monotonic() - killed_at
        except (httpx.HTTPError, KeyError):
            pass
        time.sleep(0.25)
    return None


def run(clients: int, settle_s: float, roles: Sequence[str] = ROLES) -> dict[str, Any]:
    from ray import serve

    from benchmarks.service import free_port, wait_healthy
    from serve_app.config import load_config
    from serve_app.runtime import index_setup
    from serve_app.runtime.serve_runner import start_serve

    repo = Path(__file__).resolve().parent.parent
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            "ACEH_API_KEYS": API_KEY,
            "ACEH_INDEX_DIR": f"{tmp}/index",
            "ACEH_DATABASE_URL": f"sqlite:///{tmp}/f.db",
        }
        cfg = load_config(str(repo / "configs" / "default.yaml"), env=env)
        cfg = cfg.model_copy(
            update={"port": free_port(), "serve": cfg.serve.model_copy(update={"colocate": []})}
        )
        index_setup.ingest_paths(cfg, [repo / "configs" / "demo_corpus"], Path(tmp) / "index", progress=False)
        start_serve(cfg)
        base = f"http://127.0.0.1:{cfg.port}"
        try:
            wait_healthy(base, timeout_s=300)
            with Load(base, clients) as load:
                time.sleep(settle_s)
                for role in roles:
                    killed_at = time.monotonic()
                    name = _kill_one(role)
                    recovery = _recover(base, role, killed_at)
                    ended = time.monotonic()
                    window = [r for r in load.records if killed_at <= r.at <= ended]
                    statuses = Counter(r.outcome for r in window)
                    results[role] = {
                        "killed": name,
                        "recovery_s": None if recovery is None else round(recovery, 2),
                        "responses": dict(sorted(statuses.items())),
                        "answered": statuses.get("200", 0),
                        "failed": sum(n for s, n in statuses.items() if s != "200"),
                        "supported_claims_in_window": sum(r.verdicts.get("supported", 0) for r in window),
                        "failed_request_ids": [r.request_id for r in window if r.status != 200][:20],
                    }
                    print(
                        f"{role:<10} recovery {results[role]['recovery_s']} s  responses {dict(statuses)}",
                        flush=True,
                    )
                    time.sleep(settle_s)
        finally:
            serve.shutdown()
            import ray

            ray.shutdown()
    return results


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.harness import Result, command, write_result

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--settle", type=float, default=5.0, help="seconds of load before and between kills")
    p.add_argument("--roles", default=",".join(ROLES), help="comma-separated roles to kill, in this order")
    p.add_argument("--out")
    args = p.parse_args(argv)
    chosen = [r.strip() for r in args.roles.split(",") if r.strip()]
    unknown = sorted(set(chosen) - set(ROLES))
    if unknown or not chosen:
        p.error(f"--roles takes names of {', '.join(ROLES)}")
    roles = run(args.clients, args.settle, chosen)
    recoveries = [r["recovery_s"] for r in roles.values() if r["recovery_s"] is not None]
    # The contract allows a failed request during a fault only as 503 (or 502) with its fixed body.
    off_contract = sum(n for r in roles.values() for s, n in r["responses"].items()
                       if s != "200" and s not in ("503 not_ready", "502 model_failure"))
    path = write_result(
        Result(
            benchmark="faults",
            figures={
                "max recovery s": max(recoveries) if recoveries else "none recovered",
                "roles recovered": f"{len(recoveries)}/{len(roles)}",
                "failures other than 502/503": off_contract,
            },
            data="demo corpus, every role its own deployment, one replica of each killed in turn under load",
            in_sample=False,
            command=command("faults", argv),
            details={"roles": roles, "clients": args.clients},
        ),
        args.out,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
