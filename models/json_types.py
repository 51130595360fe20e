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


# Reading a JSON value whose shape is ours but not checked here (a stored or returned body): a part of
# another shape reads as empty, so a reader needs no Any and no cast.
def json_list(value: JSONValue) -> Sequence[JSONValue]:
    return value if isinstance(value, list) else []


def json_objects(value: JSONValue) -> list[JSON]:
    """The JSON objects of a list (anything else in it skipped)."""
    return [item for item in json_list(value) if isinstance(item, Mapping)]


def json_text(value: JSONValue) -> str:
    return value if isinstance(value, str) else ""


def json_field(value: JSONValue, name: str) -> JSONValue:
    """``value[name]`` of a JSON object; None when ``value`` is no object or has no such field."""
    return value.get(name) if isinstance(value, Mapping) else None
