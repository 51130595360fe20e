"""The statement check of ``sql_query``: one read-only SELECT over the allowed tables, refused BEFORE it runs.

Defence in depth: the connection is read-only too (tools/sql.py), but a statement that could write, change a
setting, sleep, read a file or reach a table outside the configured ones never gets that far. The check
parses the statement with sqlglot (the dialect's own grammar) after a textual pass that refuses what a
parser may forgive: a second statement, a comment, a write keyword anywhere outside a string literal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from serve_app.agent.tools.sql_tables import UnresolvedTables, real_tables

_FORBIDDEN = re.compile(
    r"\b(insert|update|delete|drop|alter|create|replace|truncate|attach|detach|pragma|grant|revoke|vacuum|"
    r"copy|merge|call|exec|execute|into|lock|set|reindex|analyze|comment|load|begin|commit|rollback|"
    r"savepoint|release|prepare|deallocate|listen|notify|discard|reset|do|declare|fetch|move|cluster|"
    r"refresh|security|owner|upsert|returning)\b",
    re.IGNORECASE,
)
# Functions a statement may call: aggregates and plain scalar functions. Any other (pg_sleep, set_config,
# nextval, pg_read_file, dblink, load_extension, readfile, generate_series, …) is refused.
_FUNCTIONS = frozenset(
    "Count Sum Avg Min Max Lower Upper Cast TryCast Coalesce Round Abs Length Substring Trim Concat "
    "Case If Nullif Greatest Least Extract Floor Ceil StrPosition Distinct".split()
)
_STATEMENTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)
_WRITES = (
    exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter, exp.Command, exp.Into, exp.Lock,
    exp.Set, exp.Pragma, exp.Merge, exp.Transaction, exp.Commit, exp.Rollback,
)
_DIALECTS = {"sqlite": "sqlite", "postgresql": "postgres"}


class UnsafeStatement(ValueError):
    """The statement is not one read-only SELECT over the allowed tables."""


def _masked(statement: str) -> str:
    """String literals and quoted identifiers blanked: they may hold any character."""
    return re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", "''", statement)


def check_select(
    statement: str,
    *,
    dialect: str = "sqlite",
    tables: Callable[[], Collection[str]] | None = None,
    schema: str | None = None,
) -> str:
    """The statement without a trailing ``;`` when it is one read-only SELECT whose tables are all among
    ``tables()`` (None: any) and in ``schema`` (None: unqualified names only); else UnsafeStatement."""
    s = statement.strip().rstrip(";").strip()
    if not s:
        raise UnsafeStatement("empty statement")
    masked = _masked(s)
    if ";" in masked:
        raise UnsafeStatement("more than one statement")
    if "--" in masked or "/*" in masked or "#" in masked:
        raise UnsafeStatement("comments are not accepted")
    if "\\" in masked or "$" in masked:
        raise UnsafeStatement("escapes and dollar quoting are not accepted")
    if not re.match(r"^(select|with)\b", s, re.IGNORECASE):
        raise UnsafeStatement("only SELECT statements are accepted")
    if _FORBIDDEN.search(masked):
        raise UnsafeStatement("the statement uses a keyword that can write or change settings")
    try:
        parsed = sqlglot.parse(s, read=_DIALECTS.get(dialect, dialect))
    except SqlglotError:
        raise UnsafeStatement("the statement does not parse") from None
    if len(parsed) != 1 or parsed[0] is None:
        raise UnsafeStatement("more than one statement")
    root = parsed[0]
    if not isinstance(root, _STATEMENTS):
        raise UnsafeStatement("only SELECT statements are accepted")
    for node in root.walk():
        if isinstance(node, _WRITES):
            raise UnsafeStatement("the statement can write or change settings")
        operator = isinstance(node, exp.Connector | exp.Binary | exp.Unary)  # AND, OR, =, NOT: Funcs too
        if isinstance(node, exp.Func) and not operator and type(node).__name__ not in _FUNCTIONS:
            name = node.name if isinstance(node, exp.Anonymous) else type(node).__name__
            raise UnsafeStatement(f"the function {name} is not allowed")
    allowed = None if tables is None else {t.lower() for t in tables()}
    try:
        read = real_tables(root, _DIALECTS.get(dialect, dialect))
    except UnresolvedTables as e:
        raise UnsafeStatement(str(e)) from None
    for table in read:  # CTE references resolved by scope: a CTE's name shadows only what really is the CTE
        name, where = table.name.lower(), table.db.lower()
        if not name:
            raise UnsafeStatement("only named tables may be read")
        if table.catalog or (where and where != (schema or "").lower()):
            raise UnsafeStatement(f"the table {table.sql()} is outside the allowed schema")
        if allowed is not None and name not in allowed:
            raise UnsafeStatement(f"the table {name} is not one of the allowed tables")
    return s
