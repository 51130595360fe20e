"""deploy/requirements-cpu.txt pins every requirement of aceh-rag[cpu] at a version its specifier accepts
(`make lock` rewrites it): a dependency added to pyproject.toml without a new lock fails here in a second,
long before the clean-venv install test's `pip check`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy"))
from lock_requirements import OUT, project_requirements  # noqa: E402


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_project_requirement_is_pinned_within_its_specifier() -> None:
    pins = {}
    for line in OUT.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[_norm(name)] = version
    assert pins["torch"] == "2.13.0+cpu"
    for line in project_requirements(["cpu"]):
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        assert _norm(req.name) in pins, f"{req.name} is not in {OUT.name}: run `make lock`"
        assert req.specifier.contains(pins[_norm(req.name)], prereleases=True), (req, pins[_norm(req.name)])
