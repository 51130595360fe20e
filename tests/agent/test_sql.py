"""``sql_query`` read-only for real: every write, DDL, multi-statement and comment trick is refused BEFORE it
runs (the database sees no statement), SQLite is opened ``mode=ro``, PostgreSQL runs as a SELECT-only role
in a READ ONLY transaction with ``statement_timeout``; rows are limited, only the allowed tables are read,
and a total is computed from the rows it cites."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, event

from serve_app.agent.tools.base import ToolContext
from serve_app.agent.tools.sql import SqlQueryTool, read_only_url
from serve_app.agent.tools.sql_check import UnsafeStatement, check_select
from serve_app.config import SqlSourceConfig
from tests.support.agents import FakeRetriever, port_of

TRICKS = [
    "DELETE FROM belanja",
    "UPDATE belanja SET nilai = 0",
    "INSERT INTO belanja VALUES ('X', 2020, 1)",
    "DROP TABLE belanja",
    "CREATE TABLE t (a INT)",
    "ALTER TABLE belanja ADD COLUMN b INT",
    "SELECT 1; DROP TABLE belanja",
    "SELECT 1;DELETE FROM belanja",
    "SELECT * FROM belanja -- ' ; DROP TABLE belanja",
    "SELECT * FROM belanja /* ; */ WHERE 1 = 1",
    "SELECT * FROM belanja WHERE urusan = '' /*'*/; DROP TABLE belanja",
    "SELECT * INTO copy FROM belanja",
    "WITH d AS (DELETE FROM belanja RETURNING *) SELECT * FROM d",
    "SELECT * FROM belanja FOR UPDATE",
    "PRAGMA writable_schema = 1",
    "ATTACH DATABASE '/tmp/x.db' AS x",
    "VACUUM",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT pg_sleep(30)",
    "SELECT nextval('s')",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT load_extension('x')",
    "SELECT * FROM secret",
    "SELECT * FROM belanja UNION SELECT * FROM secret",
    "SELECT (SELECT count(*) FROM secret)",
    "SELECT * FROM main.secret",
    "SELECT $$x$$",
    "BEGIN; DELETE FROM belanja; COMMIT",
    " ; ",
]


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    path = tmp_path / "stat.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE belanja (urusan TEXT, tahun INTEGER, nilai INTEGER);"
            "INSERT INTO belanja VALUES ('Pendidikan', 2023, 500), ('Pendidikan', 2023, 250),"
            " ('Kesehatan', 2023, 300), ('Pendidikan', 2022, 450);"
            "CREATE TABLE secret (token TEXT); INSERT INTO secret VALUES ('s3cr3t');"
        )
    conn.close()
    return f"sqlite:///{path}"


def _ctx() -> ToolContext:
    return ToolContext(retriever=port_of(FakeRetriever([])), query="", document_ids=None)


def _counting(tool: SqlQueryTool) -> list[str]:
    seen: list[str] = []
    event.listen(tool._db(), "before_cursor_execute", lambda *a: seen.append(a[2]))
    return seen


@pytest.mark.parametrize("statement", TRICKS)
def test_every_trick_is_refused_before_it_runs(sqlite_db: str, statement: str) -> None:
    tool = SqlQueryTool(sqlite_db, tables=["belanja"])
    seen = _counting(tool)
    with pytest.raises(UnsafeStatement):
        tool.execute(statement, {})
    result = asyncio.run(tool.run({"statement": statement}, _ctx()))
    assert (result.status, result.evidence) == ("error", [])
    assert seen == []  # the database never saw it
    assert tool.execute("SELECT COUNT(*) FROM belanja", {})[1] == [(4,)]  # nothing changed
    tool._db().dispose()


def test_check_accepts_plain_reads() -> None:
    tables = lambda: ["belanja"]  # noqa: E731
    for ok in [
        "SELECT urusan, SUM(nilai) FROM belanja WHERE tahun = :y GROUP BY urusan",
        "WITH x AS (SELECT * FROM belanja) SELECT * FROM x",
        "SELECT * FROM belanja WHERE urusan = 'a; DROP TABLE belanja -- '",
        "SELECT LOWER(urusan), COUNT(*) FROM belanja GROUP BY 1;",
    ]:
        assert check_select(ok, tables=tables)


# A CTE's name shadows only the references that really are the CTE; each of these reads the table secret.
SHADOWING = [
    "WITH secret AS (SELECT * FROM secret) SELECT * FROM secret",
    "WITH secret AS (SELECT token FROM secret) SELECT s.token FROM secret AS s",
    "WITH RECURSIVE secret(token) AS (SELECT token FROM secret UNION ALL"
    " SELECT token FROM secret WHERE 1 = 0) SELECT * FROM secret",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c, secret WHERE x < 3) SELECT * FROM c",
    "SELECT * FROM (WITH secret AS (SELECT 1 AS a) SELECT * FROM secret) AS t, secret",
    "WITH a AS (SELECT * FROM secret), secret AS (SELECT 1 AS b) SELECT * FROM a",
    "SELECT * FROM belanja WHERE urusan IN (WITH secret AS (SELECT 1) SELECT 1) AND tahun IN"
    " (SELECT token FROM secret)",
]
PG_ONLY_SHADOWING = [
    'WITH "Secret" AS (SELECT 1 AS a) SELECT * FROM secret',  # quoted: another name on PostgreSQL
    "SELECT * FROM (SELECT 1 AS a) AS secret, LATERAL (SELECT * FROM secret) AS s",
]
CTE_READS = [
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT x FROM c ORDER BY x",
    "WITH secret AS (SELECT urusan FROM belanja) SELECT COUNT(*) FROM secret",
    "WITH b AS (SELECT * FROM belanja) SELECT COUNT(*) FROM b WHERE tahun IN (SELECT tahun FROM b)",
    "WITH b AS (SELECT * FROM belanja)"
    " SELECT COUNT(*) FROM (WITH c AS (SELECT * FROM b) SELECT * FROM c) AS t",
]


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_a_cte_name_shadows_only_the_references_that_are_the_cte(dialect: str) -> None:
    tables = lambda: ["belanja"]  # noqa: E731
    for statement in SHADOWING + (PG_ONLY_SHADOWING if dialect == "postgresql" else []):
        with pytest.raises(UnsafeStatement, match="secret"):
            check_select(statement, dialect=dialect, tables=tables)
    for statement in CTE_READS:
        assert check_select(statement, dialect=dialect, tables=tables) == statement


def test_sqlite_runs_cte_reads_and_refuses_shadowing_before_it_runs(sqlite_db: str) -> None:
    tool = SqlQueryTool(sqlite_db, tables=["belanja"])
    seen = _counting(tool)
    for statement in SHADOWING:
        with pytest.raises(UnsafeStatement, match="secret"):
            tool.execute(statement, {})
    assert seen == []
    assert tool.execute(CTE_READS[0], {})[1] == [(1,), (2,), (3,)]
    assert [tool.execute(s, {})[1] for s in CTE_READS[1:]] == [[(4,)], [(4,)], [(4,)]]
    tool._db().dispose()


def test_sqlite_is_opened_read_only_even_past_the_check(
    sqlite_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import serve_app.agent.tools.sql as sql_module

    assert "mode=ro" in read_only_url(sqlite_db)
    monkeypatch.setattr(sql_module, "check_select", lambda s, **_: s)  # as if a write slipped past
    tool = SqlQueryTool(sqlite_db)
    with pytest.raises(Exception, match="readonly|read-only|attempt to write"):
        tool.execute("INSERT INTO belanja VALUES ('X', 2020, 1)", {})
    engine = create_engine(read_only_url(sqlite_db))  # mode=ro without query_only: still refused
    with engine.connect() as conn, pytest.raises(Exception, match="readonly|read-only|attempt to write"):
        conn.exec_driver_sql("DELETE FROM belanja")
    engine.dispose()
    assert tool.execute("SELECT COUNT(*) FROM belanja", {})[1] == [(4,)]
    tool._db().dispose()


def test_rows_are_limited_and_a_long_query_is_stopped(sqlite_db: str) -> None:
    tool = SqlQueryTool(sqlite_db, row_limit=2, timeout_s=0.5)
    columns, rows, complete = tool.execute("SELECT * FROM belanja", {})
    assert (columns, len(rows), complete) == (["urusan", "tahun", "nilai"], 2, False)
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
    with pytest.raises(Exception, match="interrupt"):
        tool.execute(endless, {})
    tool._db().dispose()


def test_only_configured_tables_are_planned_or_read(sqlite_db: str) -> None:
    everything = SqlQueryTool(sqlite_db)
    assert [p.table for p in everything.plan("token s3cr3t")] == ["secret"]
    everything._db().dispose()
    tool = SqlQueryTool(sqlite_db, tables=["belanja"])
    assert tool.plan("token s3cr3t") == []
    assert [p.table for p in tool.plan("belanja pendidikan")] == ["belanja"]
    with pytest.raises(UnsafeStatement, match="secret"):
        tool.execute("SELECT token FROM secret", {})
    tool._db().dispose()


def test_a_total_is_computed_from_the_rows_it_cites(sqlite_db: str) -> None:
    tool = SqlQueryTool(sqlite_db, source_name="statistik")
    result = asyncio.run(tool.run({"query": "Berapa total belanja pendidikan tahun 2023?"}, _ctx()))
    total, *rows = result.evidence
    assert total.text == "Jumlah nilai dari 2 baris tabel belanja (urusan Pendidikan, tahun 2023) adalah 750."
    assert total.aggregate is not None and total.aggregate.operation == "sum"
    assert total.aggregate.rows == (("Pendidikan", "2023", "500"), ("Pendidikan", "2023", "250"))
    assert [r.text for r in rows] == [
        "belanja: urusan = Pendidikan; tahun = 2023; nilai = 500",
        "belanja: urusan = Pendidikan; tahun = 2023; nilai = 250",
    ]
    ident = total.identity
    assert ident["dataset"] == "belanja" and ident["source"] == "statistik" and ident["period"] == "2023"
    call = str(ident["call"])
    assert call.startswith("SELECT * FROM belanja WHERE") and "'%pendidikan%'" in call
    assert str(ident["retrieved_at"]).endswith("Z")
    tool._db().dispose()


def test_a_count_is_computed_from_the_rows_it_cites(sqlite_db: str) -> None:
    tool = SqlQueryTool(sqlite_db, tables=["belanja"])
    result = asyncio.run(tool.run({"query": "Berapa jumlah urusan pendidikan tahun 2023?"}, _ctx()))
    count = result.evidence[0]
    expected = "Banyaknya urusan dari 2 baris tabel belanja (urusan Pendidikan, tahun 2023) adalah 2."
    assert count.text == expected
    assert count.aggregate is not None and count.aggregate.operation == "count"
    assert len(count.aggregate.rows) == 2
    # naming the measure asks for its total, not for a count
    named = asyncio.run(tool.run({"query": "Berapa jumlah nilai urusan pendidikan 2023?"}, _ctx()))
    assert all(e.aggregate is None or e.aggregate.operation != "count" for e in named.evidence)
    tool._db().dispose()


def test_a_total_over_more_rows_than_the_limit_is_not_computed(sqlite_db: str) -> None:
    tool = SqlQueryTool(sqlite_db, row_limit=1)
    result = asyncio.run(tool.run({"query": "Berapa total belanja pendidikan?"}, _ctx()))
    assert result.evidence and all(e.aggregate is None for e in result.evidence)
    tool._db().dispose()


def test_from_config_resolves_a_relative_sqlite_file(tmp_path: Path, sqlite_db: str) -> None:
    cfg = SqlSourceConfig(url="sqlite:///stat.db", tables=["belanja"], max_rows=7, timeout_s=2)
    tool = SqlQueryTool.from_config(cfg, root=tmp_path)
    assert (tool.row_limit, tool.timeout_s, tool.tables) == (7, 2.0, ["belanja"])
    assert tool.source_name == "SQL stat.db"
    with pytest.raises(ValueError, match="does not exist"):
        SqlQueryTool.from_config(SqlSourceConfig(url="sqlite:///missing.db"), root=tmp_path)


# ---------------------------------------------------------------- PostgreSQL, with a SELECT-only role

PG_ADMIN = os.environ.get("ACEH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture
def pg_source() -> Iterator[dict[str, Any]]:
    psycopg = pytest.importorskip("psycopg")
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except Exception:
        if os.environ.get("ACEH_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is not reachable at {PG_ADMIN}")
        pytest.skip(f"PostgreSQL is not reachable at {PG_ADMIN}")
    schema = f"sources_test_{uuid.uuid4().hex[:8]}"
    role = "sources_ro"
    with admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        admin.execute(f"CREATE TABLE {schema}.belanja (urusan TEXT, tahun INTEGER, nilai INTEGER)")
        admin.execute(
            f"INSERT INTO {schema}.belanja VALUES ('Pendidikan', 2023, 500), ('Pendidikan', 2023, 250),"
            " ('Kesehatan', 2023, 300)"
        )
        admin.execute(f"CREATE TABLE {schema}.secret (token TEXT)")
        if admin.execute(f"SELECT 1 FROM pg_roles WHERE rolname = '{role}'").fetchone() is None:
            admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        admin.execute(f"GRANT SELECT ON {schema}.belanja TO {role}")
        url = PG_ADMIN.replace("postgres@", f"{role}@", 1)
        try:
            yield {"url": url, "schema": schema}
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")
            admin.execute(f"REVOKE ALL ON SCHEMA public FROM {role}")


@pytest.mark.postgres
def test_postgres_reads_as_a_select_only_role_in_a_read_only_transaction(
    pg_source: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import serve_app.agent.tools.sql as sql_module

    tool = SqlQueryTool(pg_source["url"], schema=pg_source["schema"], tables=["belanja"], timeout_s=0.5)
    result = asyncio.run(tool.run({"query": "Berapa total belanja pendidikan tahun 2023?"}, _ctx()))
    assert result.status == "ok" and result.evidence[0].text.endswith("adalah 750.")
    seen = _counting(tool)
    for trick in TRICKS:
        with pytest.raises(UnsafeStatement):
            tool.execute(trick, {})
    assert seen == []
    # past the check, the transaction itself is read-only and the role may not write anyway
    monkeypatch.setattr(sql_module, "check_select", lambda s, **_: s)
    with pytest.raises(Exception, match="read-only transaction|permission denied"):
        tool.execute("INSERT INTO belanja VALUES ('X', 2020, 1)", {})
    with pytest.raises(Exception, match="statement timeout"):
        tool.execute("SELECT pg_sleep(5)", {})
    with pytest.raises(Exception, match="permission denied"):
        tool.execute(f"SELECT * FROM {pg_source['schema']}.secret", {})
    tool._db().dispose()


def test_a_question_the_sql_source_cannot_answer_falls_back_to_search(
    sqlite_db: str, retriever: FakeRetriever
) -> None:
    from serve_app.agent.agent import Agent, AgentRequest, ToolsConfig
    from serve_app.agent.writers.embedded import EmbeddedWriter
    from tests.support.agents import fake_find_references
    from tests.support.answers import make_budget

    tool = SqlQueryTool(sqlite_db, tables=["belanja"])
    agent = Agent(
        port_of(retriever),
        EmbeddedWriter(),
        tools=ToolsConfig(find_references=fake_find_references, extra=[tool]),
    )
    assert agent.planner.plan("Berapa anggaran pendidikan?").calls[0].tool == "sql_query"
    outcome = asyncio.run(agent.run(AgentRequest(query="Berapa jumlah kursi DPRA?"), budget=make_budget()))
    audit = [(a["tool"], a["status"]) for a in outcome.tool_call_audit]
    assert audit[0] == ("sql_query", "empty") and audit[-1][0] == "search"
    tool._db().dispose()


@pytest.mark.postgres
def test_postgres_refuses_a_role_that_may_write(pg_source: dict[str, Any]) -> None:
    tool = SqlQueryTool(PG_ADMIN, schema=pg_source["schema"], tables=["belanja"])  # the superuser
    with pytest.raises(PermissionError, match="superuser"):
        tool.execute("SELECT * FROM belanja", {})
    result = asyncio.run(tool.run({"query": "Berapa total belanja pendidikan tahun 2023?"}, _ctx()))
    assert (result.status, result.note, result.evidence) == ("unavailable", "sql_unavailable", [])
    tool._db().dispose()


@pytest.mark.postgres
def test_postgres_refuses_shadowing_that_would_read_the_table(pg_source: dict[str, Any]) -> None:
    psycopg = pytest.importorskip("psycopg")
    schema = pg_source["schema"]
    with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as admin:
        admin.execute(f"INSERT INTO {schema}.secret VALUES ('s3cr3t')")
        admin.execute(f"SET search_path TO {schema}")
        # why the check matters: PostgreSQL resolves the CTE's own name inside its body to the table
        assert admin.execute(SHADOWING[0]).fetchall() == [("s3cr3t",)]
        assert admin.execute(PG_ONLY_SHADOWING[0]).fetchall() == [("s3cr3t",)]
    tool = SqlQueryTool(pg_source["url"], schema=schema, tables=["belanja"], timeout_s=2)
    seen = _counting(tool)
    for statement in SHADOWING + PG_ONLY_SHADOWING:
        with pytest.raises(UnsafeStatement, match="secret"):
            tool.execute(statement, {})
    assert seen == []
    assert tool.execute(CTE_READS[0], {})[1] == [(1,), (2,), (3,)]
    assert [tool.execute(s, {})[1] for s in CTE_READS[1:]] == [[(3,)], [(3,)], [(3,)]]
    tool._db().dispose()
