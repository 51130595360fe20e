"""Ground one claim figure in the cited passages: an equal figure, with a compatible unit and period, written
near the same entity. When none is found, say the most specific reason why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

from judge.csv_rows import CsvProse
from judge.lead_in import lead_in_subject_keys
from judge.shares import base_named
from language.lexicon import CURRENCY_HINTS, FRAMING_WORDS, MARKER_WORDS, SCALE_WORDS
from language.numbers import (
    PERIOD_KINDS,
    Figure,
    kind_group,
    ratios_equal,
    rounds_to,
    scale_differs,
    values_equal,
)
from language.ocr_words import ocr_match
from language.periods import period_matches
from language.references import reference_keys
from language.textunits import TextView, Token, content_tokens, contrast_keys, is_grounded, names_term

# Most specific first: the first one seen explains the failure.
REASON_PRIORITY = (
    "entity_missing",
    "period_mismatch",
    "polarity_conflict",
    "unit_mismatch",
    "rounding_unmarked",
    "scale_mismatch",
    "reference_as_quantity",
    "figure_mismatch",
)


@dataclass(frozen=True, eq=False)
class Source:
    """One cited passage as the rule judge sees it: its text view plus its document identity."""

    key: str
    view: TextView
    identity_keys: frozenset[str]
    identity_periods: tuple[str, ...]
    identity_refs: frozenset[tuple[str, str]]
    extra_hint_words: frozenset[str]  # lower-case words of the identity and the reader's context
    prose: CsvProse | None = None  # a CSV row read as prose (judge.csv_rows): spans map back through it

    @cached_property
    def keys(self) -> frozenset[str]:
        return self.view.all_keys | self.identity_keys

    @cached_property
    def references(self) -> frozenset[tuple[str, str]]:
        """What the passage and its identity refer to (reference_keys)."""
        return reference_keys(list(self.view.parsed.references)) | self.identity_refs

    def has_currency_hint(self, unit: str) -> bool:
        hints = CURRENCY_HINTS.get(unit.split("/")[0], frozenset())
        return not hints.isdisjoint(self.view.all_keys) or not hints.isdisjoint(self.extra_hint_words)


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class ClaimFigure(NamedTuple):
    figure: Figure
    required: tuple[Token, ...]  # claim words written next to this figure: its entity
    periods: tuple[str, ...]  # periods the claim gives this figure (its own, its column header's, context's)
    role: str | None = None  # "from" / "to" when the claim writes it as the start or end of a change
    directions: frozenset[str] = frozenset()  # "naik sebesar Rp62 miliar": the direction this figure states
    base: tuple[
        Token, ...
    ] = ()  # "10% dari belanja negara": what the claim says the share is of (judge.shares)


# A NamedTuple: immutable like a frozen dataclass, and built several times faster (each claim makes some).
class Grounding(NamedTuple):
    ok: bool
    reason: str | None
    span: tuple[str, int, int] | None
    source_index: int | None = None
    figure_index: int | None = None


def _unit_ok(claim: Figure, source_fig: Figure, source: Source) -> bool:
    if claim.unit and source_fig.unit:
        return claim.unit == source_fig.unit
    if claim.unit and not source_fig.unit:
        return claim.unit.split("/")[0] in CURRENCY_HINTS and source.has_currency_hint(claim.unit)
    return True


_OWN_WORDS = 3  # content words right before a figure that name it alone, not the sentence's later figures


def _entity_kind(figure: Figure, same_kind: bool) -> tuple[str, str]:
    """What a figure counts: rupiah amounts, percents, days, kilograms (``same_kind``), or only whether it is
    a quantity, a percent, a ratio (kind_group)."""
    if not same_kind:
        return kind_group(figure), ""
    return figure.kind, (figure.unit or "").split("/")[0]


def _other_label_keys(view: TextView, figure_index: int, same_kind: bool = False) -> frozenset[str]:
    """Keys of the words labelling the passage's other figures (a claim word found only there names another
    figure's entity: the row or item the claim took its number from is not the one it names). ``same_kind``:
    only the figures counting the same thing, the rivals that tell this figure's row apart ("LPG 3 kilogram"
    beside a subsidy in rupiah tells nothing apart)."""
    memo_key = ("others" if same_kind else "others_any", figure_index)
    cached = view.memo.get(memo_key)
    if cached is None:
        own = view.labels.get(figure_index, ())
        group = _entity_kind(view.figures[figure_index], same_kind)
        sentence = view.sentence_at(view.figures[figure_index].start)
        prose = figure_index not in view.in_table
        keys: set[str] = set()
        for index in view.quantities:
            ranges = view.labels.get(index, ())
            # a percent is never mistaken for an amount: only figures of the same kind name other entities
            if index == figure_index or not ranges or ranges == own or index in view.designations:
                continue
            if _entity_kind(view.figures[index], same_kind) != group:
                continue
            if prose and index < figure_index and view.sentence_at(view.figures[index].start) == sentence:
                # the opening of the sentence before an earlier figure is its subject, shared by the later
                # ones ("Setiap orang yang memalsukan dokumen dipidana … 5 tahun dan denda …"); the words
                # right before that figure ("jumlah penduduk sampai dengan 250.000") and those linked after
                # it ("untuk mendanai …") are its own
                # (a name's measure and the name it ends, "beras karung 25 kg", are part of the subject)
                begin = max(
                    (
                        view.figures[d].end
                        for d in view.designations
                        if ranges[0][0] <= view.figures[d].start < ranges[0][1]
                    ),
                    default=ranges[0][0],
                )
                head = [t for t in content_tokens(view, begin, ranges[0][1]) if t.low not in FRAMING_WORDS]
                for token in head[-_OWN_WORDS:]:
                    keys |= token.keys
                ranges = ranges[1:]
            keys |= view.keys_in(ranges)
        cached = view.memo[memo_key] = frozenset(keys)
    return cached  # type: ignore[return-value]


Distinct = tuple[tuple[Token, bool], ...]

# Statute connectives that sit in one item's wording without naming what it counts: "diterapkan atas",
# "dalam ketentuan ini", "yang berlaku", "untuk jangka waktu" (a duration's unit says it is one). A claim need
# not repeat them to name the item.
_CONNECTIVE = frozenset({"diterapkan", "ketentuan", "berlaku", "dimaksud", "tersebut", "jangka", "waktu"})


def _distinctive(view: TextView, figure_index: int) -> tuple[Distinct, Distinct]:
    """Words of this figure's label found in no other figure's label: what tells its row or item apart; and
    those of them that are capitalised words of its name (a table row's cells, the words before a figure).
    The flag marks a word told apart only by its form: "Perpajakan" beside "Bukan Pajak" shares its stem."""
    memo_key = ("distinct", figure_index)
    cached = view.memo.get(memo_key)
    if cached is None:
        others = _other_label_keys(view, figure_index, same_kind=True)
        labels = view.labels.get(figure_index, ())
        distinct = []
        for start, end in labels:
            for token in content_tokens(view, start, end):
                if token.low in FRAMING_WORDS or token.low in MARKER_WORDS or token.low in _CONNECTIVE:
                    continue
                if token.start in view.anaphors and token.low[0] == "§":
                    continue  # "dimaksud pada ayat (1)" points to the ayat's subject (in the neighbourhood)
                if not is_grounded(token, others):
                    distinct.append((token, False))
                elif token.low not in others and len(token.low) > 3:
                    distinct.append((token, True))
        name_ranges = labels if figure_index in view.in_table else labels[:1]
        names = tuple(
            (t, by_form)
            for t, by_form in distinct
            if t.capital and any(s <= t.start < e for s, e in name_ranges)
        )
        cached = view.memo[memo_key] = (tuple(distinct), names)
    return cached  # type: ignore[return-value]


def _named(token: Token, by_form: bool, claim_keys: frozenset[str]) -> bool:
    return token.low in claim_keys if by_form else is_grounded(token, claim_keys)


@lru_cache(maxsize=16)
def _cites_clauses(claim_keys: frozenset[str]) -> bool:
    """Whether the claim cites a clause ("ayat (1) huruf c": a reference pseudo-word, language.textunits);
    once per claim, not once per candidate figure (a frozenset caches its hash, so the look-up is cheap)."""
    return any(key[0] == "§" for key in claim_keys)


def entity_ok(
    claim_fig: ClaimFigure,
    source: Source,
    figure_index: int,
    all_keys: frozenset[str],
    max_unknown_ratio: float,
    claim_keys: frozenset[str],
    english: bool = False,
) -> bool:
    distinctive, names = _distinctive(source.view, figure_index)
    if not _cites_clauses(claim_keys):
        # "sebagaimana dimaksud pada ayat (1) huruf c" tells a clause apart only to a claim citing clauses
        distinctive = tuple(d for d in distinctive if d[0].low[0] != "§")
    if distinctive and len(source.view.quantities) > 1:
        if not any(_named(t, by_form, claim_keys) for t, by_form in distinctive) and not any(
            ocr_match(t.low, claim_keys)
            for t, _ in distinctive  # the scan damaged the word that does
        ):
            return False  # the claim names nothing that sets this figure's row or item apart
        if figure_index in source.view.in_table and not all(
            _named(t, by_form, claim_keys) for t, by_form in names
        ):
            # it names the row only in part ("Dinas Dalam Kota" for "Dinas Paket Meeting Dalam Kota"); prose
            # capitals ("ditetapkan oleh Menteri Keuangan") are not a row's name
            return False
    if claim_fig.base and not base_named(claim_fig.base, source.view, figure_index):
        return False  # the passage says of what this share is, and the claim names another base
    if not claim_fig.required:
        return True
    view = source.view
    local = (
        view.keys_in(view.neighbourhood(figure_index))
        | source.identity_keys
        | lead_in_subject_keys(view, figure_index)  # the whole its list's lead-in names (judge.lead_in)
    )
    others: frozenset[str] | None = None
    unknown = 0
    for token in claim_fig.required:
        if is_grounded(token, local):
            continue
        if not contrast_keys(token.low, english).isdisjoint(local):
            return False  # "target" where the figure's own words say "realisasi"
        others = _other_label_keys(view, figure_index) if others is None else others
        if is_grounded(token, others):
            return False  # the word names another figure of the passage ("penjara" for a fine)
        if not is_grounded(token, all_keys):
            if not contrast_keys(token.low, english).isdisjoint(all_keys):
                return False  # "impor" where the passage says "ekspor"
            if not english and ocr_match(token.low, _passage_words(view)):
                continue  # the passage spells it with OCR damage ("mengunglapkan")
            if token.capital or names_term(token):
                return False  # a name or a budget term is never a mere restatement
            unknown += 1
    return unknown <= allowed_unknown(max_unknown_ratio, len(claim_fig.required))


def _passage_words(view: TextView) -> tuple[str, ...]:
    """The passage's distinct lower-case words, once per view (read only when a claim word is missing)."""
    cached = view.memo.get(("words", 0))
    if cached is None:
        cached = view.memo[("words", 0)] = tuple(dict.fromkeys(t.low for t in view.tokens))
    return cached  # type: ignore[return-value]


def allowed_unknown(ratio: float, words: int) -> int:
    """How many of ``words`` content words may be missing from the passage: the ratio's share, and at least
    one when a word is grounded beside it (never the only word) and the ratio tolerates any."""
    share = int(ratio * words)
    return max(share, 1) if ratio > 0 and words >= 2 else share


def _local_period_ok(claim_fig: ClaimFigure, source: Source, figure_index: int) -> bool:
    if not claim_fig.periods:
        return True
    # the figure's own regions: a table's other columns or the topic do not date this figure
    own = source.view.dating_ranges(figure_index)
    local = [fig.period for fig in source.view.periods_in(own) if fig.period]
    if not local:
        return True
    undated = all(found.startswith("?") for found in local)  # "triwulan I": the year is stated elsewhere
    return all(
        any(period_matches(claim, found) for found in local) or (undated and claim.isdigit())
        for claim in claim_fig.periods
    )


def ground_figure(
    claim_fig: ClaimFigure,
    sources: Sequence[Source],
    all_keys: frozenset[str],
    max_unknown_ratio: float,
    claim_keys: frozenset[str],
    english: bool = False,
) -> Grounding:
    claim = claim_fig.figure
    group = kind_group(claim)
    seen: set[str] = set()
    best: tuple[int, Grounding] | None = None
    for source_index, source in enumerate(sources):
        figures = source.view.figures
        for figure_index in source.view.quantities:
            found = figures[figure_index]
            if kind_group(found) != group:
                continue
            if claim.kind == "ratio":
                if not ratios_equal(claim, found):
                    continue
            elif not values_equal(claim, found):
                continue
            if not _unit_ok(claim, found, source):
                seen.add("unit_mismatch")
            elif claim.bound != found.bound:
                seen.add("polarity_conflict")
            elif claim_fig.role and source.view.roles.get(figure_index, claim_fig.role) != claim_fig.role:
                seen.add("figure_mismatch")  # "dari 356 menjadi 356": the passage's start is not its end
            elif not _local_period_ok(claim_fig, source, figure_index):
                seen.add("period_mismatch")
            elif not entity_ok(
                claim_fig, source, figure_index, all_keys, max_unknown_ratio, claim_keys, english
            ):
                seen.add("entity_missing")
            else:
                fit = _fit(claim_keys, source.view, figure_index)
                if best is None or fit > best[0]:
                    span = (source.key, found.start, found.end)
                    best = (fit, Grounding(True, None, span, source_index, figure_index))
    if best is not None:
        return best[1]
    if claim.kind == "ratio" and claim.ratio:
        shares = _ratio_from_shares(claim_fig, sources, all_keys, max_unknown_ratio, claim_keys, english)
        if shares is not None:
            return shares
    return Grounding(False, _failure_reason(claim, sources, seen), None)


def _ratio_from_shares(
    claim_fig: ClaimFigure,
    sources: Sequence[Source],
    all_keys: frozenset[str],
    max_unknown_ratio: float,
    claim_keys: frozenset[str],
    english: bool,
) -> Grounding | None:
    """ "dibagi 60:40" restates two shares of one whole written in one sentence, in that order: "60% untuk A
    dan 40% untuk B". Only shares that add up to 100 percent, next to each other (a spelled twin aside), and
    the claim's words around the ratio written around the two shares."""
    assert claim_fig.figure.ratio is not None
    left, right = claim_fig.figure.ratio
    for source_index, source in enumerate(sources):
        view = source.view
        percents = [
            i
            for i in view.quantities
            if view.figures[i].kind == "percent" and not view.figures[i].spelled and not view.figures[i].bound
        ]
        for first, second in zip(percents, percents[1:], strict=False):
            a, b = view.figures[first], view.figures[second]
            if a.value + b.value != 100 or a.value * right != b.value * left:
                continue
            if view.sentence_at(a.start) != view.sentence_at(b.start):
                continue
            if not _shares_named(claim_fig, source, (first, second), all_keys, max_unknown_ratio, english):
                continue
            return Grounding(True, None, (source.key, a.start, b.end), source_index, first)
    return None


def _shares_named(
    claim_fig: ClaimFigure,
    source: Source,
    shares: tuple[int, int],
    all_keys: frozenset[str],
    max_unknown_ratio: float,
    english: bool,
) -> bool:
    """entity_ok for a ratio read off two shares: each share's words name one side ("kabupaten", "desa"),
    so the claim's words are looked for around both, and no side's word counts as another figure's."""
    view = source.view
    local = view.keys_in(view.neighbourhood(shares[0]) + view.neighbourhood(shares[1])) | source.identity_keys
    unknown = 0
    for token in claim_fig.required:
        if is_grounded(token, local):
            continue
        if not contrast_keys(token.low, english).isdisjoint(all_keys) or token.capital or names_term(token):
            return False
        unknown += 1
    return unknown <= allowed_unknown(max_unknown_ratio, len(claim_fig.required))


def _fit(claim_keys: frozenset[str], view: TextView, figure_index: int) -> int:
    """How many of the claim's word keys this figure's own neighbourhood holds: among equal figures ("denda
    sebesar 30%" in ayat (9) and in ayat (10)) the claim is about the one whose words it uses, its condition
    ("Dalam hal …,", kept out of its label as a scope) included: its sentence counts too."""
    sentence = view.sentence_at(view.figures[figure_index].start)
    return len(claim_keys & view.keys_in((*view.regions.get(figure_index, ()), sentence)))


def _failure_reason(claim: Figure, sources: Sequence[Source], seen: set[str]) -> str:
    """Why no passage figure grounds the claim's: the most specific reason (computed only on failure)."""
    group = kind_group(claim)
    for source in sources:
        for figure_index in source.view.quantities:
            found = source.view.figures[figure_index]
            if kind_group(found) != group:
                if claim.value == found.value and "ratio" not in (claim.kind, found.kind):
                    seen.add("unit_mismatch")  # 9 persen where the source says 9 orang
            elif claim.kind == "ratio":
                if (
                    found.ratio
                    and claim.ratio
                    and claim.ratio[0] * found.ratio[0] == claim.ratio[1] * found.ratio[1]
                ):
                    seen.add("ratio_orientation")
            elif rounds_to(claim, found):
                seen.add("rounding_unmarked")
            elif scale_differs(claim, found):
                seen.add("scale_mismatch")
    written = {claim.value}
    if claim.scale_word:  # "Rp1 triliun" read off "ayat (1)": compare the number as written
        written.add(claim.value / SCALE_WORDS[claim.scale_word][1])
    numbers = {str(int(value)) for value in written if value == value.to_integral_value()}
    if any(not numbers.isdisjoint({ref.value for ref in src.view.parsed.references}) for src in sources):
        seen.add("reference_as_quantity")
    reason = next((code for code in REASON_PRIORITY if code in seen), None)
    if reason is None:
        reason = "ratio_orientation" if "ratio_orientation" in seen else "figure_mismatch"
    return reason


def ground_period(
    period: str, sources: Sequence[Source], bound: str | None = None
) -> tuple[bool, tuple[str, int, int] | None]:
    """A claim period is grounded by a period written in a passage, or by its document identity. A bounded
    claim period ("paling lambat 30 November") needs the same bound; a passage period under another bound
    comes back as ``(True, ("bound", start, end))``."""
    other_bound = None
    for source in sources:
        for fig in source.view.figures:
            if fig.kind in PERIOD_KINDS and fig.period and period_matches(period, fig.period):
                if bound is not None and fig.bound not in (None, bound):
                    other_bound = ("bound", fig.start, fig.end)
                    continue
                return True, (source.key, fig.start, fig.end)
        if other_bound is not None:
            return True, other_bound
        if any(period_matches(period, found) for found in source.identity_periods):
            return True, None
    return False, None
