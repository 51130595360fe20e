"""Which table references of a parsed statement read a real table, resolved through sqlglot's scope analysis.

A name in ``FROM`` is a common table expression only where the database would resolve it to one: the CTE must
be visible from that scope (``Scope.cte_sources``: defined by an enclosing or earlier ``WITH``, or the CTE
itself inside the recursive term of ``WITH RECURSIVE``). A name matching a CTE anywhere else is a table: the
body of a non-recursive CTE that reads its own name (``WITH secret AS (SELECT * FROM secret)``, which
PostgreSQL resolves to the table), a CTE defined in another branch or subquery, a later sibling CTE, a derived
table's alias seen from a ``LATERAL``, a quoted name that differs in case on PostgreSQL. Where sqlglot and a
database could disagree, the reference counts as a table, so the allow-list check sees it: a doubt refuses a
statement, it never reads a table.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.scope import Scope, traverse_scope


class UnresolvedTables(ValueError):
    """The statement's table references could not be resolved."""


def _anchor_self_references(root: exp.Expr) -> set[int]:
    """A recursive CTE's own name inside its non-recursive term (everything left of the last UNION): no
    database reads the CTE there (PostgreSQL refuses it), so it must not pass as one."""
    found: set[int] = set()
    for cte in root.find_all(exp.CTE):
        body = cte.this
        if isinstance(body, exp.Union):
            for table in body.left.find_all(exp.Table):
                if table.name == cte.alias_or_name and not table.db:
                    found.add(id(table))
    return found


def real_tables(root: exp.Expr, dialect: str) -> list[exp.Table]:
    """Every ``exp.Table`` of ``root`` that is not a reference to a visible CTE, identifiers normalised
    the dialect's way (PostgreSQL folds unquoted names to lower case and keeps quoted ones)."""
    try:
        normalised = normalize_identifiers(root.copy(), dialect=dialect)
        scopes = traverse_scope(normalised)
    except (SqlglotError, RecursionError) as e:  # OptimizeError is a SqlglotError
        raise UnresolvedTables(f"the statement's tables cannot be resolved: {type(e).__name__}") from None
    to_cte: set[int] = set()
    for scope in scopes:
        for table in scope.tables:
            unqualified = not table.db and not table.catalog
            if unqualified and isinstance(scope.cte_sources.get(table.name), Scope):
                to_cte.add(id(table))
    to_cte -= _anchor_self_references(normalised)
    return [t for t in normalised.find_all(exp.Table) if id(t) not in to_cte]
