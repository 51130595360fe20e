"""The subject of a list's lead-in, read with each of its items.

A statute lists the parts of a total under a lead-in that names the whole: "(3) Dana Cadangan … sebesar Rp9
miliar, dengan rincian sebagai berikut: a. … sebesar Rp4 miliar; b. …". The reader sees item a as a part of
that whole, and a claim naming both ("dalam Dana Cadangan, pos a sebesar Rp4 miliar") names item a. The
lead-in's words are the label of its own figure (the total), so without this they would count as another
figure's entity. Only the words: the item must still be named by its own distinctive words (grounding)."""

from __future__ import annotations

from language.numbers import kind_group
from language.textunits import TextView


def lead_in_subject_keys(view: TextView, figure_index: int) -> frozenset[str]:
    """Keys of the words before the total of the lead-in sentence ("…:") that opens this figure's list (its
    first figure of the item's kind); empty when the figure is no list item (its regions hold no lead-in
    ending in a colon before its sentence)."""
    memo_key = ("lead_in_subject", figure_index)
    cached = view.memo.get(memo_key)
    if cached is None:
        own_sentence = view.sentence_at(view.figures[figure_index].start)
        keys: set[str] = set()
        for start, end in view.regions.get(figure_index, ()):
            if end > own_sentence[0] or not view.text[start:end].rstrip().endswith(":"):
                continue  # only a lead-in before the item's own sentence introduces it
            lead = view.sentence_at(start)
            total = next(
                (
                    index
                    for index in view.quantities
                    if lead[0] <= view.figures[index].start < lead[1]
                    and kind_group(view.figures[index]) == kind_group(view.figures[figure_index])
                ),
                None,
            )
            if total is not None and total != figure_index:
                # only the words before the total, what it is: its linked words ("65% untuk kabupaten dan
                # 35% untuk kota") may name the very items the claim must tell apart
                keys |= view.keys_in(view.labels.get(total, ())[:1])
        cached = view.memo[memo_key] = frozenset(keys)
    return cached  # type: ignore[return-value]
