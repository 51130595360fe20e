"""Every store test runs on SQLite (a tmp file) and on PostgreSQL (a schema of its own, dropped after)."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from serve_app.conversation.store import Store

# Set by .ci/run: an unreachable PostgreSQL then fails its tests instead of skipping them.
REQUIRE_POSTGRES = "ACEH_REQUIRE_POSTGRES"
PG_URL = os.environ.get("ACEH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@functools.cache
def postgres_reachable() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return True
    except Exception:  # any failure means: not available here
        return False


@dataclass(frozen=True)
class Backend:
    """How to open (again, or from another process) the database under test."""

    name: str
    url: str
    schema: str | None

    def open(self) -> Store:
        return Store(self.url, schema=self.schema)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", f"sqlite:///{tmp_path / 'store.db'}", None)
        return
    if not postgres_reachable():
        if os.environ.get(REQUIRE_POSTGRES) == "1":
            pytest.fail(f"PostgreSQL is not reachable at {PG_URL} and {REQUIRE_POSTGRES}=1: tests must run")
        pytest.skip(f"PostgreSQL is not reachable at {PG_URL}")
    schema = f"aceh_test_{uuid.uuid4().hex[:12]}"
    yield Backend("postgres", PG_URL, schema)
    admin = Store(PG_URL)
    try:
        with admin.engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        admin.close()


@pytest.fixture()
def store(backend: Backend) -> Iterator[Store]:
    s = backend.open()
    s.migrate()
    yield s
    s.close()
