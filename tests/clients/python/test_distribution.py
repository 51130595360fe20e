"""The client is its own small distribution: httpx and pydantic only, importable without the service's
heavy dependencies, and its models are what the generator makes from the committed JSON Schemas now."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.conftest import REPO

CLIENT = REPO / "clients" / "python"


def test_depends_on_httpx_and_pydantic_only() -> None:
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert sorted(d.split(">")[0].split("=")[0] for d in project["dependencies"]) == ["httpx", "pydantic"]


def test_importing_it_loads_no_ray_torch_or_service_code() -> None:
    code = (
        "import sys, aceh_rag_client\n"
        "bad = [n for n in sys.modules if n.split('.')[0] in ('ray', 'torch', 'serve_app', 'retrieval')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=CLIENT.parent)


def test_committed_models_are_up_to_date() -> None:
    command = [sys.executable, str(CLIENT / "codegen.py"), "--check"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr + done.stdout
