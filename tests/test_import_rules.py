"""The allowed imports of serve_app/__init__.py, checked on every module's import statements (ast), lazy
imports inside functions included."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

SHARED = frozenset({"errors", "budget", "config", "metrics", "scope", "vocabulary"})
ROLES = ("guard", "agent", "answer", "conversation", "wire", "catalog", "runtime", "demo")
ANSWER_TYPES = frozenset({"serve_app.answer.segments", "serve_app.answer.annotation"})
EVERYTHING = frozenset({*SHARED, *ROLES, "app", "ingress", "pipeline", "roles"})
# Which layers each layer may import, besides itself and the shared modules.
ALLOWED: dict[str, frozenset[str]] = {
    **{name: SHARED for name in SHARED},
    "guard": frozenset(),
    "conversation": frozenset(),
    "answer": frozenset(),
    "demo": frozenset(),  # stand-ins for outside servers: they know nothing of the service
    "agent": frozenset({"answer"}),
    "wire": frozenset({"answer"}),  # its type modules only, checked below
    "catalog": frozenset({"answer", "guard", "conversation", "wire"}),
    "roles": frozenset({"guard", "agent", "answer", "conversation", "wire"}),
    "pipeline": frozenset({"roles", "guard", "agent", "answer", "conversation", "wire"}),
    "ingress": frozenset({"pipeline", "roles", "guard", "wire", "catalog"}),
    "app": EVERYTHING,
    "runtime": EVERYTHING,
}
LIBRARIES = ("retrieval", "judge", "models", "language")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, source: str | None = None) -> Iterator[tuple[int, str]]:
    """(line, absolute module) of every import in the file; ``from a import b`` yields ``a.b`` too, since
    ``b`` may be a module."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "serve_app" or len(parts) < 2:
        return None
    return parts[1]


def crossings(path: Path, source: str | None = None) -> list[str]:
    own = layer(module_name(path))
    if own is None:
        return []
    allowed = ALLOWED.get(own, frozenset()) | {own} | SHARED
    bad = []
    for line, target in imports(path, source):
        other = layer(target)
        if other is None or other == own:
            continue
        if other not in EVERYTHING:
            continue  # a name imported from serve_app/__init__ that is not a module
        if other not in allowed:
            bad.append(f"{path.relative_to(REPO)}:{line} ({own}) imports {target} ({other})")
        elif own == "wire" and other == "answer" and not any(
                target == t or target.startswith(t + ".") for t in ANSWER_TYPES):
            bad.append(f"{path.relative_to(REPO)}:{line} (wire) imports {target}, not a type of answer/")
    return bad


def test_serve_app_layers() -> None:
    files = sorted((REPO / "serve_app").rglob("*.py"))
    assert len(files) > 40
    bad = [line for path in files for line in crossings(path)]
    assert not bad, "imports that cross serve_app/__init__.py's rules:\n" + "\n".join(bad)


def test_top_of_serve_app_holds_the_flow_and_shared_modules() -> None:
    top = {p.stem for p in (REPO / "serve_app").glob("*.py")} - {"__init__"}
    packages = {p.name for p in (REPO / "serve_app").iterdir() if (p / "__init__.py").exists()}
    # A shared module may grow into a package of its own sections (config/); it stays shared.
    assert top | (packages & SHARED) == {"app", "ingress", "pipeline", "roles", *SHARED}
    assert len(top) + 1 <= 10  # with __init__.py: at most 10 modules at the top
    assert packages - SHARED == set(ROLES)


@pytest.mark.parametrize("library", LIBRARIES)
def test_libraries_import_no_ray_and_no_serve_app(library: str) -> None:
    bad = [
        f"{path.relative_to(REPO)}:{line} imports {target}"
        for path in sorted((REPO / library).rglob("*.py"))
        for line, target in imports(path)
        if target.split(".")[0] in ("ray", "serve_app")
    ]
    assert not bad, "\n".join(bad)


def test_models_sit_below_the_other_libraries() -> None:
    """models/ holds engines (LLMs, encoders): retrieval/ and judge/ use them, never the reverse (the
    rerankers, which read legal references and chunks, live in retrieval/)."""
    bad = [
        f"{path.relative_to(REPO)}:{line} imports {target}"
        for path in sorted((REPO / "models").rglob("*.py"))
        for line, target in imports(path)
        if target.split(".")[0] in ("retrieval", "judge")
    ]
    assert not bad, "\n".join(bad)


def test_language_is_the_ground_floor() -> None:
    """language/ holds the Indonesian/English text and figure core that judge/, retrieval/ and serve_app/
    read through: it imports none of them, nor models/ or ray."""
    files = sorted((REPO / "language").rglob("*.py"))
    assert len(files) > 10
    bad = [
        f"{path.relative_to(REPO)}:{line} imports {target}"
        for path in files
        for line, target in imports(path)
        if target.split(".")[0] in ("judge", "retrieval", "models", "serve_app", "ray")
    ]
    assert not bad, "\n".join(bad)


def test_the_rule_check_sees_a_crossing() -> None:
    """The checker itself: a guard module importing the agent, relatively and absolutely, is caught; a
    shared module is not; wire/ may read answer/'s types but not its annotator."""
    probe = REPO / "serve_app" / "guard" / "probe.py"
    source = "from ..agent import planner\nimport serve_app.wire.sse\nfrom serve_app import errors\n"
    found = crossings(probe, source)
    assert [f.split(" imports ")[1] for f in found] == [
        "serve_app.agent (agent)", "serve_app.agent.planner (agent)", "serve_app.wire.sse (wire)",
    ]
    wire = REPO / "serve_app" / "wire" / "probe.py"
    assert crossings(wire, "from serve_app.answer.annotation import Annotation\n") == []
    assert len(crossings(wire, "from serve_app.answer.annotate import Annotator\n")) == 2


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle of ``graph`` (module → modules it imports), each once, as the path that closes
    it."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                circle = path[path.index(nxt):] + [nxt]
                if frozenset(circle) not in seen:
                    seen.add(frozenset(circle))
                    found.append(circle)
            elif len(path) < len(graph):
                walk(nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, [start])
    return found


def test_benchmarks_import_no_circle() -> None:
    """benchmarks/ modules (imports inside functions included) form no circle: shared pieces live in a
    module each of them reads (``answer_scoring`` for the answer benchmarks, ``harness`` for all)."""
    files = sorted((REPO / "benchmarks").glob("*.py"))
    names = {module_name(path) for path in files}
    graph = {
        module_name(path): {target for _, target in imports(path) if target in names} - {module_name(path)}
        for path in files
    }
    assert len(graph) > 20
    assert circles(graph) == []


def test_the_circle_check_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
