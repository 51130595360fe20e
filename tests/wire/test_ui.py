"""The reference web client's static files at /ui/: served without credentials, every file with the strict
Content-Security-Policy, and written so that policy holds (no inline script or style, no HTML sinks)."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from serve_app.wire.ui import CONTENT_SECURITY_POLICY, STATIC_DIR

FILES = sorted(p.name for p in STATIC_DIR.iterdir() if p.is_file())
SINKS = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function")
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}


def test_every_file_is_served_without_credentials_and_with_the_policy(demo_client: TestClient) -> None:
    assert "index.html" in FILES and "app.js" in FILES
    for name in FILES:
        response = demo_client.get(f"/ui/{name}")  # no X-API-Key: open like /healthz
        assert response.status_code == 200, name
        suffix = name[name.rindex(".") :]
        assert response.headers["content-type"].startswith(TYPES[suffix]), name
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
    page = demo_client.get("/ui/")
    assert page.status_code == 200 and page.text == (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_the_folder_without_a_slash_redirects_and_unknown_files_are_404(demo_client: TestClient) -> None:
    redirect = demo_client.get("/ui", follow_redirects=False)
    assert redirect.status_code in (301, 307, 308) and redirect.headers["location"].endswith("/ui/")
    missing = demo_client.get("/ui/nope.js")
    assert missing.status_code == 404
    assert missing.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert demo_client.get("/ui/../pyproject.toml").status_code == 404


def test_the_api_the_page_calls_still_needs_the_key(demo_client: TestClient) -> None:
    response = demo_client.post("/query/v2/stream", json={"query": "Halo"})
    assert response.status_code == 401


def test_the_policy_is_strict() -> None:
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["default-src"] == "'none'"
    for name in ("script-src", "style-src", "connect-src"):
        assert directives[name] == "'self'", name
    assert "unsafe" not in CONTENT_SECURITY_POLICY
    assert directives["frame-ancestors"] == "'none'" and directives["require-trusted-types-for"] == "'script'"


def test_the_files_keep_to_the_policy() -> None:
    """No inline script, handler or style (the policy would block them) and no HTML sinks: answer text is
    only ever inserted as text."""
    html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    assert all("src=" in tag for tag in re.findall(r"<script\b[^>]*>", html))
    assert not re.search(r"\son[a-z]+=|\sstyle=|<style\b", html)
    for name in FILES:
        if name.endswith(".js"):
            code = (STATIC_DIR / name).read_text(encoding="utf-8")
            assert not SINKS.search(code), name
