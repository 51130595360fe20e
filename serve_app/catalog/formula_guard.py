"""Spreadsheet formula injection, neutralised the way OWASP's "CSV Injection" page describes.

A cited table cell is text an ingested document or a partner's source chose; Excel and LibreOffice run a cell
that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula (``=HYPERLINK(...)``,
``-2+3+cmd|' /C calc'!A0``), and openpyxl itself stores a string that starts with ``=`` as a formula. Such a
cell gets a leading ``'`` (shown as text, the payload stays readable), in the CSV and the XLSX alike; the
XLSX writer also types every text cell as a string (``data_type "s"``), so no text cell is ever a formula.

One exception, decided here and documented in docs/security.md: a cell that is wholly one plain negative
number (``-125``, ``-12,5``, ``-1.250.000``: digits with ``.``/``,`` groups only), or a lone ``-`` (the
"nil" of a budget table), is left as it is, so negative amounts and empty entries stay usable. Nothing in
such a cell can be evaluated: it holds no operator after its sign, no name, no reference. Anything more
(``-1+2``, ``-12,5 A1``, ``-1e3``, ``--1``) is prefixed like any other formula start.
"""

from __future__ import annotations

import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Full-width forms some spreadsheet front ends fold into their ASCII operators on input.
_WIDE_STARTS = ("\uff1d", "\uff0b", "\uff0d", "\uff20")
_PLAIN_NEGATIVE = re.compile(r"-(?:[0-9]+(?:[.,][0-9]+)*)?")


def plain_negative_number(value: str) -> bool:
    """The whole cell is one minus sign, alone or followed by digits and ``.``/``,`` groups only."""
    return _PLAIN_NEGATIVE.fullmatch(value) is not None


def neutralised(value: str) -> str:
    """``value`` with a leading ``'`` when a spreadsheet would read it as a formula; else unchanged."""
    if value.startswith(FORMULA_STARTS + _WIDE_STARTS) and not plain_negative_number(value):
        return "'" + value
    return value
