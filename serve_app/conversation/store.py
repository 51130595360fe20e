"""The conversation store: conversations, messages, long-term memory, playground receipts and the
cross-replica rate-limit hits, behind one interface over SQLAlchemy 2 Core.

SQLite (``sqlite:///path``, WAL, busy timeout) by default; PostgreSQL (``postgresql://…``, psycopg 3) for a
store shared by replicas. Methods are synchronous and thread-safe; async callers use ``asyncio.to_thread``.

Ordering and atomicity: an exchange (user message, assistant message, memory items, the route claim) is
written in ONE transaction that first takes the conversation's write lock (``SELECT … FOR UPDATE`` on
PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite) and assigns ordinals inside it, so a failed, cancelled or
killed writer leaves nothing behind and concurrent writers cannot interleave turns.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import (
    create_engine,
    event,
    func,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine, make_url

from models.json_types import JSONObject
from serve_app import errors
from serve_app.conversation import migrations as schema_migrations
from serve_app.conversation.exchange import ANNOTATION_KEYS, Exchange, RouteFamily, insert_exchange
from serve_app.conversation.shared_limits import hit_moving_window
from serve_app.conversation.tables import (
    t_conversations,
    t_memory,
    t_messages,
    t_receipts,
)

ClaimResult = Literal["ok", "conflict", "not_found"]
ROUTE_FAMILIES = ("v1", "v2")
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_CODE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class NotFoundError(errors.NotFound):
    """The conversation does not exist or belongs to another principal (both answer 404)."""


class ConflictError(errors.Conflict):
    """The conversation belongs to the other route family (409)."""


@dataclass(frozen=True)
class ConversationRecord:
    conversation_id: str
    owner: str
    route: RouteFamily | None
    created_at: str


@dataclass(frozen=True, slots=True)
class PlaygroundReceipt:
    """The administrative receipt of one playground run: identifiers, a status code, numeric counts and
    times (epoch seconds or datetimes). The store refuses anything that could carry text."""

    run_id: str
    admin: str
    status: str
    counts: Mapping[str, int | float | bool | None]
    started_at: float | datetime
    finished_at: float | datetime


def database_url(url: str) -> str:
    """``postgresql://`` / ``postgres://`` → the psycopg 3 driver; anything else unchanged."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _iso(value: datetime) -> str:
    if value.tzinfo is None:  # SQLite hands back naive datetimes; they were written as UTC
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _as_datetime(value: float | datetime) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return datetime.fromtimestamp(float(value), UTC)


class Store:
    """All persistent state of the service. ``Store(url).migrate()`` once at start-up."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        pool_size: int = 10,
        echo: bool = False,
        connect_timeout_s: int = 10,
        statement_timeout_s: float = 30.0,
    ) -> None:
        self.url = database_url(url)
        parsed = make_url(self.url)
        self.dialect = parsed.get_backend_name()
        if self.dialect not in ("sqlite", "postgresql"):
            raise ValueError(
                f"Database URL must be sqlite:///PATH or postgresql://…, not '{parsed.drivername}'."
            )
        self.schema = schema
        if schema is not None and not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"Schema name '{schema}' must be lower-case letters, digits and underscores.")
        self._locks: dict[tuple[int, str], list[Any]] = {}
        self._locks_guard = threading.Lock()
        self._local_writer: threading.Lock | nullcontext[None] = nullcontext()
        if self.dialect == "sqlite":
            self.engine = self._sqlite_engine(parsed.database, echo=echo)
            self._local_writer = threading.Lock()
        else:
            # An unreachable server fails in connect_timeout_s; a statement stuck on a lock or a slow plan
            # is cancelled by the server after statement_timeout_s: no request thread waits on the OS.
            options = f"-c statement_timeout={int(statement_timeout_s * 1000)}"
            given = parsed.query.get("options")  # the URL's own options (connect_args would replace them)
            if given:
                options = f"{given if isinstance(given, str) else ' '.join(given)} {options}"
            if schema is not None:
                options += f" -c search_path={schema}"
            connect_args: dict[str, Any] = {"connect_timeout": connect_timeout_s, "options": options}
            self.engine = create_engine(
                self.url,
                pool_size=pool_size,
                max_overflow=2 * pool_size,
                pool_pre_ping=True,
                pool_timeout=connect_timeout_s,
                connect_args=connect_args,
                echo=echo,
            )

    @staticmethod
    def _sqlite_engine(database: str | None, *, echo: bool) -> Engine:
        if not database or database == ":memory:":
            raise ValueError("The SQLite store needs a file (sqlite:///PATH), not an in-memory database.")
        Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            f"sqlite:///{database}",
            echo=echo,
            pool_size=8,
            max_overflow=32,
            connect_args={"timeout": 30, "check_same_thread": False},
        )

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (below)
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA foreign_keys=ON")
            # NORMAL in WAL mode survives a killed process; only a power loss may drop the newest commits.
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            immediate = conn.get_execution_options().get("aceh_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A write transaction; on SQLite it holds the database write lock from its first statement.
        SQLite writers of this process also queue on a thread lock: SQLite's busy handler polls with
        growing sleeps, which starves some threads and inflates latency under contention."""
        with self._local_writer, self.engine.connect() as conn:
            conn.execution_options(aceh_write=True)
            with conn.begin():
                yield conn

    def migrate(self) -> list[int]:
        """Create or upgrade the schema; returns the migration versions applied now."""
        with self._write() as conn:
            if self.dialect == "postgresql":
                conn.execute(
                    text("SELECT pg_advisory_xact_lock(:k)"),
                    {"k": schema_migrations.lock_key(self.schema or "public")},
                )
                if self.schema is not None:
                    conn.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            return schema_migrations.upgrade(conn)

    def schema_version(self) -> int:
        with self._read() as conn:
            return schema_migrations.current_version(conn)

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ conversations

    def create_conversation(self, owner: str) -> dict[str, str]:
        """A new empty conversation, unclaimed by any route family: ``{conversation_id, created_at}``."""
        cid, now = uuid.uuid4().hex, datetime.now(UTC)
        with self._write() as conn:
            conn.execute(t_conversations.insert().values(id=cid, owner=owner, route=None, created_at=now))
        return {"conversation_id": cid, "created_at": _iso(now)}

    def get_conversation(self, cid: str, owner: str) -> ConversationRecord | None:
        """None when unknown OR owned by another principal (the caller answers 404 for both)."""
        with self._read() as conn:
            row = conn.execute(
                select(t_conversations).where(t_conversations.c.id == cid, t_conversations.c.owner == owner)
            ).first()
        if row is None:
            return None
        return ConversationRecord(row.id, row.owner, row.route, _iso(row.created_at))

    def claim_route(self, cid: str, owner: str, route_family: RouteFamily) -> ClaimResult:
        """Atomically give an unclaimed conversation to ``route_family``; the first family to answer
        owns it."""
        _check_family(route_family)
        conv = t_conversations.c
        with self._write() as conn:
            claimed = conn.execute(
                t_conversations.update()
                .where(conv.id == cid, conv.owner == owner, conv.route.is_(None))
                .values(route=route_family)
            ).rowcount
            if claimed:
                return "ok"
            row = conn.execute(select(conv.route).where(conv.id == cid, conv.owner == owner)).first()
        if row is None:
            return "not_found"
        return "ok" if row.route == route_family else "conflict"

    def write_exchange(self, exchange: Exchange) -> str:
        """Store one turn, starting its conversation when ``exchange.new``; returns the assistant message
        id."""
        return self.start_conversation(exchange) if exchange.new else self.append_exchange(exchange)

    def append_exchange(self, exchange: Exchange) -> str:
        """Store one turn (user message, assistant answer, memory items) and claim the route, all in one
        transaction. Returns the assistant message id. Raises NotFoundError / ConflictError."""
        cid, owner, route_family = exchange.conversation_id, exchange.owner, exchange.route_family
        _check_family(route_family)
        with self._write() as conn:
            # The row lock serialises writers of this conversation across processes (SQLite: the
            # IMMEDIATE transaction already holds the database write lock).
            row = conn.execute(
                select(t_conversations.c.owner, t_conversations.c.route)
                .where(t_conversations.c.id == cid)
                .with_for_update()
            ).first()
            if row is None or row.owner != owner:
                raise NotFoundError()
            if row.route not in (None, route_family):
                raise ConflictError()
            if row.route is None:
                conn.execute(
                    t_conversations.update().where(t_conversations.c.id == cid).values(route=route_family)
                )
            last = conn.execute(
                select(func.max(t_messages.c.ordinal)).where(t_messages.c.conversation_id == cid)
            ).scalar()
            return insert_exchange(conn, exchange, -1 if last is None else int(last))

    def start_conversation(self, exchange: Exchange) -> str:
        """A new conversation, claimed by its route family, with its first turn: one transaction (what
        :meth:`create_conversation` then :meth:`append_exchange` do in two). Returns the assistant message
        id."""
        _check_family(exchange.route_family)
        with self._write() as conn:
            conn.execute(
                t_conversations.insert().values(
                    id=exchange.conversation_id,
                    owner=exchange.owner,
                    route=exchange.route_family,
                    created_at=datetime.now(UTC),
                )
            )
            return insert_exchange(conn, exchange, -1)

    def list_messages(self, cid: str, *, last: int | None = None) -> list[JSONObject]:
        """Messages in order; with ``last``, only the newest ``last`` (what one turn reads of a long
        conversation). User: ``{message_id, ordinal, role, content, created_at}``; assistant adds ``body``
        (the stored answer as the reader saw it, claims and framing put back, and ``v2_faithfulness``).
        JSON-ready. Ownership is the caller's check (``get_conversation``)."""
        newest_first = select(t_messages).where(t_messages.c.conversation_id == cid)
        with self._read() as conn:
            rows = conn.execute(newest_first.order_by(t_messages.c.ordinal.desc()).limit(last)).all()
        out = []
        for row in reversed(rows):
            item: JSONObject = {
                "message_id": row.id,
                "ordinal": row.ordinal,
                "role": row.role,
                "content": row.content,
                "created_at": _iso(row.created_at),
            }
            if row.role == "assistant":
                body = dict(row.body or {})
                for key in ANNOTATION_KEYS:
                    if getattr(row, key) is not None:
                        body[key] = getattr(row, key)
                body["v2_faithfulness"] = row.v2_faithfulness
                item["body"] = body
            out.append(item)
        return out

    def read_conversation(self, cid: str, owner: str) -> JSONObject | None:
        """The ``GET /conversations/{id}`` body, or None (404) when unknown or not the caller's."""
        record = self.get_conversation(cid, owner)
        if record is None:
            return None
        return {"conversation_id": cid, "route": record.route, "messages": self.list_messages(cid)}

    def list_memory(self, owner: str, *, limit: int = 50) -> list[JSONObject]:
        """The owner's long-term memory items, newest first."""
        with self._read() as conn:
            rows = conn.execute(
                select(t_memory).where(t_memory.c.owner == owner).order_by(t_memory.c.id.desc()).limit(limit)
            ).all()
        return [
            {
                "text": r.text,
                "conversation_id": r.conversation_id,
                "source_message_id": r.source_message_id,
                "created_at": _iso(r.created_at),
            }
            for r in rows
        ]

    @asynccontextmanager
    async def conversation_lock(self, cid: str) -> AsyncIterator[None]:
        """Serialise the requests of one conversation inside this process (history read → answer →
        append), so turns keep their order; across processes ``append_exchange`` locks in the database."""
        key = (id(asyncio.get_running_loop()), cid)
        with self._locks_guard:
            entry = self._locks.setdefault(key, [asyncio.Lock(), 0])
            entry[1] += 1
        try:
            async with entry[0]:
                yield
        finally:
            with self._locks_guard:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._locks[key]

    # ------------------------------------------------------------------ playground and limits

    def record_playground_receipt(self, receipt: PlaygroundReceipt) -> None:
        """Store a playground run's receipt; a run id, status or count name that is no short code, or a count
        that is no finite number, is refused (so no prompt, question, answer or passage can be stored)."""
        if not _RUN_ID.fullmatch(receipt.run_id):
            raise ValueError("playground run_id must be 1-64 letters, digits, '_' or '-'")
        if not _CODE.fullmatch(receipt.status):
            raise ValueError("playground status must be a short lower-case code")
        clean: dict[str, int | float | bool | None] = {}
        for name, value in receipt.counts.items():
            if not _CODE.fullmatch(name) or not (value is None or isinstance(value, int | float | bool)):
                raise ValueError("playground counts must map short codes to numbers")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError("playground counts must be finite numbers")
            clean[name] = value
        row = {
            **asdict(receipt),  # the receipt's fields are the table's columns
            "counts": clean,
            "started_at": _as_datetime(receipt.started_at),
            "finished_at": _as_datetime(receipt.finished_at),
        }
        with self._write() as conn:
            conn.execute(t_receipts.insert().values(**row))

    def list_playground_receipts(self, admin: str | None = None) -> list[JSONObject]:
        query = select(t_receipts).order_by(t_receipts.c.started_at)
        if admin is not None:
            query = query.where(t_receipts.c.admin == admin)
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [
            {
                "run_id": r.run_id,
                "admin": r.admin,
                "status": r.status,
                "counts": r.counts,
                "started_at": _iso(r.started_at),
                "finished_at": _iso(r.finished_at),
            }
            for r in rows
        ]

    def hit_rate_limit(self, key: str, limit: int, window_s: float) -> float | None:
        """Count one hit for ``key`` in a moving window of ``window_s``, shared by every process using this
        database (conversation/shared_limits.py). None when allowed; otherwise the seconds until the oldest
        hit leaves the window (Retry-After)."""
        with self._write() as conn:
            return hit_moving_window(conn, self.dialect, key, limit, window_s, time.time())


def _check_family(route_family: str) -> None:
    if route_family not in ROUTE_FAMILIES:
        raise ValueError(f"route family must be 'v1' or 'v2', not {route_family!r}")
