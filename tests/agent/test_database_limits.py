"""Every database engine has a connect timeout, and a URL's password never reaches a message or a log line.
The unreachable server is a local socket that accepts TCP connections and never speaks (what a host behind a
dropping firewall or a hung server looks like to libpq): without ``connect_timeout`` these tests would hang
until pytest's own timeout."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from serve_app.agent.tools.base import ToolContext
from serve_app.agent.tools.sql import SqlQueryTool, connect_timeout_s
from serve_app.config import AppConfig, ConfigError, LimitsConfig
from serve_app.config.redact import redact_urls, redacted_url
from serve_app.conversation.store import Store
from serve_app.runtime import factory
from serve_app.wire.tracing import JsonFormatter
from tests.support.agents import FakeRetriever, port_of

SECRET = "Hush-7f3a"  # an invented password: it must never appear in what is shown


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 whose connections the kernel accepts and nobody ever answers."""
    pytest.importorskip("psycopg")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


def test_an_sql_source_that_never_answers_is_unavailable_not_a_hang(silent_port: int) -> None:
    url = f"postgresql+psycopg://reader:{SECRET}@127.0.0.1:{silent_port}/stats"
    tool = SqlQueryTool(url, tables=["belanja"], timeout_s=1.0)
    ctx = ToolContext(retriever=port_of(FakeRetriever([])), query="", document_ids=None)
    result = asyncio.run(tool.run({"statement": "SELECT urusan FROM belanja"}, ctx))
    assert result.status == "unavailable" and result.note == "sql_unavailable"


def test_libpq_connect_timeout_is_the_tool_timeout_rounded_up() -> None:
    assert [connect_timeout_s(t) for t in (0.5, 1.0, 2.0, 2.5, 10.0)] == [2, 2, 2, 3, 10]


def test_the_store_on_a_server_that_never_answers_fails_start_up_in_one_sentence(silent_port: int) -> None:
    url = f"postgresql+psycopg://aceh:{SECRET}@127.0.0.1:{silent_port}/aceh"
    cfg = AppConfig(database_url=url, limits=LimitsConfig(db_connect_timeout_s=2))
    with pytest.raises(ConfigError) as caught:
        factory.check_database(cfg)
    message = str(caught.value)
    assert SECRET not in message and "aceh:***@127.0.0.1" in message
    assert "cannot be reached" in message
    with pytest.raises(ConfigError) as built:
        factory.build_store(cfg)
    assert SECRET not in str(built.value) and "***" in str(built.value)


PG_URL = os.environ.get("ACEH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.mark.postgres
def test_the_store_cancels_a_statement_past_its_timeout_on_postgresql() -> None:
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(PG_URL, connect_timeout=3).close()
    except Exception:
        if os.environ.get("ACEH_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is not reachable at {PG_URL}")
        pytest.skip(f"PostgreSQL is not reachable at {PG_URL}")
    store = Store(PG_URL, statement_timeout_s=0.2)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(text("SHOW statement_timeout")).scalar() == "200ms"
            with pytest.raises(OperationalError, match="statement timeout"):
                conn.execute(text("SELECT pg_sleep(30)"))  # cancelled by the server, not waited out
    finally:
        store.engine.dispose()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://aceh:{SECRET}@db:5432/aceh", "postgresql://aceh:***@db:5432/aceh"),
        (f"postgresql+psycopg://aceh:{SECRET}@db/aceh", "postgresql+psycopg://aceh:***@db/aceh"),
        (f"postgresql://aceh@db/aceh?password={SECRET}", "postgresql://aceh@db/aceh?password=***"),
        ("sqlite:///var/aceh.db", "sqlite:///var/aceh.db"),
        ("http://127.0.0.1:8001/v1", "http://127.0.0.1:8001/v1"),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


def test_urls_inside_text_and_log_lines_are_redacted() -> None:
    text = f"failed: postgresql://u:{SECRET}@10.0.0.9/x; dsn host=h password={SECRET} user=u"
    assert SECRET not in redact_urls(text) and redact_urls(text).count("***") == 2
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    log = logging.getLogger("aceh_rag.test_redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("cannot open %s", f"postgresql://aceh:{SECRET}@db/aceh")
        try:
            raise RuntimeError(f"driver said postgresql://aceh:{SECRET}@db/aceh")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    assert SECRET not in stream.getvalue() and "aceh:***@db" in stream.getvalue()
