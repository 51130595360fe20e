"""Which passage figures a claim may read together: a condition and the figure it conditions belong to one
list item, one table row, one bracket of the passage."""

from __future__ import annotations

from collections.abc import Sequence

from judge.claims import CLAUSE_BREAK_RE, ClaimParts
from judge.grounding import Source
from language.numbers import kind_group
from language.textunits import TextView


def condition_elsewhere(
    parts: ClaimParts, sources: Sequence[Source], placed: dict[int, tuple[int, int]]
) -> bool:
    """A bounded figure in the same clause as another figure is that figure's condition: in "tarif 1% berlaku
    bagi harta lebih dari Rp2 miliar" the threshold says when the 1% applies. Both must then be read together
    in one passage (_read_together): a rate from item a and a threshold from item b, each written somewhere,
    do not make the claim (item a's rate may hold only up to that threshold)."""
    figures = parts.figures
    for later in range(1, len(figures)):
        for earlier in range(later):
            first, second = figures[earlier].figure, figures[later].figure
            if not (first.bound or second.bound) or earlier not in placed or later not in placed:
                continue
            if CLAUSE_BREAK_RE.search(parts.view.text, first.end, second.start):
                continue  # separate clauses: "3% pada 2015, 6% pada 2016" may come from separate items
            (source_a, index_a), (source_b, index_b) = placed[earlier], placed[later]
            if source_a != source_b:
                return True
            if not _read_together(sources[source_a].view, index_a, index_b):
                return True
            used = {index for src, index in placed.values() if src == source_a}
            if _pair_crossed(sources[source_a].view, index_a, index_b, used):
                return True
    return False


def _pair_crossed(view: TextView, index_a: int, index_b: int, used: set[int]) -> bool:
    """Whether a passage that repeats (condition, rate) rows puts a whole other row between the two figures:
    in "di atas Rp50 juta sampai dengan Rp250 juta 15% di atas Rp250 juta … 25%" the 25% is not the rate of
    the bracket that ends at Rp250 juta. A row is crossed when unused figures of both kinds lie between."""
    if view.sentence_at(view.figures[index_a].start) != view.sentence_at(view.figures[index_b].start):
        return False  # a list's lead-in conditions each item (_read_together), whatever items lie between
    low, high = sorted((index_a, index_b))
    kinds = {kind_group(view.figures[index_a]), kind_group(view.figures[index_b])}
    if len(kinds) < 2:
        return False
    between = {
        kind_group(view.figures[i])
        for i in view.quantities
        if low < i < high and i not in used and not view.figures[i].spelled
    }
    return kinds <= between


def _read_together(view: TextView, index_a: int, index_b: int) -> bool:
    """Two passage figures in one sentence (one list item), or one of them in a sentence the other's regions
    reach: a list's lead-in ("bagi Wajib Pajak … sampai dengan Rp4,8 miliar adalah sebesar:") conditions
    every item."""
    sentence_a = view.sentence_at(view.figures[index_a].start)
    sentence_b = view.sentence_at(view.figures[index_b].start)
    if sentence_a == sentence_b:
        return True
    return any(view.sentence_at(start) == sentence_b for start, _ in view.regions.get(index_a, ())) or any(
        view.sentence_at(start) == sentence_a for start, _ in view.regions.get(index_b, ())
    )
