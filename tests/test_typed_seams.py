"""No ``typing.Any`` at a seam between packages (issue 17), checked on the parsed tree (ast), no app import.

Packages: each of ``serve_app``'s sub-packages and top-level modules (``serve_app.guard``, ``serve_app.wire``,
``serve_app.pipeline``, ...) and each library (``retrieval``, ``judge``, ``language``, ``models``).

A seam is a name that a module of another package imports (``from X import Y``, lazy imports inside
functions included; ``from pkg import module`` counts every ``module.name`` the importer reads):
- a function: its parameter and return annotations;
- a class: the parameter and return annotations of its public methods (dunders such as ``__init__`` and
  ``__call__`` included, since callers use them), its public class-level fields (dataclass, pydantic,
  TypedDict, NamedTuple) and the public ``self.x: T`` attributes it declares, along its bases in the tree;
- a module-level name (a type alias or an annotated constant): its annotation or aliased value.
A seam has ``Any`` when one of those annotations mentions ``typing.Any`` anywhere inside (``dict[str, Any]``),
or names a module-level type alias of the defining module whose value mentions it.

Names re-exported through an ``__init__`` are followed to where they are defined; a name defined in the
importer's own package is no seam.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from tests.conftest import REPO

ROOTS = ("serve_app", "retrieval", "judge", "language", "models")
TYPING = ("typing", "typing_extensions")

# Seams that still carry Any, each with its reason; the test fails on any seam not listed here and on a
# listed one that no longer carries Any (so the list only shrinks).
ALLOWED: dict[str, str] = {}


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int  # of the annotation
    seam: str  # module.Name[.member]: what carries the Any

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.seam}"


def package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "serve_app" and len(parts) > 1 else parts[0]


def tree_sources() -> dict[str, tuple[str, str]]:
    """module -> (path relative to the repository, source) for every module of the roots."""
    out: dict[str, tuple[str, str]] = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = (str(path.relative_to(REPO)), path.read_text(encoding="utf-8"))
    return out


class Tree:
    def __init__(self, sources: Mapping[str, tuple[str, str]]) -> None:
        self.paths = {module: path for module, (path, _) in sources.items()}
        self.parsed = {module: ast.parse(text) for module, (_, text) in sources.items()}
        self._top: dict[str, dict[str, ast.stmt]] = {}
        self._any: dict[str, tuple[set[str], set[str]]] = {}

    def is_package(self, module: str) -> bool:
        return self.paths[module].endswith("__init__.py")

    def absolute(self, module: str, node: ast.ImportFrom) -> str:
        base = node.module or ""
        if not node.level:
            return base
        anchor = module.split(".")
        if not self.is_package(module):
            anchor.pop()
        anchor = anchor[: len(anchor) - node.level + 1]
        return ".".join([*anchor, base] if base else anchor)

    def top_level(self, module: str) -> dict[str, ast.stmt]:
        """Names a module defines at its top level (if/try blocks included), the last binding winning."""
        if module in self._top:
            return self._top[module]
        out: dict[str, ast.stmt] = self._top.setdefault(module, {})

        def visit(body: list[ast.stmt]) -> None:
            for node in body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    out[node.name] = node
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    out[node.target.id] = node
                elif isinstance(node, ast.Assign):
                    out.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
                elif isinstance(node, ast.ImportFrom | ast.Import):
                    out.update({(a.asname or a.name).split(".")[0]: node for a in node.names})
                elif isinstance(node, ast.If | ast.Try):
                    visit(node.body)
                    visit(node.orelse)

        visit(self.parsed[module].body)
        return out

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.stmt] | None:
        """Where ``name`` read from ``module`` is defined: (defining module, node), following re-exports."""
        if depth > 10 or module not in self.parsed:
            return None
        node = self.top_level(module).get(name)
        if isinstance(node, ast.ImportFrom):
            base = self.absolute(module, node)
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    if f"{base}.{alias.name}" in self.parsed:
                        return None  # a module, not a definition
                    return self.resolve(base, alias.name, depth + 1)
        if node is None or isinstance(node, ast.Import):
            return None
        return module, node

    def any_names(self, module: str) -> tuple[set[str], set[str]]:
        """(names bound to typing.Any, names bound to the typing module) in ``module``."""
        if module in self._any:
            return self._any[module]
        direct, modules = self._any.setdefault(module, (set(), set()))
        for node in ast.walk(self.parsed[module]):
            if isinstance(node, ast.ImportFrom) and node.module in TYPING:
                direct |= {a.asname or a.name for a in node.names if a.name == "Any"}
            elif isinstance(node, ast.Import):
                modules |= {a.asname or a.name for a in node.names if a.name in TYPING}
        return direct, modules

    def mentions_any(self, module: str, annotation: ast.expr | None, depth: int = 0) -> bool:
        if annotation is None or depth > 5:
            return False
        direct, modules = self.any_names(module)
        for node in ast.walk(annotation):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:
                    inner = ast.parse(node.value, mode="eval").body
                except SyntaxError:
                    continue
                if self.mentions_any(module, inner, depth + 1):
                    return True
            elif isinstance(node, ast.Name) and node.id in direct:
                return True
            elif (
                isinstance(node, ast.Attribute)
                and node.attr == "Any"
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
            ):
                return True
            elif isinstance(node, ast.Name):
                found = self.resolve(module, node.id)
                if found and self.alias_mentions_any(*found, depth + 1):
                    return True
        return False

    def alias_mentions_any(self, module: str, node: ast.stmt, depth: int) -> bool:
        """Whether a module-level type alias (``X = dict[str, Any]``, ``X: TypeAlias = ...``)
        mentions Any; classes and functions are seams of their own, not aliases."""
        if isinstance(node, ast.Assign) or (
            isinstance(node, ast.AnnAssign) and _is_type_alias(node.annotation)
        ):
            return self.mentions_any(module, node.value, depth)
        return False

    def members(
        self, module: str, cls: ast.ClassDef, depth: int = 0
    ) -> Iterator[tuple[str, str, int, ast.expr]]:
        """(defining module, Class.member, line, annotation) of a class's public surface, its bases in the
        tree included (a base's member is reported once, on the base)."""
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if not node.target.id.startswith("_") and not _is_class_var(node.annotation):
                    yield module, f"{cls.name}.{node.target.id}", node.lineno, node.annotation
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                private = node.name.startswith("_") and not node.name.endswith("__")
                if not private:
                    for line, annotation in _signature(node):
                        yield module, f"{cls.name}.{node.name}", line, annotation
                if node.name == "__init__":
                    for sub in ast.walk(node):
                        if (
                            isinstance(sub, ast.AnnAssign)
                            and isinstance(sub.target, ast.Attribute)
                            and isinstance(sub.target.value, ast.Name)
                            and sub.target.value.id == "self"
                            and not sub.target.attr.startswith("_")
                        ):
                            yield module, f"{cls.name}.{sub.target.attr}", sub.lineno, sub.annotation
        if depth > 10:
            return
        for base in cls.bases:
            found = self.resolve(module, base.id) if isinstance(base, ast.Name) else None
            if found and isinstance(found[1], ast.ClassDef):
                yield from self.members(found[0], found[1], depth + 1)

    def findings_of(self, module: str, node: ast.stmt, name: str) -> Iterator[tuple[str, int, str]]:
        """(seam, line, defining module) for each annotation of the definition that mentions Any."""
        qual = f"{module}.{name}"
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for line, annotation in _signature(node):
                if self.mentions_any(module, annotation):
                    yield qual, line, module
        elif isinstance(node, ast.ClassDef):
            for defining, member, line, annotation in self.members(module, node):
                if self.mentions_any(defining, annotation):
                    yield f"{defining}.{member}", line, defining
        elif isinstance(node, ast.AnnAssign):
            if self.mentions_any(module, node.annotation) or self.alias_mentions_any(module, node, 0):
                yield qual, node.lineno, module
        elif self.alias_mentions_any(module, node, 0):
            yield qual, node.lineno, module

    def imported(self, module: str) -> Iterator[tuple[str, str]]:
        """(module, name) of every name this module reads from another module of the tree."""
        bound: dict[str, str] = {}  # local name of an imported module -> that module
        for node in ast.walk(self.parsed[module]):
            if isinstance(node, ast.ImportFrom):
                base = self.absolute(module, node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in self.parsed:
                        bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                    elif base in self.parsed:
                        yield base, alias.name
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in self.parsed:
                        bound[alias.asname] = alias.name
        for node in ast.walk(self.parsed[module]):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and (node.value.id in bound)
            ):
                yield bound[node.value.id], node.attr

    def findings(self) -> list[Finding]:
        seen: set[Finding] = set()
        for importer in self.parsed:
            for source, name in self.imported(importer):
                found = self.resolve(source, name)
                if found is None or package(found[0]) == package(importer):
                    continue
                for seam, line, defining in self.findings_of(found[0], found[1], name):
                    seen.add(Finding(self.paths[defining], line, seam))
        return sorted(seen)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[int, ast.expr]]:
    args = node.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None and arg.annotation is not None:
            yield arg.lineno, arg.annotation
    if node.returns is not None:
        yield node.lineno, node.returns


def _is_class_var(annotation: ast.expr) -> bool:
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(head, ast.Name) and head.id == "ClassVar") or (
        isinstance(head, ast.Attribute) and head.attr == "ClassVar"
    )


def _is_type_alias(annotation: ast.expr) -> bool:
    return (isinstance(annotation, ast.Name) and annotation.id == "TypeAlias") or (
        isinstance(annotation, ast.Attribute) and annotation.attr == "TypeAlias"
    )


def test_no_any_at_a_seam_between_packages() -> None:
    found = Tree(tree_sources()).findings()
    print(f"{len(found)} annotations with Any at seams between packages:")
    print("\n".join(map(str, found)))
    new = [str(f) for f in found if f.seam not in ALLOWED]
    stale = sorted(set(ALLOWED) - {f.seam for f in found})
    assert not new, "Any at a seam between packages (use the real type, a Protocol or the JSON alias):\n" + (
        "\n".join(new)
    )
    assert not stale, "no longer carry Any, remove them from ALLOWED:\n" + "\n".join(stale)


def test_the_checker_sees_any_at_a_seam() -> None:
    """The checker itself: Any in a parameter, a return, a dataclass field, a base class's method and an
    alias, read through a re-export, a module import and a lazy import, is caught; the same in the importer's
    own package, a private method, or a name nobody imports across, is not."""
    lib = (
        "from __future__ import annotations\n"
        "import typing\n"
        "from dataclasses import dataclass\n"
        "from typing import Any as Anything\n"
        "Payload = dict[str, Anything]\n"
        "def read(x: int, **kw: Anything) -> None: ...\n"
        "def write() -> list[typing.Any]: ...\n"
        "def body() -> Payload: ...\n"
        "def quoted() -> 'dict[str, Anything]': ...\n"
        "def clean(x: int) -> str: ...\n"
        "def unread(x: Anything) -> None: ...\n"
        "class Base:\n"
        "    def run(self, x: Anything) -> None: ...\n"
        "@dataclass\n"
        "class Row(Base):\n"
        "    data: dict[str, Anything]\n"
        "    def _hidden(self) -> Anything: ...\n"
    )
    sources = {
        "models": ("models/__init__.py", "from .lib import read, Row\n"),
        "models.lib": ("models/lib.py", lib),
        "models.near": ("models/near.py", "from .lib import unread\n"),
        "judge.user": (
            "judge/user.py",
            (
                "from models import read, Row\n"
                "from models import lib\n"
                "lib.write()\n"
                "def later() -> None:\n"
                "    from models.lib import body, quoted, clean\n"
            ),
        ),
    }
    found = Tree(sources).findings()
    assert [f.seam for f in found] == [
        "models.lib.read",
        "models.lib.write",
        "models.lib.body",
        "models.lib.quoted",
        "models.lib.Base.run",
        "models.lib.Row.data",
    ]
    assert str(found[0]) == "models/lib.py:6 models.lib.read"
    assert package("serve_app.guard.auth") != package("serve_app.wire.sse")
    assert package("serve_app.pipeline") != package("serve_app.ingress")
    assert package("retrieval.store") == package("retrieval.types")
