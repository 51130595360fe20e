"""The v1 artifacts' store: files kept in the conversation store's database, each owned by one principal
and fetchable until it expires.

Why the database and not files under ``.aceh/``: every Ingress replica (and, on a cluster, every node)
reaches the same database, so the replica that serves the fetch need not be the one that made the file;
a write is one transaction (nothing half-written); expiry is a condition of the read itself, so an
expired artifact answers 404 even before the purge removes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select

from serve_app.conversation.store import Store, _iso
from serve_app.conversation.tables import t_artifacts


@dataclass(frozen=True, slots=True)
class ArtifactFile:
    name: str
    media_type: str
    content: bytes
    rows: int


@dataclass(frozen=True, slots=True)
class StoredArtifact:
    id: str
    name: str
    media_type: str
    rows: int
    expires_at: str


class ArtifactStore:
    def __init__(self, store: Store) -> None:
        self.store = store

    def save(
        self, owner: str, files: Sequence[ArtifactFile], *, ttl_s: float, now: datetime | None = None
    ) -> list[StoredArtifact]:
        """One transaction for every file of an answer; expired artifacts of anyone are purged with it."""
        created = now or datetime.now(UTC)
        expires = created + timedelta(seconds=ttl_s)
        ids = [uuid.uuid4().hex for _ in files]
        rows = [
            {"id": i, "owner": owner, "name": f.name, "media_type": f.media_type, "content": f.content,
             "rows": f.rows, "created_at": created, "expires_at": expires}
            for i, f in zip(ids, files, strict=True)
        ]
        with self.store._write() as conn:
            conn.execute(delete(t_artifacts).where(t_artifacts.c.expires_at <= created))
            if rows:
                conn.execute(t_artifacts.insert(), rows)
        return [
            StoredArtifact(i, f.name, f.media_type, f.rows, _iso(expires))
            for i, f in zip(ids, files, strict=True)
        ]

    def fetch(self, artifact_id: str, owner: str, *, now: datetime | None = None) -> ArtifactFile | None:
        """None when unknown, another principal's, or expired (all three answer 404)."""
        at = now or datetime.now(UTC)
        query = select(t_artifacts.c.name, t_artifacts.c.media_type, t_artifacts.c.content,
                       t_artifacts.c.rows).where(
            t_artifacts.c.id == artifact_id, t_artifacts.c.owner == owner, t_artifacts.c.expires_at > at
        )
        with self.store._read() as conn:
            row = conn.execute(query).first()
        return None if row is None else ArtifactFile(row.name, row.media_type, bytes(row.content), row.rows)
