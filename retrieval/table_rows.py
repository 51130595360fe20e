"""Table rows a query names by the words of one of their cells: a budget line ("Belanja Pegawai", "Dana
Alokasi Khusus"), an agency ("Dinas Pendidikan Aceh") or a programme.

A table row is short and its words repeat in thousands of rows and statutes, so a corpus-wide BM25 ranking
seldom holds the row a question names: the statute that explains a budget line outranks the line. Here a
row counts as named when every word of one of its text cells stands in the query (two words at least: a
one-word cell such as "Belanja" names a column value, not a line). The rows whose named cell is the most
specific (most words) win, as "Belanja Modal Gedung dan Bangunan" beats "Belanja Modal".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

MIN_CELL_TERMS = 2
MAX_CELL_TERMS = 16  # longer cells are descriptions, not names


class RowNames:
    """Analysed text cells of table rows, each with the rows (chunk rows of the index) that hold it."""

    def __init__(self, cells: Iterable[tuple[int, str]], analyze: Callable[[str], list[str]]) -> None:
        self._cell_rows: list[list[int]] = []
        self._cell_terms: list[frozenset[str]] = []
        self._postings: dict[str, list[int]] = {}
        ids: dict[str, int] = {}
        for row, text in cells:
            key = " ".join(text.split()).casefold()
            cell = ids.get(key)
            if cell is None:
                terms = frozenset(analyze(key))
                if not MIN_CELL_TERMS <= len(terms) <= MAX_CELL_TERMS or not any(t.isalpha() for t in terms):
                    ids[key] = -1
                    continue
                cell = ids[key] = len(self._cell_terms)
                self._cell_terms.append(terms)
                self._cell_rows.append([])
                # every cell is reached through its first term in sorted order; a query must hold them all
                self._postings.setdefault(min(terms), []).append(cell)
            if cell >= 0:
                self._cell_rows[cell].append(row)

    def __len__(self) -> int:
        return len(self._cell_terms)

    def named(self, terms: Sequence[str]) -> list[int]:
        """Rows holding a cell all of whose words are in ``terms``, from the cells with the most words only;
        empty when no cell is named."""
        wanted = frozenset(terms)
        best = 0
        rows: list[int] = []
        for term in wanted:
            for cell in self._postings.get(term, ()):
                cell_terms = self._cell_terms[cell]
                if len(cell_terms) < best or not cell_terms <= wanted:
                    continue
                if len(cell_terms) > best:
                    best, rows = len(cell_terms), []
                rows.extend(self._cell_rows[cell])
        return list(dict.fromkeys(rows))
