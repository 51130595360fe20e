"""A request body as JSON, with the limits Python's parser lacks.

``json.loads`` recurses once per nesting level: a small body of 30,000 ``[`` raises ``RecursionError`` (a 500
with a traceback) instead of failing as bad input. It also accepts what is not interoperable JSON: ``NaN`` and
``Infinity``, duplicate keys (the last one wins, while another parser in front may keep the first), and lone
UTF-16 surrogates (``"\\ud800"``), which become strings that cannot be encoded as UTF-8 when they are logged
or stored. :func:`strict_json` refuses all of these with :class:`JSONRefused` before or while parsing; the
caller answers the contract's 400.
"""

from __future__ import annotations

import json
import math
import re

from models.json_types import JSONValue

MAX_DEPTH = 32  # far beyond any request model (the deepest is an object in a list in an object)
# A JSON string (its escapes included), to be skipped when counting brackets.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


class JSONRefused(ValueError):
    """The body is not JSON this service accepts; the message says why (never the body itself)."""


def nesting_depth(body: bytes) -> int:
    """How deep arrays and objects nest in ``body``, brackets inside strings left out. Malformed text may
    give any number: the parser refuses it afterwards."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub(b'""', body)):
        if match.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _no_constant(name: str) -> JSONValue:
    raise JSONRefused(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e400 reads as inf: a number no request field can mean
        raise JSONRefused("a number is out of range")
    return number


def _unique_keys(pairs: list[tuple[str, JSONValue]]) -> dict[str, JSONValue]:
    out: dict[str, JSONValue] = {}
    for key, value in pairs:
        if key in out:
            raise JSONRefused("a key is repeated in one object")
        out[key] = value
    return out


def _check_strings(value: JSONValue) -> None:
    """Every string encodes as UTF-8 (no lone surrogate). Depth is bounded already, so recursion is safe."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise JSONRefused("a string holds a lone surrogate") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key)
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


def strict_json(body: bytes, *, max_depth: int = MAX_DEPTH) -> JSONValue:
    """``body`` parsed as JSON, or :class:`JSONRefused`: not UTF-8, not JSON, nested deeper than
    ``max_depth``, a number too long to read, ``NaN``/``Infinity`` or a float out of range, a repeated
    key, a lone surrogate."""
    depth = nesting_depth(body)
    if depth > max_depth:
        raise JSONRefused(f"nested {depth} levels deep, over the limit of {max_depth}")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise JSONRefused("not UTF-8") from None
    try:
        value: JSONValue = json.loads(
            text, parse_constant=_no_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
        )
    except JSONRefused:
        raise
    except RecursionError:  # not reached below the depth limit; kept so no input can give a 500
        raise JSONRefused("nested too deep to parse") from None
    except ValueError as exc:  # JSONDecodeError, and an integer over Python's digit limit
        raise JSONRefused(f"not JSON ({type(exc).__name__})") from None
    _check_strings(value)
    return value
