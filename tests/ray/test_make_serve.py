"""`make serve` never loses an operator's index: it passes on the caller's ACEH_CORPUS and ACEH_INDEX_DIR,
serves a named index as it is when no corpus is given, and refuses (one sentence naming the command) a
corpus that does not hold every indexed document instead of deleting them. ``ingest --prune`` is the only
way to delete documents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from serve_app.runtime.cli import main
from tests.conftest import API_KEY, REPO, make_config
from tests.support.net import free_port, wait_healthy

DOCS_A = {
    "qanun_pasar.md": "# Qanun Kabupaten Contoh Nomor 3 Tahun 2020 tentang Pasar Rakyat\n\n### Pasal 1\n\n"
    "Pasar rakyat dikelola oleh perangkat daerah yang membidangi perdagangan.\n",
    "qanun_air.md": "# Qanun Kabupaten Contoh Nomor 4 Tahun 2021 tentang Air Bersih\n\n### Pasal 1\n\n"
    "Penyediaan air bersih menjadi tanggung jawab perusahaan daerah air minum.\n",
    "qanun_jalan.md": "# Qanun Kabupaten Contoh Nomor 5 Tahun 2021 tentang Jalan Desa\n\n### Pasal 1\n\n"
    "Pemeliharaan jalan desa dibiayai dari anggaran pendapatan dan belanja gampong.\n",
}
DOC_B = {
    "qanun_hutan.md": "# Qanun Kabupaten Contoh Nomor 6 Tahun 2022 tentang Hutan Kota\n\n### Pasal 1\n\n"
    "Hutan kota ditetapkan oleh bupati.\n"
}


def _write(folder: Path, docs: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _snapshot(index_dir: Path) -> tuple[list[str], str]:
    manifest = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))
    return sorted(entry["source"] for entry in manifest["sources"]), manifest["fingerprint"]


@pytest.fixture()
def index_a(tmp_path: Path) -> Path:
    from serve_app.runtime import index_setup

    index_dir = tmp_path / "index_a"
    cfg = make_config(tmp_path, index_dir)
    report = index_setup.ingest_paths(cfg, [_write(tmp_path / "corpus_a", DOCS_A)], index_dir, progress=False)
    assert not report.failed and _snapshot(index_dir)[0] == sorted(DOCS_A)
    return index_dir


def _make_serve(tmp_path: Path, port: int, **settings: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ACEH_CORPUS", "ACEH_INDEX_DIR", "ACEH_CONFIG")}
    env.update(
        ACEH_PORT=str(port),
        ACEH_API_KEYS=API_KEY,
        ACEH_DATABASE_URL=f"sqlite:///{tmp_path / 'aceh.db'}",
        **settings,
    )
    # The stamp is not remade here: a test must never reinstall the venv (CI ran `make install` first).
    return subprocess.Popen(
        ["make", "--no-print-directory", "-o", ".venv/.installed-stamp", "serve"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C; serve stops its graph on it
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.stdout.read() if proc.stdout else ""


@pytest.mark.slow
def test_make_serve_with_another_corpus_refuses_and_keeps_the_index(index_a: Path, tmp_path: Path) -> None:
    before = _snapshot(index_a)
    corpus_b = _write(tmp_path / "corpus_b", DOC_B)
    proc = _make_serve(tmp_path, free_port(), ACEH_INDEX_DIR=str(index_a), ACEH_CORPUS=str(corpus_b))
    try:
        proc.wait(timeout=120)
    finally:
        out = _stop(proc)
    assert proc.returncode != 0, out[-3000:]
    refusal = [line for line in out.splitlines() if "serve never deletes documents" in line]
    assert len(refusal) == 1 and "Traceback" not in out, out[-3000:]
    assert f"aceh-rag ingest --prune {corpus_b} --index {index_a}" in refusal[0]
    assert "3 document(s) that are not under ACEH_CORPUS" in refusal[0]
    assert _snapshot(index_a) == before


@pytest.mark.slow
@pytest.mark.ray
def test_make_serve_with_only_the_index_dir_serves_it_as_it_is(index_a: Path, tmp_path: Path) -> None:
    before = _snapshot(index_a)
    port = free_port()
    proc = _make_serve(tmp_path, port, ACEH_INDEX_DIR=str(index_a))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, timeout_s=240, alive=lambda: proc.poll() is None)
        r = httpx.post(
            f"{base}/search",
            json={"query": "air bersih", "top_k": 5},
            headers={"X-API-Key": API_KEY},
            timeout=60,
            trust_env=False,
        )
        assert r.status_code == 200, r.text
        assert {hit["source"] for hit in r.json()["results"]} <= set(DOCS_A)
        assert r.json()["results"][0]["source"] == "qanun_air.md"
    finally:
        out = _stop(proc)
    assert "demo_corpus" not in out, out[-3000:]
    assert _snapshot(index_a) == before


def test_serve_adds_a_superset_corpus_without_deleting(
    index_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from serve_app.runtime import index_setup

    corpus = _write(tmp_path / "corpus_a", DOC_B)  # corpus A plus one new file
    index_setup.ensure_index(make_config(tmp_path, index_a, corpus=[str(corpus)]))
    assert _snapshot(index_a)[0] == sorted({**DOCS_A, **DOC_B})


def test_only_ingest_prune_deletes(
    index_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACEH_API_KEYS", API_KEY)
    monkeypatch.delenv("ACEH_CONFIG", raising=False)
    corpus_b = _write(tmp_path / "corpus_b", DOC_B)
    assert main(["ingest", str(corpus_b), "--index", str(index_a), "--no-progress"]) == 0
    assert _snapshot(index_a)[0] == sorted({**DOCS_A, **DOC_B})
    assert main(["ingest", "--prune", str(corpus_b), "--index", str(index_a), "--no-progress"]) == 0
    assert _snapshot(index_a)[0] == sorted(DOC_B)
    assert "3 removed" in capsys.readouterr().out
