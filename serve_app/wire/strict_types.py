"""Request field types whose published JSON Schema says exactly what their validator accepts.

pydantic's own types drift from JSON Schema at three places, each found by schemathesis against
``/openapi.json``: ``Literal[False]`` lets ``0`` through (``0 == False`` in Python) while its schema says
boolean; a strict ``int`` refuses ``2.0``, which JSON Schema counts as an integer; and a "not blank" rule
written as ``str.strip()`` has no counterpart in the schema, so a text of only white space looked valid.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

# Every character for which Python's ``str.isspace()`` is true (what ``str.strip()`` removes), spelled out
# as code points: ``\s`` differs between regex engines (ECMA-262's includes U+FEFF and leaves out
# U+001C-U+001F and U+0085), an explicit class reads the same in Python, ECMA-262 and Rust.
WHITESPACE_CLASS = (
    r"\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
)
NOT_BLANK_PATTERN = f"[^{WHITESPACE_CLASS}]"  # JSON Schema patterns are unanchored: one such character
_NOT_BLANK = re.compile(NOT_BLANK_PATTERN)


def is_blank(value: str) -> bool:
    """True for a text of only white space (or none): the published pattern does not match it."""
    return _NOT_BLANK.search(value) is None


def _not_blank(value: str) -> str:
    if is_blank(value):
        raise PydanticCustomError("blank_string", "must not be empty or only white space")
    return value


# A text that must hold at least one character that is not white space; the pattern is published with it.
NotBlank = Annotated[str, AfterValidator(_not_blank), Field(json_schema_extra={"pattern": NOT_BLANK_PATTERN})]


def _integral_number(value: Any) -> Any:
    """``2.0`` (and ``1e1``) as the integer JSON Schema says it is; anything else on to strict ``int``,
    which still refuses ``2.5``, ``"2"``, ``true``, NaN and infinities."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


# An integer as JSON Schema counts it: a number with no fractional part, written ``2`` or ``2.0``.
JsonInt = Annotated[int, BeforeValidator(_integral_number)]


def _boolean_only(value: Any) -> Any:
    if type(value) is not bool:
        raise PydanticCustomError("bool_type", "Input should be a valid boolean")
    return value


# The boolean ``false`` and nothing else: ``Literal[False]`` alone also takes ``0`` (and ``0.0``), which its
# schema ``{"const": false, "type": "boolean"}`` refuses. ``true`` is refused by the literal.
FalseOnly = Annotated[Literal[False], BeforeValidator(_boolean_only)]
