"""v1 artifacts (``offer_artifacts: true`` on ``/query``): the answer's tables, each row with the passages it
cites, and the cited rows of ingested CSV/XLSX tables, as CSV and XLSX files kept for the caller.

Only what the published v1 answer holds goes in: v1 has already removed every statement the judge did not
confirm, so a file never carries a row the reader was not shown as verified.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from openpyxl import Workbook
from openpyxl.cell.cell import Cell
from openpyxl.worksheet.worksheet import Worksheet

from retrieval.port import RetrieverPort
from serve_app.answer.compose import table_cells
from serve_app.catalog.formula_guard import neutralised
from serve_app.conversation.artifacts import ArtifactFile, ArtifactStore
from serve_app.conversation.store import Store
from serve_app.guard.auth import Principal
from serve_app.wire.schemas import XLSX_MEDIA_TYPE, Artifact, Citation, ClaimMapEntry, QueryV1Response

CSV = "text/csv"
XLSX = XLSX_MEDIA_TYPE
SOURCE_COLUMNS = ["sumber", "chunk_id"]
_SEPARATOR = re.compile(r"^\|( *:?-{3,}:? *\|)+$")
_INTEGER = re.compile(r"^-?(0|[1-9][0-9]{0,17})$")  # a plain integer (no leading zero: codes stay text)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")  # ASCII: the name goes into a header


@dataclass(frozen=True, slots=True)
class Sheet:
    """One table to offer: a name (file stem), its header and its rows."""

    name: str
    columns: list[str]
    rows: list[list[str]]


def _lines(answer: str) -> list[tuple[int, int, str]]:
    out, at = [], 0
    for line in answer.split("\n"):
        out.append((at, at + len(line), line))
        at += len(line) + 1
    return out


def _extra_text(cite: Citation, name: str) -> str:
    """A text field a citation carries beyond the model's own (``legal_reference``); "" when absent."""
    value = (cite.model_extra or {}).get(name)
    return value if isinstance(value, str) else ""


def _row_sources(claims: Sequence[ClaimMapEntry], start: int, end: int) -> tuple[str, str]:
    """The cited documents and chunk ids of the claims inside [start, end) of the answer."""
    labels: list[str] = []
    chunks: list[str] = []
    for claim in claims:
        if claim.start >= start and claim.end <= end:
            for cite in (pair.citation for pair in claim.citations):
                label = _extra_text(cite, "legal_reference") or cite.document_title or ""
                if label and label not in labels:
                    labels.append(label)
                if cite.chunk_id and cite.chunk_id not in chunks:
                    chunks.append(cite.chunk_id)
    return "; ".join(labels), "; ".join(chunks)


def answer_tables(response: QueryV1Response) -> list[Sheet]:
    """The Markdown tables the server composed into the answer (``| a | b |`` lines after a header and
    its separator row), each row with its cited sources."""
    claims = response.claim_map
    lines = _lines(response.answer)
    sheets: list[Sheet] = []
    i = 0
    while i < len(lines) - 1:
        _, _, line = lines[i]
        below = lines[i + 1][2].replace(" ", "")
        if line.startswith("| ") and line.endswith(" |") and _SEPARATOR.match(below):
            columns = table_cells(line[2:-2])
            rows, j = [], i + 2
            while j < len(lines) and lines[j][2].startswith("| ") and lines[j][2].endswith(" |"):
                start, end, text = lines[j]
                rows.append([*table_cells(text[2:-2]), *_row_sources(claims, start, end)])
                j += 1
            if rows:
                sheets.append(Sheet(f"tabel-jawaban-{len(sheets) + 1}", columns + SOURCE_COLUMNS, rows))
            i = j
        else:
            i += 1
    return sheets


async def cited_source_rows(claim_map: Sequence[ClaimMapEntry], retriever: RetrieverPort) -> list[Sheet]:
    """For every cited chunk that is a row of an ingested CSV/XLSX table: that table's header and its
    cited rows, in the table's order."""
    cited: dict[str, set[str]] = {}
    for claim in claim_map:
        for cite in (pair.citation for pair in claim.citations):
            if cite.document_id and cite.chunk_id:
                cited.setdefault(cite.document_id, set()).add(cite.chunk_id)
    sheets = []
    for document_id, chunk_ids in cited.items():
        table = await retriever.table(document_id)
        if table is None:
            continue
        rows = [[*cells, chunk_id] for chunk_id, cells in table.rows if chunk_id in chunk_ids]
        if rows:
            name = "baris-dikutip-" + (_UNSAFE.sub("-", table.name or document_id).strip("-") or "tabel")
            sheets.append(Sheet(name, [*table.columns, "chunk_id"], rows))
    return sheets


def to_csv(sheet: Sheet) -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow([neutralised(v) for v in sheet.columns])
    writer.writerows([neutralised(v) for v in row] for row in sheet.rows)
    return buffer.getvalue().encode("utf-8")


def _text_cell(ws: Worksheet, value: str) -> Cell:
    """Text neutralised and typed as a string: openpyxl never stores it as a formula, whatever it starts
    with (its setter alone would type a leading ``=`` as one)."""
    cell = Cell(ws, value=neutralised(value))
    cell.data_type = "s"
    return cell


def _cell(ws: Worksheet, value: str) -> Cell:
    """A plain integer (negative ones too) as a number, which is never a formula; anything else as text."""
    return Cell(ws, value=int(value)) if _INTEGER.match(value) else _text_cell(ws, value)


def to_xlsx(sheet: Sheet) -> bytes:
    book = Workbook()
    ws = book.active
    assert ws is not None  # a new workbook always has its first sheet
    ws.title = sheet.name[:31]  # Excel's limit on a sheet name
    ws.append([_text_cell(ws, v) for v in sheet.columns])
    for row in sheet.rows:
        ws.append([_cell(ws, v) for v in row])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def files_of(sheets: Sequence[Sheet]) -> list[ArtifactFile]:
    out = []
    for sheet in sheets:
        out.append(ArtifactFile(f"{sheet.name}.csv", CSV, to_csv(sheet), len(sheet.rows)))
        out.append(ArtifactFile(f"{sheet.name}.xlsx", XLSX, to_xlsx(sheet), len(sheet.rows)))
    return out


class ArtifactOffer:
    """Builds an answer's files, keeps them for ``ttl_s`` under the caller's principal, lists them."""

    def __init__(self, retriever: RetrieverPort, store: ArtifactStore, *, ttl_s: float) -> None:
        self.retriever = retriever
        self.store = store
        self.ttl_s = ttl_s

    @classmethod
    def over(cls, retriever: RetrieverPort, store: object, *, ttl_s: float) -> ArtifactOffer:
        """Kept in the conversation store's database: ``store`` is the service's Store (in one process and
        in every Ingress replica alike)."""
        return cls(retriever, ArtifactStore(cast(Store, store)), ttl_s=ttl_s)

    async def offer(self, response: QueryV1Response, principal: Principal) -> list[Artifact]:
        """The files of a published v1 answer (its tables and the cited rows of ingested tables)."""
        sheets = answer_tables(response) + await cited_source_rows(response.claim_map, self.retriever)
        files = await asyncio.to_thread(files_of, sheets)
        saved = await asyncio.to_thread(self.store.save, principal.key, files, ttl_s=self.ttl_s)
        return [
            Artifact.model_validate(
                {
                    "id": a.id,
                    "name": a.name,
                    "media_type": a.media_type,
                    "url": f"/artifacts/{a.id}",
                    "expires_at": a.expires_at,
                    "rows": a.rows,
                }
            )
            for a in saved
        ]

    async def fetch(self, artifact_id: str, principal: Principal) -> ArtifactFile | None:
        return await asyncio.to_thread(self.store.fetch, artifact_id, principal.key)
