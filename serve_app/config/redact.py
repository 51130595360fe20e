"""Credentials out of every message that shows a URL: a database or model-server URL with a password is
written with ``***`` in its place (SQLAlchemy's ``render_as_string(hide_password=True)`` where the URL is one
SQLAlchemy reads; a pattern for URLs inside longer text, such as a driver's error or a log line)."""

from __future__ import annotations

import re

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

MASK = "***"
# scheme://user:password@ : the password is everything between the first ':' after '//' and the last '@'
# before the host (passwords may hold '@' or ':'; whitespace and quotes end a URL in running text).
_USERINFO = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\"]*:)[^\s'\"]*@")
# ...?password=secret or &sslpassword=secret in a query string, and libpq's key=value form "password=secret".
_PARAM = re.compile(r"(?P<head>\b(?:ssl)?password=)[^\s&'\"]+", re.IGNORECASE)


def redacted_url(url: str) -> str:
    """``url`` with its password (in the user part or the query) shown as ``***``."""
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        shown = url
    return redact_urls(shown)


def redact_urls(text: str) -> str:
    """``text`` with the password of every URL in it (and every ``password=...``) shown as ``***``."""
    text = _USERINFO.sub(lambda m: m.group("head") + MASK + "@", text)
    return _PARAM.sub(lambda m: m.group("head") + MASK, text)
