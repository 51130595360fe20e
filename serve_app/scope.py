"""Which documents a request may read: ``document_ids`` and named selections from the config."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from serve_app.config import SelectionConfig

if TYPE_CHECKING:
    from retrieval.port import RetrieverPort


@dataclass(frozen=True, slots=True)
class Scope:
    document_ids: frozenset[str] | None  # None: the whole corpus
    empty: bool  # a named selection with no indexed documents, or one the caller may not use

    @classmethod
    def everything(cls) -> Scope:
        return cls(None, False)


def resolve_scope(
    *,
    selection: str | None,
    document_ids: list[str] | None,
    selections: dict[str, SelectionConfig],
    indexed_ids: Collection[str],
    filter_ids: dict[str, list[str]],
    caller_issuer: str | None,
) -> Scope:
    """Unknown ``document_ids`` are ignored; when none remain the scope is empty. An unknown selection,
    an empty one, or one whose ``partners`` list excludes the caller's issuer, is empty too. Documents kept
    by a partner-limited selection are left out unless the caller may use a selection holding them.
    ``filter_ids`` maps a selection name to the ids its metadata filter matched (every partner-limited
    selection's and the requested one's)."""
    indexed = frozenset(indexed_ids)
    ids: frozenset[str] | None = None
    if selection is not None:
        spec = selections.get(selection)
        if spec is None:
            return Scope(frozenset(), True)
        if spec.partners is not None and (caller_issuer is None or caller_issuer not in spec.partners):
            return Scope(frozenset(), True)
        chosen: set[str] = set()
        if spec.document_ids is not None:
            chosen.update(spec.document_ids)
        if spec.filter is not None:
            chosen.update(filter_ids.get(selection, ()))
        ids = frozenset(chosen) & indexed
        if not ids:
            return Scope(frozenset(), True)
    if document_ids is not None:
        requested = frozenset(document_ids) & indexed
        ids = requested if ids is None else ids & requested
        if not ids:
            return Scope(frozenset(), True)
    # The same rule as the citation routes: a document that a partner-limited selection keeps is readable
    # only through a selection the caller may use, so naming its id (or no scope at all) does not reach it.
    seen = visible_documents(
        selections=selections, indexed_ids=indexed, filter_ids=filter_ids, caller_issuer=caller_issuer
    )
    if seen is not None:
        ids = seen if ids is None else ids & seen
        if not ids:
            return Scope(frozenset(), True)
    return Scope(ids, False)


def may_use(spec: SelectionConfig, caller_issuer: str | None) -> bool:
    return spec.partners is None or (caller_issuer is not None and caller_issuer in spec.partners)


def visible_documents(
    *,
    selections: dict[str, SelectionConfig],
    indexed_ids: Collection[str],
    filter_ids: dict[str, list[str]],
    caller_issuer: str | None,
) -> frozenset[str] | None:
    """The documents the citation routes show a caller (None: every indexed one). The corpus as a whole is
    open to every caller, less what a selection with a ``partners`` list keeps for those partners: a
    document kept so is visible only through a selection the caller may use."""
    def members(name: str, spec: SelectionConfig) -> set[str]:
        return set(spec.document_ids or ()) | set(filter_ids.get(name, ()))

    kept: set[str] = set()
    usable: set[str] = set()
    for name, spec in selections.items():
        if spec.partners is not None:
            kept |= members(name, spec)
        if may_use(spec, caller_issuer):
            usable |= members(name, spec)
    if not kept:
        return None
    indexed = frozenset(indexed_ids)
    return (indexed - kept) | (indexed & usable)


def partner_limited(selections: dict[str, SelectionConfig]) -> list[str]:
    """The selections with a ``partners`` list: what they hold is kept from every other caller."""
    return [name for name, spec in selections.items() if spec.partners is not None]


async def selection_filter_ids(
    retriever: RetrieverPort, selections: dict[str, SelectionConfig], names: Iterable[str]
) -> dict[str, list[str]]:
    """``filter_ids`` for :func:`resolve_scope` and :func:`visible_documents`: the ids each named selection's
    metadata filter matches (selections without a filter need none)."""
    out: dict[str, list[str]] = {}
    for name in names:
        spec = selections.get(name)
        if spec is not None and spec.filter is not None:
            f = spec.filter
            out[name] = await retriever.resolve_filter(type=f.type, year=f.year, issuer=f.issuer)
    return out
