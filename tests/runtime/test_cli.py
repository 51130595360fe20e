"""The CLI's fixed interfaces (DESIGN.md) and start-up errors as one sentence, never a traceback."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from serve_app.runtime.cli import main
from tests.conftest import API_KEY, DEMO_CORPUS, REPO
from tests.support.lock_holder import lock_held_elsewhere


@pytest.fixture()
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, demo_index: Path) -> Path:
    monkeypatch.setenv("ACEH_API_KEYS", API_KEY)
    monkeypatch.setenv("ACEH_INDEX_DIR", str(demo_index))
    monkeypatch.setenv("ACEH_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.delenv("ACEH_CONFIG", raising=False)
    return tmp_path


def _one_sentence(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("aceh-rag:")]
    assert lines and "Traceback" not in err
    return lines[-1]


def _start_error(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], yaml_text: str
) -> str:
    """`aceh-rag serve` with this config file: it must stop with status 2 and one sentence, returned."""
    bad = env / "bad.yaml"
    bad.write_text(yaml_text)
    monkeypatch.setenv("ACEH_CONFIG", str(bad))
    assert main(["serve"]) == 2
    return _one_sentence(capsys.readouterr().err)


def test_missing_config_file(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACEH_CONFIG", str(env / "nope.yaml"))
    assert main(["serve"]) == 2
    assert "does not exist" in _one_sentence(capsys.readouterr().err)


def test_unknown_engine(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    error = _start_error(env, monkeypatch, capsys, "roles:\n  judge: {engine: magic}\n")
    assert "unknown engine 'magic'" in error


@pytest.mark.parametrize(
    ("serve_yaml", "expected"),
    [
        ("colocate: [Retriever]", "Agent runs as its own deployment but calls Retriever"),
        ("colocate: [JudgePool]", "Annotator runs as its own deployment but calls JudgePool"),
        ("colocate: [Ingress]", "serve.colocate.0"),
    ],
)
def test_impossible_placement(
    env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    serve_yaml: str,
    expected: str,
) -> None:
    assert expected in _start_error(env, monkeypatch, capsys, f"serve:\n  {serve_yaml}\n")


def test_haproxy_asked_for_but_not_installed(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(env))  # no haproxy here
    monkeypatch.delenv("RAY_SERVE_HAPROXY_BINARY_PATH", raising=False)
    error = _start_error(env, monkeypatch, capsys, "serve:\n  haproxy: true\n")
    assert "no haproxy program was found" in error


def test_a_slow_proxy_start_is_waited_for_as_long_as_serve_start_waits() -> None:
    """Ray Serve kills a proxy not ready within RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S (5 s by default), and
    serve.start then fails: every start gets the 60 s that serve.start itself waits."""
    from ray.serve._private.constants import HTTP_PROXY_TIMEOUT

    from serve_app.runtime.serve_runner import RAY_ENV, ray_env

    key = "RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S"
    assert float(RAY_ENV[key]) == HTTP_PROXY_TIMEOUT and ray_env()[key] == RAY_ENV[key]


def test_haproxy_switches_go_to_every_ray_process(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from serve_app.config import AppConfig, ServeConfig
    from serve_app.runtime.serve_runner import RAY_ENV, body_limits, ray_env

    monkeypatch.setenv("RAY_SERVE_HAPROXY_BINARY_PATH", "/opt/haproxy/bin/haproxy")
    assert ray_env(AppConfig()) == {**RAY_ENV, **body_limits(AppConfig()).env()}
    assert RAY_ENV["RAY_SERVE_ENABLE_DIRECT_INGRESS"] == "0"  # no 30 s replica draining at every stop
    on = ray_env(AppConfig(serve=ServeConfig(haproxy=True)))
    assert on["RAY_SERVE_ENABLE_HA_PROXY"] == "1" and on["RAY_SERVE_ENABLE_DIRECT_INGRESS"] == "1"
    # a stop must finish inside serve.shutdown()'s 30 s: the draining hold is shorter than that
    assert float(on["RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S"]) < 30
    assert on["RAY_SERVE_HAPROXY_BINARY_PATH"] == "/opt/haproxy/bin/haproxy"


def test_invalid_yaml(env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bad = env / "bad.yaml"
    bad.write_text("roles: [\n")
    monkeypatch.setenv("ACEH_CONFIG", str(bad))
    assert main(["ask", "x"]) == 2
    assert "not valid YAML" in _one_sentence(capsys.readouterr().err)


def test_port_in_use(env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        monkeypatch.setenv("ACEH_PORT", str(busy.getsockname()[1]))
        assert main(["serve"]) == 2
    assert "already in use" in _one_sentence(capsys.readouterr().err)


def test_the_graph_process_uses_the_model_servers_its_parent_started(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from serve_app.runtime import serve_runner

    config = env / "llm.yaml"
    config.write_text(
        "model_servers: [{name: m, port: 8011, python: no-such-venv/bin/python}]\n"
        "roles:\n  judge: {engine: openai, base_url: http://127.0.0.1:8011/v1, model: m}\n"
    )
    monkeypatch.setenv("ACEH_CONFIG", str(config))
    graphs: list[object] = []

    def run_graph(cfg: object, *, config_arg: str | None = None) -> int:
        graphs.append(cfg)
        return 0

    monkeypatch.setattr(serve_runner, "run_forever", run_graph)
    monkeypatch.delenv(serve_runner.GRAPH_PROCESS_ENV, raising=False)
    # `aceh-rag serve` itself starts its model servers before the graph (here their Python is missing)
    assert main(["serve"]) == 2
    assert "make vllm" in _one_sentence(capsys.readouterr().err) and graphs == []
    # the graph's own process, which run_forever starts, finds them started and only runs the graph
    monkeypatch.setenv(serve_runner.GRAPH_PROCESS_ENV, "1")
    assert main(["serve"]) == 0 and len(graphs) == 1


def test_missing_index(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACEH_INDEX_DIR", str(env / "no-index"))
    assert main(["search", "anggaran"]) == 2
    assert "No index" in _one_sentence(capsys.readouterr().err)


def test_search_queries_file_json_lines(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = env / "q.jsonl"
    queries.write_text(
        '{"id": "a", "query": "anggaran pendidikan 2023"}\n{"id": 7, "query": "Pasal 7 ayat (1)"}\n'
    )
    assert main(["search", "--queries", str(queries), "--top-k", "3", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["id"] for line in lines] == ["a", 7]
    for line in lines:
        assert 1 <= len(line["results"]) <= 3
        scores = [r["score"] for r in line["results"]]
        assert scores == sorted(scores, reverse=True)
        for r in line["results"]:
            assert set(r) == {
                "document_id",
                "document_title",
                "source",
                "chunk_id",
                "legal_reference",
                "score",
                "text",
            }
            assert (DEMO_CORPUS / r["source"]).is_file()


def test_single_search_id_is_q(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "dana otonomi khusus", "--json"]) == 0
    line = json.loads(capsys.readouterr().out.splitlines()[0])
    assert line["id"] == "q" and len(line["results"]) == 10


def test_judge_file(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = env / "items.jsonl"
    passage = "Belanja urusan pendidikan ditetapkan sebesar Rp871.667.219.294."
    items.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"id": 1, "claim": "Belanja pendidikan sebesar Rp871,67 miliar.", "passage": passage},
                {
                    "id": 2,
                    "claim": "Belanja pendidikan sebesar Rp871,67 juta.",
                    "passage": passage,
                    "document": {
                        "title": "Qanun Aceh Nomor 1 Tahun 2023",
                        "type": "Qanun",
                        "number": "1",
                        "year": 2023,
                    },
                },
                {"id": 3, "passage": passage},
            ]
        )
        + "\n"
    )
    assert main(["judge", str(items)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == [1, 2, 3]
    assert out[0]["verdict"] == "supported"
    assert out[1]["verdict"] == "unsupported"
    assert out[2]["verdict"] == "unverified" and out[2]["reasons"][0] == "invalid_input"


def test_ask_json_prints_the_v2_body(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "Berapa anggaran pendidikan Aceh tahun 2023?", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["schema"] == "annotate-v2" and body["claims"]


def test_ask_prints_marks(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "Berapa anggaran pendidikan Aceh tahun 2023?"]) == 0
    out = capsys.readouterr().out
    assert "terverifikasi" in out and "verification:" in out


def test_ask_with_the_demo_sources_cites_the_mcp_call(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACEH_CONFIG", str(REPO / "configs" / "demo_sources.yaml"))
    assert main(["ask", "Berapa jumlah penduduk Kabupaten Teluk Damai tahun 2024?"]) == 0
    out = capsys.readouterr().out
    assert "nilai: 152340 jiwa" in out and "terverifikasi" in out
    assert '(MCP demo; 2024; cari_statistik(query="Berapa jumlah penduduk Kabupaten Teluk Damai' in out


def test_a_second_ingest_of_one_index_refuses_with_one_line(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = env / "idx"
    one = DEMO_CORPUS / "qanun_syariat.md"
    with lock_held_elsewhere(index, env / "released"):
        assert main(["ingest", str(one), "--index", str(index), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("aceh-rag: another ingest is writing the index") and err.count("\n") == 1
        assert not index.exists()
    assert main(["ingest", str(one), "--index", str(index), "--no-progress", "--wait"]) == 0


def test_prune_deletes_only_with_an_age_given(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from serve_app.config import load_config
    from serve_app.conversation.exchange import Exchange
    from serve_app.conversation.tables import t_conversations, t_memory, t_messages
    from serve_app.runtime.factory import build_store

    store = build_store(load_config())
    store.write_exchange(Exchange("c1", "iss|x", "v2", "tanya", {"answer": "jawab"}, ("catatan",), new=True))
    store.write_exchange(Exchange("c2", "iss|x", "v2", "tanya", {"answer": "jawab"}, new=True))
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with store.engine.begin() as conn:  # c1 was last used 40 days ago
        for table in (t_conversations, t_messages, t_memory):
            key = table.c.id if table is t_conversations else table.c.conversation_id
            conn.execute(table.update().where(key == "c1").values(created_at=long_ago))
    store.close()
    assert main(["prune"]) == 2  # no age in the config, none on the command line: nothing is touched
    assert "No retention age is set, so nothing is deleted" in _one_sentence(capsys.readouterr().err)
    assert main(["prune", "--conversations-days", "-1"]) == 2
    assert main(["prune", "--conversations-days", "50"]) == 0
    assert "0 conversations (0 messages) and 0 memory items deleted" in capsys.readouterr().out
    assert main(["prune", "--conversations-days", "30"]) == 0  # c1 goes, c2 (in use today) stays
    assert "1 conversations (2 messages) and 1 memory items deleted" in capsys.readouterr().out


def test_ingest_is_idempotent(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = env / "idx"
    one = DEMO_CORPUS / "qanun_syariat.md"
    assert main(["ingest", str(one), "--index", str(index), "--no-progress"]) == 0
    first = json.loads((index / "manifest.json").read_text())
    assert main(["ingest", str(one), "--index", str(index), "--no-progress"]) == 0
    assert "1 unchanged" in capsys.readouterr().out
    assert json.loads((index / "manifest.json").read_text())["fingerprint"] == first["fingerprint"]
    assert first["sources"][0]["source"] == "qanun_syariat.md"
