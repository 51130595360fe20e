"""The one type of values that really are arbitrary JSON (request and response bodies, stored rows, tool
arguments), so that no seam between packages needs ``Any`` for them.

It lives in ``models/`` because every other package (``judge/``, ``retrieval/``, ``serve_app/``) may import
it. The containers are the read-only ``Sequence`` and ``Mapping``, which are covariant: a ``list[dict[str,
str]]`` is a ``JSONValue`` as it is, where ``list``/``dict`` (invariant) would refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONValue: TypeAlias = "str | int | float | bool | None | Sequence[JSONValue] | Mapping[str, JSONValue]"
JSON: TypeAlias = Mapping[str, JSONValue]  # a JSON object read here (a parameter)
JSONObject: TypeAlias = dict[str, JSONValue]  # a JSON object built here (a return value)
