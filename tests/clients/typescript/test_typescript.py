"""clients/typescript: ``make ts`` installs the pinned npm packages (npm ci), generates the wire types from
the JSON Schemas (the committed src/wire.ts must come out unchanged), type-checks with tsc and builds; then
node reads a /query/v2/stream answer from the running service with the built reader. Skipped only when npm
(or node) is absent."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import API_KEY, REPO
from tests.support.live import serve_demo
from tests.support.service import BUDGET_QUESTION

TS = REPO / "clients" / "typescript"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None, reason="npm/node absent"),
]


@pytest.fixture(scope="module")
def built() -> str:
    committed = (TS / "src" / "wire.ts").read_text(encoding="utf-8")
    done = subprocess.run(["make", "ts"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return committed


def test_make_ts_generates_the_committed_types_and_they_type_check(built: str) -> None:
    regenerated = (TS / "src" / "wire.ts").read_text(encoding="utf-8")
    assert regenerated == built, "src/wire.ts is stale: run `make ts` and commit it"
    for name in ("QueryV2Response", "AnnotationsEvent", "DocumentList", "PassageResponse", "Artifact"):
        assert f"export interface {name} " in regenerated
    assert (TS / "dist" / "index.js").exists() and (TS / "dist" / "stream.d.ts").exists()


def test_node_reads_a_stream_from_the_service(
    built: str, tmp_path: Path, demo_index: Path, demo_retriever: Any
) -> None:
    with serve_demo(tmp_path, demo_index, demo_retriever) as base:
        node = subprocess.run(
            ["node", "test/read_stream.mjs", base, API_KEY, BUDGET_QUESTION],
            cwd=TS, capture_output=True, text=True, timeout=120,
        )
        assert node.returncode == 0, node.stderr[-3000:]
        whole = httpx.post(
            f"{base}/query/v2", json={"query": BUDGET_QUESTION}, headers={"X-API-Key": API_KEY}, timeout=60
        ).json()
        script = (
            "import {streamAnswer} from './dist/index.js';"
            f"try {{ for await (const e of streamAnswer('{base}', {{query: 'x'}}, {{apiKey: 'wrong'}}))"
            " {} }"
            " catch (e) { console.log(JSON.stringify({name: e.name, status: e.status, error: e.error})); }"
        )
        denied = subprocess.run(
            ["node", "--input-type=module", "-e", script], cwd=TS, capture_output=True, text=True, timeout=60
        )
    read = json.loads(node.stdout)
    assert read["names"][-1] == "done" and read["names"].count("done") == 1
    assert read["names"].index("annotations") < read["names"].index("answer.delta")
    assert read["answer"] == whole["answer"]
    # JavaScript cut each claim out of the answer with its UTF-16 offsets: the same texts the JSON holds.
    assert read["claims"] == [{"verdict": c["verdict"], "text": c["text"]} for c in whole["claims"]]
    assert json.loads(denied.stdout) == {"name": "ApiError", "status": 401, "error": "unauthorized"}
