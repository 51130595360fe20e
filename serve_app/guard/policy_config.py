"""Loads and validates ``configs/policy.yaml`` into compiled rules for :mod:`serve_app.guard.policy_engine`.

Every problem in the file becomes a ``ValueError`` with one sentence naming the file and the place, so a
broken policy stops the service at start-up instead of silently guarding less.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from serve_app.guard.textnorm import DEFAULT_LEET, Folder

STAGES = ("request", "history", "passage", "answer")
VIEWS = ("plain", "cased", "inner")
REFUSAL_KINDS = ("request_blocked", "answer_blocked")
SOURCED_KINDS = ("digits", "phone", "email", "text", "url")
TOP_LEVEL_KEYS = frozenset(
    {"version", "refusals", "normalization", "lexicons", "shared_patterns", "categories", "allow_rules",
     "sourced_only"}
)
RULE_KEYS = frozenset(
    {"id", "weight", "regex", "view", "lexicon", "near", "window", "min_count", "stages", "note"}
)
_SQUEEZE = re.compile(r"([a-z])\1+")


@dataclass(frozen=True, slots=True)
class Rule:
    """One signal inside a category. Exactly one of ``regex``, ``lexicons`` (any term) or ``near``
    (two lexicons within ``window`` tokens) is set."""

    id: str
    weight: float
    regex: re.Pattern[str] | None = None
    view: str = "plain"
    lexicons: tuple[str, ...] = ()
    near: tuple[str, str] | None = None
    window: int = 5
    min_count: int = 1  # regex rules: how many separate matches are needed
    stages: frozenset[str] | None = None  # None: every stage of its category


@dataclass(frozen=True, slots=True)
class Category:
    name: str
    threshold: float
    stages: frozenset[str]
    rules: tuple[Rule, ...]


@dataclass(frozen=True, slots=True)
class AllowRule:
    """When ``regex`` or any term of ``lexicons`` is present, the matching ``suppresses`` rules
    (glob patterns over rule ids) do not count."""

    id: str
    suppresses: tuple[str, ...]
    stages: frozenset[str]
    regex: re.Pattern[str] | None = None
    lexicons: tuple[str, ...] = ()

    def covers(self, rule_id: str) -> bool:
        return any(fnmatch.fnmatchcase(rule_id, pat) for pat in self.suppresses)


@dataclass(frozen=True, slots=True)
class SourcedPattern:
    """Text an answer may only contain when a cited passage contains it too (personal data, links)."""

    id: str
    category: str
    kind: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class PolicyConfig:
    version: str
    digest: str
    refusals: Mapping[str, str]
    folder: Folder
    lexicons: Mapping[str, tuple[str, ...]]
    categories: tuple[Category, ...]
    allow_rules: tuple[AllowRule, ...]
    sourced: tuple[SourcedPattern, ...]
    source: str = field(default="")


def _fail(path: str, where: str, why: str) -> ValueError:
    return ValueError(f"Policy file {path}: {where} {why}.")


def _expect(value: Any, kind: type | tuple[type, ...], path: str, where: str, what: str) -> Any:
    if not isinstance(value, kind):
        raise _fail(path, where, f"must be {what}")
    return value


def _compile(pattern: Any, path: str, where: str, *, case_sensitive: bool = False) -> re.Pattern[str]:
    _expect(pattern, str, path, where, "a regular expression string")
    flags = re.MULTILINE if case_sensitive else re.MULTILINE | re.IGNORECASE
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise _fail(path, where, f"is not a valid regular expression ({exc})") from None


def _stages(value: Any, path: str, where: str) -> frozenset[str]:
    items = _expect(value, list, path, where, f"a list of stages from {', '.join(STAGES)}")
    bad = [s for s in items if s not in STAGES]
    if bad or not items:
        raise _fail(path, where, f"must list stages from {', '.join(STAGES)} (got {bad or 'nothing'})")
    return frozenset(items)


def _lexicon_names(value: Any, lexicons: Mapping[str, Any], path: str, where: str) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else _expect(value, list, path, where, "a lexicon name or list")
    for name in names:
        if name not in lexicons:
            raise _fail(path, where, f"names unknown lexicon {name!r}")
    return tuple(names)


def _rule(raw: Any, lexicons: Mapping[str, Any], path: str, where: str) -> Rule:
    raw = _expect(raw, dict, path, where, "a mapping")
    rid = _expect(raw.get("id"), str, path, f"{where}.id", "a string")
    weight = _expect(raw.get("weight", 1), (int, float), path, f"{rid}.weight", "a number")
    kinds = [k for k in ("regex", "lexicon", "near") if k in raw]
    if len(kinds) != 1:
        raise _fail(path, f"rule {rid}", "must have exactly one of regex, lexicon or near")
    unknown = set(raw) - RULE_KEYS
    if unknown:
        raise _fail(path, f"rule {rid}", f"has unknown keys {sorted(unknown)}")
    stages = _stages(raw["stages"], path, f"rule {rid}.stages") if "stages" in raw else None
    if "regex" in raw:
        view = raw.get("view", "plain")
        if view not in VIEWS:
            raise _fail(path, f"rule {rid}.view", f"must be one of {', '.join(VIEWS)}")
        pattern = _compile(raw["regex"], path, f"rule {rid}.regex", case_sensitive=view == "cased")
        count = _expect(raw.get("min_count", 1), int, path, f"rule {rid}.min_count", "an integer")
        return Rule(rid, float(weight), regex=pattern, view=view, min_count=max(1, count), stages=stages)
    if "lexicon" in raw:
        names = _lexicon_names(raw["lexicon"], lexicons, path, f"rule {rid}")
        return Rule(rid, float(weight), lexicons=names, stages=stages)
    pair = _lexicon_names(raw["near"], lexicons, path, f"rule {rid}.near")
    if len(pair) != 2:
        raise _fail(path, f"rule {rid}.near", "must name exactly two lexicons")
    window = _expect(raw.get("window", 5), int, path, f"rule {rid}.window", "an integer")
    return Rule(rid, float(weight), near=(pair[0], pair[1]), window=window, stages=stages)


def _lexicons(raw: Any, path: str) -> dict[str, tuple[str, ...]]:
    raw = _expect(raw, dict, path, "lexicons", "a mapping of name to list of terms")
    out: dict[str, tuple[str, ...]] = {}
    for name, terms in raw.items():
        terms = _expect(terms, list, path, f"lexicon {name}", "a list of strings")
        for term in terms:
            _expect(term, str, path, f"lexicon {name}", "a list of strings")
            if term.startswith("re:"):
                _compile(term[3:], path, f"lexicon {name} entry {term!r}")
        if not terms:
            raise _fail(path, f"lexicon {name}", "is empty")
        out[str(name)] = tuple(terms)
    return out


def parse_policy(data: Any, path: str, raw_bytes: bytes = b"") -> PolicyConfig:
    data = _expect(data, dict, path, "the top level", "a mapping")
    unknown = set(data) - TOP_LEVEL_KEYS
    if unknown:
        raise _fail(path, "the top level", f"has unknown keys {sorted(unknown)}")
    version = data.get("version")
    if not isinstance(version, (str, int, float)) or not str(version).strip():
        raise _fail(path, "version", "must be a non-empty string")
    refusals = _expect(data.get("refusals"), dict, path, "refusals", "a mapping")
    for kind in REFUSAL_KINDS:
        text = refusals.get(kind)
        if not isinstance(text, str) or not text.strip():
            raise _fail(path, f"refusals.{kind}", "must be a non-empty text")
    norm = _expect(data.get("normalization", {}), dict, path, "normalization", "a mapping")
    leet = _expect(norm.get("leet", DEFAULT_LEET), dict, path, "normalization.leet", "a mapping")
    slang_raw = _expect(norm.get("slang", {}), dict, path, "normalization.slang", "a mapping")
    # Slang is looked up after repeated letters are squeezed, so squeeze both sides the same way.
    slang = {_SQUEEZE.sub(r"\1", str(k).casefold()): _SQUEEZE.sub(r"\1", str(v).casefold())
             for k, v in slang_raw.items()}
    lexicons = _lexicons(data.get("lexicons"), path)

    categories: list[Category] = []
    seen_ids: set[str] = set()
    raw_cats = _expect(data.get("categories"), dict, path, "categories", "a mapping")
    for name, raw in raw_cats.items():
        raw = _expect(raw, dict, path, f"category {name}", "a mapping")
        where = f"category {name}"
        threshold = _expect(raw.get("threshold"), (int, float), path, f"{where}.threshold", "a number")
        stages = _stages(raw.get("stages"), path, f"category {name}.stages")
        rules_raw = _expect(raw.get("rules"), list, path, f"category {name}.rules", "a non-empty list")
        rules = tuple(_rule(r, lexicons, path, f"{where} rule #{i + 1}") for i, r in enumerate(rules_raw))
        for rule in rules:
            if rule.id in seen_ids:
                raise _fail(path, f"rule {rule.id}", "is defined twice")
            seen_ids.add(rule.id)
        if not rules:
            raise _fail(path, f"category {name}.rules", "must be a non-empty list")
        categories.append(Category(str(name), float(threshold), stages, rules))

    allow_rules: list[AllowRule] = []
    for i, raw in enumerate(_expect(data.get("allow_rules", []), list, path, "allow_rules", "a list")):
        raw = _expect(raw, dict, path, f"allow rule #{i + 1}", "a mapping")
        aid = _expect(raw.get("id"), str, path, f"allow rule #{i + 1}.id", "a string")
        sup = _expect(raw.get("suppresses"), list, path, f"allow rule {aid}.suppresses", "a list of rule ids")
        for pat in sup:
            if not any(fnmatch.fnmatchcase(rid, str(pat)) for rid in seen_ids):
                raise _fail(path, f"allow rule {aid}.suppresses", f"entry {pat!r} matches no rule")
        if ("regex" in raw) == ("lexicon" in raw):
            raise _fail(path, f"allow rule {aid}", "must have exactly one of regex or lexicon")
        regex = _compile(raw["regex"], path, f"allow rule {aid}.regex") if "regex" in raw else None
        lex = _lexicon_names(raw["lexicon"], lexicons, path, f"allow rule {aid}") if "lexicon" in raw else ()
        stages = _stages(raw.get("stages", list(STAGES)), path, f"allow rule {aid}.stages")
        allow_rules.append(AllowRule(aid, tuple(str(p) for p in sup), stages, regex, lex))

    sourced: list[SourcedPattern] = []
    for i, raw in enumerate(_expect(data.get("sourced_only", []), list, path, "sourced_only", "a list")):
        raw = _expect(raw, dict, path, f"sourced_only #{i + 1}", "a mapping")
        sid = _expect(raw.get("id"), str, path, f"sourced_only #{i + 1}.id", "a string")
        kind = raw.get("kind")
        if kind not in SOURCED_KINDS:
            raise _fail(path, f"sourced_only {sid}.kind", f"must be one of {', '.join(SOURCED_KINDS)}")
        cat = _expect(raw.get("category"), str, path, f"sourced_only {sid}.category", "a string")
        regex = _compile(raw.get("regex"), path, f"sourced_only {sid}")
        sourced.append(SourcedPattern(sid, cat, kind, regex))

    return PolicyConfig(
        version=str(version).strip(),
        digest=hashlib.sha256(raw_bytes).hexdigest()[:12],
        refusals={k: str(v).strip() for k, v in refusals.items()},
        folder=Folder(leet={str(k): str(v) for k, v in leet.items()}, slang=slang),
        lexicons=lexicons,
        categories=tuple(categories),
        allow_rules=tuple(allow_rules),
        sourced=tuple(sourced),
        source=path,
    )


def load_policy(path: str | Path) -> PolicyConfig:
    path_s = str(path)
    try:
        raw_bytes = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"Policy file {path_s} cannot be read ({exc.strerror or exc}).") from None
    try:
        data = yaml.safe_load(raw_bytes.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"Policy file {path_s} is not valid UTF-8 YAML ({first}).") from None
    return parse_policy(data, path_s, raw_bytes)
