"""``sql_query``: a read-only structured source, registered only when one is configured (off by default).

Only single ``SELECT`` (or ``WITH … SELECT``) statements pass :func:`check_select`; they run on a read-only
connection (SQLite ``query_only``, PostgreSQL ``READ ONLY`` transaction with ``statement_timeout``) with a
row limit and a time limit. Without a model to write SQL, :meth:`SqlQueryTool.plan` builds a parameterised
filter over the text columns from the question's words; an engine-written statement goes through the same
check. Every returned row is a ``tool`` passage with identity ``{dataset, source, period, call}``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Engine as SqlEngine

from serve_app.agent.text import content_terms, years
from serve_app.agent.tools.base import Evidence, Tool, ToolContext, ToolResult
from serve_app.agent.tools.table import detect_operation

_FORBIDDEN = re.compile(
    r"\b(insert|update|delete|drop|alter|create|replace|truncate|attach|detach|pragma|grant|revoke|vacuum|"
    r"copy|merge|call|exec|execute|into|lock|set|reindex|analyze|comment|load|begin|commit|rollback)\b",
    re.IGNORECASE,
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class UnsafeStatement(ValueError):
    """The statement is not one read-only SELECT."""


def check_select(statement: str) -> str:
    """Return the statement without a trailing ``;`` when it is a single read-only SELECT; else raise."""
    s = statement.strip().rstrip(";").strip()
    if not s:
        raise UnsafeStatement("empty statement")
    masked = re.sub(r"'(?:[^']|'')*'", "''", s)  # string literals may hold anything
    if ";" in masked:
        raise UnsafeStatement("more than one statement")
    if "--" in masked or "/*" in masked:
        raise UnsafeStatement("comments are not accepted")
    if not re.match(r"^(select|with)\b", s, re.IGNORECASE):
        raise UnsafeStatement("only SELECT statements are accepted")
    if _FORBIDDEN.search(masked):
        raise UnsafeStatement("the statement uses a keyword that can write or change settings")
    return s


class SqlQueryTool(Tool):
    name = "sql_query"

    def __init__(
        self,
        url: str,
        *,
        source_name: str = "sql",
        tables: Sequence[str] | None = None,
        row_limit: int = 50,
        timeout_s: float = 5.0,
    ) -> None:
        self.url = url
        self.source_name = source_name
        self.tables = list(tables) if tables is not None else None
        self.row_limit = row_limit
        self.timeout_s = timeout_s
        self._engine: SqlEngine | None = None

    def _db(self) -> SqlEngine:
        if self._engine is None:
            self._engine = create_engine(self.url, pool_pre_ping=True)
        return self._engine

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return await asyncio.to_thread(self._run_sync, args, str(args.get("query") or ctx.query))
        except UnsafeStatement:
            return ToolResult("error")
        except Exception:
            return ToolResult("unavailable", note="sql_unavailable")

    def _run_sync(self, args: dict[str, Any], query: str) -> ToolResult:
        if args.get("statement"):
            planned = [
                (str(args.get("table") or "query"), str(args["statement"]), dict(args.get("params") or {}))
            ]
        else:
            planned = self.plan(query)
        evidence: list[Evidence] = []
        for table, statement, params in planned:
            columns, rows = self.execute(statement, params)
            call = statement + (f" {params}" if params else "")
            for row in rows:
                cells = "; ".join(f"{c} = {v}" for c, v in zip(columns, row, strict=True))
                period = next(
                    (str(v) for c, v in zip(columns, row, strict=True) if "tahun" in c.lower()), None
                ) or (", ".join(years(query)) or None)
                identity = {"dataset": table, "source": self.source_name, "period": period, "call": call}
                evidence.append(Evidence(text=f"{table}: {cells}", kind="tool", identity=identity, score=1.0))
        return ToolResult("ok" if evidence else "empty", evidence)

    def execute(self, statement: str, params: dict[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one checked SELECT read-only, at most ``row_limit`` rows, within ``timeout_s``."""
        safe = check_select(statement)
        engine = self._db()
        with engine.connect() as conn:
            dialect = engine.dialect.name
            if dialect == "sqlite":
                conn.exec_driver_sql("PRAGMA query_only = ON")
                stop_at = time.monotonic() + self.timeout_s
                raw = conn.connection.dbapi_connection
                raw.set_progress_handler(lambda: int(time.monotonic() > stop_at), 1000)  # type: ignore[union-attr]
            elif dialect == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(self.timeout_s * 1000)}")
            try:
                result = conn.execute(text(safe), params)
                columns = list(result.keys())
                rows = [tuple(r) for r in result.fetchmany(self.row_limit)]
            finally:
                if dialect == "sqlite":
                    raw.set_progress_handler(None, 0)  # type: ignore[union-attr]
                conn.rollback()
        return columns, rows

    def plan(self, query: str) -> list[tuple[str, str, dict[str, Any]]]:
        """Parameterised SELECTs over the tables whose text columns contain the question's words."""
        insp = inspect(self._db())
        tables = self.tables if self.tables is not None else insp.get_table_names()
        terms = [t for t in content_terms(query) if not t[0].isdigit()]
        asked_years = years(query)
        operation = detect_operation(query)
        planned = []
        for table in tables:
            if not _IDENT.match(table):
                continue
            cols = [c for c in insp.get_columns(table) if _IDENT.match(c["name"])]
            text_cols = [
                c["name"]
                for c in cols
                if "CHAR" in str(c["type"]).upper() or "TEXT" in str(c["type"]).upper()
            ]
            num_cols = [c["name"] for c in cols if c["name"] not in text_cols]
            year_cols = [c for c in (text_cols + num_cols) if "tahun" in c.lower() or "year" in c.lower()]
            where, params = [], {}
            for i, term in enumerate(terms):
                if not text_cols:
                    break
                clause = " OR ".join(f"LOWER({c}) LIKE :t{i}" for c in text_cols)
                if self._matches(table, clause, {f"t{i}": f"%{term}%"}):
                    where.append(f"({clause})")
                    params[f"t{i}"] = f"%{term}%"
            if not where:
                continue
            if year_cols and asked_years:
                where.append(
                    "("
                    + " OR ".join(f"CAST({year_cols[0]} AS TEXT) = :y{j}" for j in range(len(asked_years)))
                    + ")"
                )
                params.update({f"y{j}": y for j, y in enumerate(asked_years)})
            condition = " AND ".join(where)
            measures = [c for c in num_cols if c not in year_cols and not c.lower().endswith("id")]
            if operation in ("sum", "compare", "average") and measures:
                fn = "AVG" if operation == "average" else "SUM"
                planned.append(
                    (
                        table,
                        f"SELECT COUNT(*) AS baris, {fn}({measures[-1]}) AS {fn.lower()}_{measures[-1]} "
                        f"FROM {table} WHERE {condition}",
                        dict(params),
                    )
                )
            order = f" ORDER BY {measures[-1]} DESC" if operation in ("top", "sum") and measures else ""
            planned.append(
                (table, f"SELECT * FROM {table} WHERE {condition}{order} LIMIT {self.row_limit}", params)
            )
        return planned

    def _matches(self, table: str, clause: str, params: dict[str, Any]) -> bool:
        _, rows = self.execute(f"SELECT 1 FROM {table} WHERE {clause} LIMIT 1", params)
        return bool(rows)
