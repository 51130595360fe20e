"""The live-source demo (configs/demo_sources.yaml): the fictional statistics database and two local servers
shaped like the real APIs, a CKAN portal (``/api/3/action/package_search``, ``datastore_search``) and the
BPS WebAPI (``/v1/api/list/model/var/…``, ``/model/data/…``), serving the fictional figures of
configs/demo_sources/portals.json. The tests start the same servers, with faults switched on.

    python -m serve_app.demo.open_data build                  # stats.sql → stats.sqlite
    python -m serve_app.demo.open_data serve --ckan-port 8766 --bps-port 8767
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

DEMO_DIR = Path(__file__).resolve().parents[2] / "configs" / "demo_sources"
_BPS_PATH = re.compile(r"/v1/api/list/model/(var|data)/domain/(\d{4})(?:/var/(\d+))?/key/([^/]+)/?")
Fault = Literal["error", "bad_json", "slow_body", "hang", "ckan_failure", "bps_bad_key"] | None


def build_stats_db(sql: Path = DEMO_DIR / "stats.sql", db: Path = DEMO_DIR / "stats.sqlite") -> Path:
    """(Re)build the fictional SQLite database from its SQL text."""
    db.unlink(missing_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript(sql.read_text(encoding="utf-8"))
    conn.close()
    return db


def _words(text: str) -> set[str]:
    return set(re.findall(r"[0-9a-z]+", text.lower()))


class _State:
    """What both servers read: the data, the fault to play, and every path asked (for the tests)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.fault: Fault = None
        self.delay_s = 0.0
        self.requests: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    state: _State
    kind: Literal["ckan", "bps"]

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        state = self.state
        state.requests.append(self.path)
        if state.fault == "hang":
            time.sleep(state.delay_s)
        if state.fault == "error":
            self._send(500, b"Internal Server Error", "text/plain")
            return
        status, body = (self._ckan if self.kind == "ckan" else self._bps)(urlsplit(self.path))
        payload = json.dumps(body).encode()
        if state.fault == "bad_json":
            payload = payload[: len(payload) // 2]
        if state.fault == "slow_body":  # headers at once, then the body a byte at a time
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            for i in range(len(payload)):
                self.wfile.write(payload[i : i + 1])
                self.wfile.flush()
                time.sleep(state.delay_s)
            return
        self._send(status, payload, "application/json")

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass

    # ---------------------------------------------------------------- CKAN action API

    def _ckan(self, url: Any) -> tuple[int, dict[str, Any]]:
        action = url.path.rsplit("/", 1)[-1]
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        host = self.headers.get("Host", "localhost")
        envelope: dict[str, Any] = {"help": f"http://{host}/api/3/action/help_show?name={action}"}
        ckan = self.state.data["ckan"]
        if self.state.fault == "ckan_failure":
            error = {"__type": "Search Query Error", "message": "Search error: invalid query"}
            return 409, envelope | {"success": False, "error": error}
        if url.path == "/api/3/action/package_search":
            asked = _words(query.get("q", ""))
            org = query.get("fq", "").removeprefix("organization:") or None
            found = [
                p for p in ckan["packages"]
                if (org is None or p["organization"] == org)
                and (not asked or asked & _words(p["title"] + " " + p.get("notes", "")))
            ][: int(query.get("rows", 10))]
            results = [self._package(p) for p in found]
            return 200, envelope | {
                "success": True,
                "result": {"count": len(results), "facets": {}, "results": results, "sort": "score desc",
                           "search_facets": {}},
            }
        if url.path == "/api/3/action/datastore_search":
            resource = next(
                (r for p in ckan["packages"] for r in p["resources"]
                 if r["id"] == query.get("resource_id") and r.get("datastore_active")),
                None,
            )
            if resource is None:
                error = {"__type": "Not Found Error", "message": "Not found: Resource was not found."}
                return 404, envelope | {"success": False, "error": error}
            asked = _words(query.get("q", ""))
            records = [
                {"_id": i + 1} | r for i, r in enumerate(resource["records"])
                if not asked or asked <= _words(" ".join(str(v) for v in r.values()))
            ]
            limit = int(query.get("limit", 100))
            return 200, envelope | {
                "success": True,
                "result": {
                    "include_total": True, "limit": limit, "q": query.get("q", ""),
                    "records_format": "objects", "resource_id": resource["id"],
                    "fields": [{"id": "_id", "type": "int"}, *resource["fields"]],
                    "records": records[:limit],
                    "_links": {"start": url.path + "?" + url.query, "next": url.path + "?" + url.query},
                    "total": len(records),
                },
            }
        error = {"__type": "Bad request", "message": "Bad request"}
        return 400, envelope | {"success": False, "error": error}

    @staticmethod
    def _package(p: dict[str, Any]) -> dict[str, Any]:
        resources = [
            {k: v for k, v in r.items() if k not in ("fields", "records")} | {"package_id": p["id"]}
            for r in p["resources"]
        ]
        return {
            "id": p["id"], "name": p["name"], "title": p["title"], "notes": p.get("notes", ""),
            "metadata_modified": p["metadata_modified"], "num_resources": len(resources),
            "organization": {"name": p["organization"], "title": p["organization"]},
            "resources": resources, "state": "active", "type": "dataset",
        }

    # ---------------------------------------------------------------- BPS WebAPI

    def _bps(self, url: Any) -> tuple[int, dict[str, Any]]:
        bps = self.state.data["bps"]
        match = _BPS_PATH.fullmatch(url.path)
        if match is None:
            return 404, {"status": "Error", "message": "Not Found"}
        model, domain, var_id, key = match.groups()
        if key not in bps["keys"] or self.state.fault == "bps_bad_key":
            return 200, {"status": "Error", "data-availability": "not-available", "message": "Invalid key"}
        if domain != bps["domain"]:
            return 200, {"status": "OK", "data-availability": "list-not-available"}
        if model == "var":
            asked = _words(parse_qs(url.query).get("keyword", [""])[0])
            found = [v for v in bps["variables"] if not asked or asked & _words(v["title"])]
            if not found:
                return 200, {"status": "OK", "data-availability": "list-not-available"}
            page = {"page": 1, "pages": 1, "per_page": 10, "count": len(found), "total": len(found)}
            listed = [
                {"var_id": v["var_id"], "title": v["title"], "sub_id": 23, "sub_name": "Kemiskinan",
                 "def": "", "notes": "Data fiktif untuk demo.", "vertical": 5, "unit": v["unit"],
                 "graph_id": 1, "graph_name": "Line Chart"}
                for v in found
            ]
            return 200, {"status": "OK", "data-availability": "available", "data": [page, listed]}
        var = next((v for v in bps["variables"] if str(v["var_id"]) == var_id), None)
        if var is None:
            return 200, {"status": "OK", "data-availability": "list-not-available"}
        content = {
            f"{vervar}{var['var_id']}0{tahun}0": value
            for vervar, by_year in var["values"].items()
            for tahun, value in by_year.items()
        }
        return 200, {
            "status": "OK", "data-availability": "available", "last_update": "2024-02-01 08:00:00",
            "subject": [{"val": 23, "label": "Kemiskinan"}],
            "var": [{"val": var["var_id"], "label": var["title"], "unit": var["unit"], "subj": "Kemiskinan",
                     "def": "", "decimal": 2, "note": "Data fiktif untuk demo."}],
            "turvar": [{"val": 0, "label": "Tidak Ada"}], "labelvervar": "Kabupaten/Kota",
            "vervar": var["vervar"], "tahun": var["tahun"], "turtahun": [{"val": 0, "label": "Tahun"}],
            "datacontent": content,
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (its timeout, a slow body) is expected here, not an error to print.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class DemoServer:
    """One local server of ``kind`` in a thread; ``fault`` and ``delay_s`` may be changed while it runs."""

    def __init__(
        self, kind: Literal["ckan", "bps"], *, port: int = 0, data: dict[str, Any] | None = None
    ) -> None:
        self.state = _State(data if data is not None else load_portals())
        handler = type(f"{kind}Handler", (_Handler,), {"state": self.state, "kind": kind})
        self.server = _Server(("127.0.0.1", port), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def start(self) -> DemoServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def load_portals(path: Path = DEMO_DIR / "portals.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@contextmanager
def running(kind: Literal["ckan", "bps"], *, port: int = 0) -> Iterator[DemoServer]:
    server = DemoServer(kind, port=port).start()
    try:
        yield server
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m serve_app.demo.open_data")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build configs/demo_sources/stats.sqlite from stats.sql")
    serve = sub.add_parser("serve", help="serve the fictional CKAN and BPS APIs until Ctrl-C")
    serve.add_argument("--ckan-port", type=int, default=8766)
    serve.add_argument("--bps-port", type=int, default=8767)
    args = parser.parse_args(argv)
    if args.command == "build":
        print(build_stats_db())
        return 0
    with running("ckan", port=args.ckan_port) as ckan, running("bps", port=args.bps_port) as bps:
        print(f"CKAN demo portal on {ckan.url}, BPS demo WebAPI on {bps.url} (Ctrl-C stops both)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
