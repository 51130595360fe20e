"""``sql_query``: a read-only structured source, registered only when ``sources.sql`` is configured.

Read-only three times over: every statement passes :func:`~serve_app.agent.tools.sql_check.check_select`
before it runs (one SELECT over the allowed tables, no write, setting, comment or second statement); SQLite
is opened with ``mode=ro`` (and ``query_only``); PostgreSQL runs each statement in a READ ONLY transaction
with ``statement_timeout``, as the configured role, which must have SELECT only (a role that may write is
refused). Rows are limited to ``max_rows``.

Without a model to write SQL, :meth:`SqlQueryTool.plan` builds a parameterised SELECT over the text columns
from the question's words. A total, an average or a count ("berapa jumlah kecamatan") is computed here from
the rows read (never by the database), and kept with those rows so the judge recomputes it
(judge/aggregate.py). Every row shown is a ``tool`` passage with identity ``{dataset, source, period,
call, retrieved_at}``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, NamedTuple

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Engine as SqlEngine
from sqlalchemy.engine import make_url

from judge.aggregate import format_id, shared_cells
from serve_app.agent.text import content_terms, format_number, format_scaled, term_matches, words, years
from serve_app.agent.tools.base import Evidence, Tool, ToolArgs, ToolContext, ToolResult
from serve_app.agent.tools.sql_check import UnsafeStatement, check_select
from serve_app.agent.tools.table import GENERIC_TERMS, OPERATION_TERMS, detect_operation
from serve_app.answer.segments import Aggregate
from serve_app.config import SqlSourceConfig

__all__ = ["SqlQueryTool", "UnsafeStatement", "check_select", "read_only_url"]

log = logging.getLogger(__name__)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_YEARISH = ("tahun", "year", "periode")
MAX_ROW_PASSAGES = 10  # rows shown to the writer; a computed figure keeps every row it came from


def read_only_url(url: str) -> str:
    """A SQLite URL opened read-only (``mode=ro`` URI); other URLs unchanged."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return url
    database = parsed.database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        raise ValueError("the SQL source must be a SQLite file")
    return f"sqlite:///file:{Path(database).resolve()}?mode=ro&uri=true"


RUN_TIMEOUT_FACTOR = 3  # one run: at most a connect, the role check and its statements, each in timeout_s


def connect_timeout_s(timeout_s: float) -> int:
    """libpq's ``connect_timeout`` (whole seconds; it treats 1 as 2): the tool's timeout, rounded up."""
    return max(2, math.ceil(timeout_s))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _shown(column: str, value: object) -> str:
    """A cell as the writer and the judge read it: measures in Indonesian digits, years and ids as stored."""
    if value is None:
        return ""
    if _is_number(value) and not any(h in column.lower() for h in _YEARISH):
        return format_id(Decimal(str(value)))
    return str(value)


def _params(given: object) -> dict[str, Any]:
    """A planned statement's bind parameters (a mapping, as ``dict()`` reads it)."""
    if not isinstance(given, Mapping):
        raise TypeError(f"SQL parameters are {type(given).__name__}, not a mapping")
    return {str(k): v for k, v in given.items()}


class _Planned(NamedTuple):
    table: str
    statement: str
    params: dict[str, Any]
    measure: str | None  # the column a total or an average is computed over
    counted: str | None = None  # the text column whose rows are counted ("berapa jumlah kecamatan")


def _names(term: str, column: str) -> bool:
    return any(term_matches(term, w) for w in re.split(r"[^0-9a-z]+", column.lower()) if w)


def _counted(query: str, terms: list[str], text_cols: list[str], measure: str | None) -> str | None:
    """ "Berapa jumlah kecamatan …": a quantity question naming a text column (and not the measure) asks
    how many rows there are; None otherwise."""
    asked = set(words(query))
    if detect_operation(query) is not None or not asked & {"berapa", "jumlah", "banyak", "banyaknya"}:
        return None
    if measure is not None and any(_names(t, measure) for t in terms):
        return None
    named = [c for c in text_cols if not any(h in c.lower() for h in _YEARISH)]
    return next((c for c in named if any(_names(t, c) for t in terms)), None)


class SqlQueryTool(Tool):
    name = "sql_query"

    def __init__(
        self,
        url: str,
        *,
        source_name: str = "sql",
        tables: Sequence[str] | None = None,
        schema: str | None = None,
        row_limit: int = 200,
        timeout_s: float = 5.0,
    ) -> None:
        self.url = url
        self.source_name = source_name
        self.tables = list(tables) if tables is not None else None
        self.schema = schema
        self.row_limit = row_limit
        self.timeout_s = timeout_s
        self._engine: SqlEngine | None = None
        self._known: list[str] | None = None
        self._role_checked = False

    @classmethod
    def from_config(cls, cfg: SqlSourceConfig, *, root: Path) -> SqlQueryTool:
        url = make_url(cfg.url)
        if url.get_backend_name() == "sqlite" and url.database and not Path(url.database).is_absolute():
            url = url.set(database=str(root / url.database))  # relative to the repository, like every path
        if url.get_backend_name() == "sqlite" and not Path(url.database or "").is_file():
            raise ValueError(f"the SQLite file {url.database} does not exist")
        name = Path(url.database or "sql").name
        return cls(
            url.render_as_string(hide_password=False),
            source_name=f"SQL {name}",
            tables=cfg.tables,
            schema=cfg.db_schema,
            row_limit=cfg.max_rows,
            timeout_s=cfg.timeout_s,
        )

    @property
    def dialect(self) -> str:
        return make_url(self.url).get_backend_name()

    def _db(self) -> SqlEngine:
        if self._engine is None:
            if self.dialect == "postgresql":
                timeout_ms = int(self.timeout_s * 1000)
                options = f"-c default_transaction_read_only=on -c statement_timeout={timeout_ms}"
                if self.schema:
                    options += f" -c search_path={self.schema}"
                # connect_timeout: an unreachable host fails within the tool's time, not the OS's minutes.
                args = {"options": options, "connect_timeout": connect_timeout_s(self.timeout_s)}
                self._engine = create_engine(
                    self.url, pool_pre_ping=True, pool_timeout=self.timeout_s, connect_args=args
                )
            else:
                self._engine = create_engine(
                    read_only_url(self.url),
                    pool_pre_ping=True,
                    pool_timeout=self.timeout_s,
                    connect_args={"timeout": self.timeout_s},  # how long a locked file is waited for
                )
        return self._engine

    def allowed_tables(self) -> list[str]:
        """The configured tables, or every table of the schema (the default one when none is set)."""
        if self.tables is not None:
            return self.tables
        if self._known is None:
            names = inspect(self._db()).get_table_names(schema=self.schema)
            self._known = [t for t in names if _IDENT.match(t)]
        return self._known

    def check(self, statement: str) -> str:
        return check_select(statement, dialect=self.dialect, tables=self.allowed_tables, schema=self.schema)

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        work = asyncio.to_thread(self._run_sync, args, str(args.get("query") or ctx.query))
        bound = RUN_TIMEOUT_FACTOR * self.timeout_s
        try:
            # A connect, a role check and the statements each stop at timeout_s; this bounds them together
            # so the request goes on (sql_unavailable) while a stuck driver call finishes in its thread.
            return await asyncio.wait_for(work, timeout=bound)
        except TimeoutError:
            log.warning("sql_query on %s took over %.0f s", self.source_name, bound)
            return ToolResult("unavailable", note="sql_unavailable")
        except UnsafeStatement:
            return ToolResult("error")
        except PermissionError as exc:
            log.error("sql_query refused to run: %s", exc)
            return ToolResult("unavailable", note="sql_unavailable")
        except Exception:
            return ToolResult("unavailable", note="sql_unavailable")

    def _run_sync(self, args: ToolArgs, query: str) -> ToolResult:
        operation = detect_operation(query)
        if args.get("statement"):
            table = str(args.get("table") or "query")
            planned: list[_Planned] = [
                _Planned(table, str(args["statement"]), _params(args.get("params") or {}), None)
            ]
        else:
            planned = self.plan(query)
        evidence: list[Evidence] = []
        for table, statement, params, measure, counted in planned:
            columns, rows, complete = self.execute(statement, params)
            call = statement + (f" {params}" if params else "")
            identity = {
                "dataset": table,
                "source": self.source_name,
                "period": None,
                "call": call,
                "retrieved_at": _now(),
            }
            shown = [tuple(_shown(c, v) for c, v in zip(columns, row, strict=True)) for row in rows]
            year_cols = [i for i, c in enumerate(columns) if any(h in c.lower() for h in _YEARISH)]
            found = sorted({row[i] for row in shown for i in year_cols if row[i]})
            identity["period"] = ", ".join(found[:5]) or ", ".join(years(query)) or None
            if counted is not None and complete and rows:
                evidence.append(self._aggregate(table, columns, rows, shown, counted, "count", identity))
            elif measure is not None and complete and operation in ("sum", "average", "compare") and rows:
                evidence.append(self._aggregate(table, columns, rows, shown, measure, operation, identity))
            for row in shown[:MAX_ROW_PASSAGES]:
                cells = "; ".join(f"{c} = {v}" for c, v in zip(columns, row, strict=True))
                evidence.append(
                    Evidence(text=f"{table}: {cells}", kind="tool", identity=dict(identity), score=1.0)
                )
        return ToolResult("ok" if evidence else "empty", evidence)

    def _aggregate(
        self,
        table: str,
        columns: list[str],
        rows: list[tuple[object, ...]],
        shown: list[tuple[str, ...]],
        measure: str,
        operation: str,
        identity: dict[str, Any],
    ) -> Evidence:
        index = columns.index(measure)
        values = [Decimal(str(r[index])) for r in rows if _is_number(r[index])]
        op: Literal["sum", "mean", "count"] = (
            "count" if operation == "count" else "mean" if operation == "average" else "sum"
        )
        if op == "count":
            value = Decimal(len(rows))
        else:
            value = sum(values, Decimal(0)) if op == "sum" else sum(values, Decimal(0)) / len(values)
        scaled = format_scaled(float(value))
        figure = format_number(float(value)) + (f" (sekitar {scaled})" if scaled else "")
        word = {"count": "Banyaknya", "mean": "Rata-rata", "sum": "Jumlah"}[op]
        shared = shared_cells(columns, shown, skip="" if op == "count" else measure)
        common = " (" + ", ".join(f"{c} {v}" for c, v in shared) + ")" if shared else ""
        statement = f"{word} {measure} dari {len(rows)} baris tabel {table}{common} adalah {figure}."
        aggregate = Aggregate(operation=op, column=measure, header=tuple(columns), rows=tuple(shown))
        return Evidence(text=statement, kind="tool", identity=dict(identity), score=1.0, aggregate=aggregate)

    def execute(
        self, statement: str, params: Mapping[str, object]
    ) -> tuple[list[str], list[tuple[object, ...]], bool]:
        """Run one checked SELECT read-only within ``timeout_s``: (columns, at most ``row_limit`` rows,
        whether those are all the rows)."""
        safe = self.check(statement)
        engine = self._db()
        if self.dialect == "postgresql" and not self._role_checked:
            self._check_role(engine)
        with engine.connect() as conn:
            if self.dialect == "sqlite":
                conn.exec_driver_sql("PRAGMA query_only = ON")
                stop_at = time.monotonic() + self.timeout_s
                raw = conn.connection.dbapi_connection
                raw.set_progress_handler(lambda: int(time.monotonic() > stop_at), 1000)  # type: ignore[union-attr]
            else:
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(self.timeout_s * 1000)}")
            try:
                result = conn.execute(text(safe), params)
                columns = list(result.keys())
                fetched = [tuple(r) for r in result.fetchmany(self.row_limit + 1)]
            finally:
                if self.dialect == "sqlite":
                    raw.set_progress_handler(None, 0)  # type: ignore[union-attr]
                conn.rollback()
        return columns, fetched[: self.row_limit], len(fetched) <= self.row_limit

    def _check_role(self, engine: SqlEngine) -> None:
        """The PostgreSQL role must be unable to write: not a superuser, and no write privilege on the
        allowed tables. The READ ONLY transaction holds either way; a role that may write is a
        misconfiguration this source refuses to run with."""
        with engine.connect() as conn:
            is_super = text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            superuser = conn.execute(is_super).scalar()
            writable = [
                table
                for table in self.allowed_tables()
                if conn.execute(
                    text("SELECT has_table_privilege(current_user, :t, 'INSERT,UPDATE,DELETE,TRUNCATE')"),
                    {"t": f"{self.schema}.{table}" if self.schema else table},
                ).scalar()
            ]
            conn.rollback()
        if superuser or writable:
            raise PermissionError(
                "the SQL source's role may write ("
                + ("superuser" if superuser else ", ".join(writable))
                + "); connect with a role that has SELECT only"
            )
        self._role_checked = True

    def plan(self, query: str) -> list[_Planned]:
        """Parameterised SELECTs over the allowed tables whose text columns contain the question's words."""
        insp = inspect(self._db())
        terms = [t for t in content_terms(query) if not t[0].isdigit()]
        asked_years = years(query)
        operation = detect_operation(query)
        planned: list[_Planned] = []
        for table in self.allowed_tables():
            if not _IDENT.match(table):
                continue
            cols = [c for c in insp.get_columns(table, schema=self.schema) if _IDENT.match(c["name"])]
            text_cols = [
                c["name"]
                for c in cols
                if "CHAR" in str(c["type"]).upper() or "TEXT" in str(c["type"]).upper()
            ]
            num_cols = [c["name"] for c in cols if c["name"] not in text_cols]
            year_cols = [c for c in (text_cols + num_cols) if any(h in c.lower() for h in _YEARISH)]
            names = [table, *(c["name"] for c in cols)]
            named = {w for n in names for w in re.split(r"[^0-9a-z]+", n.lower()) if w}
            where, params, matched = [], {}, []
            for i, term in enumerate(terms):
                if not text_cols:
                    break
                clause = " OR ".join(f"LOWER({c}) LIKE :t{i}" for c in text_cols)
                if self._matches(table, clause, {f"t{i}": f"%{term}%"}):
                    where.append(f"({clause})")
                    params[f"t{i}"] = f"%{term}%"
                    matched.append(term)
            if not where:
                continue
            unknown = [
                t
                for t in terms
                if t not in matched
                and t not in OPERATION_TERMS
                and t not in GENERIC_TERMS
                and not any(term_matches(t, w) for w in named)
            ]
            if unknown:
                continue  # an asked word neither its rows nor its names use: the table cannot answer
            if year_cols and asked_years:
                where.append(
                    "("
                    + " OR ".join(f"CAST({year_cols[0]} AS TEXT) = :y{j}" for j in range(len(asked_years)))
                    + ")"
                )
                params.update({f"y{j}": y for j, y in enumerate(asked_years)})
            condition = " AND ".join(where)
            measures = [c for c in num_cols if c not in year_cols and not c.lower().endswith("id")]
            measure = measures[-1] if measures else None
            order = f" ORDER BY {measure} DESC" if measure and operation in ("top", "sum") else ""
            statement = f"SELECT * FROM {table} WHERE {condition}{order}"
            counted = _counted(query, terms, text_cols, measure)
            planned.append(_Planned(table, statement, params, measure, counted))
        return planned

    def _matches(self, table: str, clause: str, params: dict[str, Any]) -> bool:
        _, rows, _ = self.execute(f"SELECT 1 FROM {table} WHERE {clause} LIMIT 1", params)
        return bool(rows)
