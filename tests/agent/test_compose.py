from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from serve_app.answer.compose import compose, table_cells, utf16_len, validate_segments
from serve_app.answer.segments import KINDS, LAYOUTS, ComposedAnswer, Segment

S = Segment

# Letters, Markdown emphasis, pipes, escapes, emoji and other non-BMP characters, combining marks.
ALPHABET = list("abcXYZ019 *_|\\#-`.,%") + ["😀", "👍🏽", "𝔸", "𠀋", "\u0301", "e\u0301", "ñ", "\t", "Rp"]
UNSAFE = ["\n", "\r", "\u2028", "\x85", "\x00"]

SEP_ROW = r"\n\|(?: --- \|)+"
BEFORE_FIRST = re.compile(r"(?:## |- |\| )?")
BETWEEN = re.compile(rf"(?: \|(?:{SEP_ROW})?)?(?: |\n|\n\n)(?:## |- |\| )?")
AFTER_LAST = re.compile(rf"(?: \|(?:{SEP_ROW})?)?")


def check_invariants(composed: ComposedAnswer, segments: list[Segment]) -> None:
    answer = composed.answer
    encoded = answer.encode("utf-16-le")
    assert [s.index for s in composed.spans] == list(range(len(segments)))
    previous_end = 0
    gaps = []
    for span, seg in zip(composed.spans, segments, strict=True):
        assert span.segment == seg
        assert answer[span.start : span.end] == seg.text
        assert encoded[2 * span.start_utf16 : 2 * span.end_utf16].decode("utf-16-le") == seg.text
        assert span.start_utf16 == utf16_len(answer[: span.start])
        assert span.start >= previous_end
        gaps.append(answer[previous_end : span.start])
        previous_end = span.end
    tail = answer[previous_end:]
    # Exact coverage: every character outside the spans is server-written layout, and nothing else.
    assert BEFORE_FIRST.fullmatch(gaps[0]), repr(gaps[0])
    for gap in gaps[1:]:
        assert BETWEEN.fullmatch(gap), repr(gap)
    assert AFTER_LAST.fullmatch(tail), repr(tail)


def test_example_from_the_contract() -> None:
    segs = [
        S("Berikut datanya.", "framing", "paragraph"),
        S("Anggaran pendidikan 2023 adalah Rp 5 miliar.", "fact", "continue", ("P1",)),
        S("Naik 9 persen dari 2022.", "fact", "continue", ("P1",)),
    ]
    c = compose(segs)
    assert (
        c.answer == "Berikut datanya. Anggaran pendidikan 2023 adalah Rp 5 miliar. Naik 9 persen dari 2022."
    )
    assert [(s.start, s.end, s.start_utf16, s.end_utf16) for s in c.spans] == [
        (0, 16, 0, 16),
        (17, 61, 17, 61),
        (62, 86, 62, 86),
    ]


def test_every_layout_and_the_reader_context() -> None:
    segs = [
        S("Anggaran 2023", "framing", "heading"),
        S("Rincian per urusan:", "framing", "paragraph"),
        S("Pendidikan naik.", "fact", "list_item", ("P1",)),
        S("Kesehatan **turun** 😀.", "fact", "list_item", ("P2",)),
        S("Lihat lampiran.", "fact", "continue", ("P2",)),
        S("Tabel berikut dari Qanun:", "framing", "paragraph"),
        S("Urusan | Tahun | Nilai", "framing", "table_header"),
        S("Pendidikan | 2023 | Rp5.000.000", "fact", "table_row", ("P1",)),
        S("Kesehatan \\| gizi | 2023 | Rp3.000.000", "fact", "table_row", ("P1",)),
        S("Selesai.", "framing", "paragraph"),
    ]
    c = compose(segs)
    assert c.answer == (
        "## Anggaran 2023\n\nRincian per urusan:\n\n- Pendidikan naik.\n"
        "- Kesehatan **turun** 😀. Lihat lampiran."
        "\n\nTabel berikut dari Qanun:\n\n| Urusan | Tahun | Nilai |\n| --- | --- | --- |\n"
        "| Pendidikan | 2023 | Rp5.000.000 |\n| Kesehatan \\| gizi | 2023 | Rp3.000.000 |\n\nSelesai."
    )
    check_invariants(c, segs)
    ctx = [s.context for s in c.spans]
    assert ctx[0] == "" and ctx[1] == "Anggaran 2023"
    assert ctx[2] == ctx[3] == ctx[4] == "Anggaran 2023\nRincian per urusan:"
    assert ctx[6] == "Anggaran 2023\nTabel berikut dari Qanun:"
    assert ctx[7] == ctx[8] == "Anggaran 2023\nTabel berikut dari Qanun:\nUrusan | Tahun | Nilai"
    # 😀 is one code point but two UTF-16 units: offsets after it differ by one.
    lampiran = c.spans[4]
    assert lampiran.start_utf16 == lampiran.start + 1


def test_table_header_alone_and_at_the_end() -> None:
    segs = [S("A | B", "framing", "table_header")]
    c = compose(segs)
    assert c.answer == "| A | B |\n| --- | --- |"
    check_invariants(c, segs)


@pytest.mark.parametrize(
    ("segments", "needle"),
    [
        ([], "no segments"),
        ([S("", "fact", "paragraph")], "empty"),
        ([S("   ", "fact", "paragraph")], "empty"),
        ([S(" a", "fact", "paragraph")], "whitespace"),
        ([S("a\nb", "fact", "paragraph")], "line break"),
        ([S("a\u2028b", "fact", "paragraph")], "line break"),
        ([S("a", "claim", "paragraph")], "unknown kind"),
        ([S("a", "fact", "quote")], "unknown layout"),
        ([S("a", "fact", "continue")], "first segment"),
        ([S("a | b", "framing", "table_header"), S("c", "fact", "continue")], "follow a table"),
        ([S("x | y", "fact", "table_row")], "without a table_header"),
        ([S("a | b", "framing", "table_header"), S("1 | 2 | 3", "fact", "table_row")], "3 cells"),
        (
            [
                S("a | b", "framing", "table_header"),
                S("1 | 2", "fact", "paragraph"),
                S("3 | 4", "fact", "table_row"),
            ],
            "without a table_header",
        ),
        ([S("| a | b |", "framing", "table_header")], "outer pipes"),
        ([S("# Judul", "framing", "heading")], "block marker"),
        ([S("- butir", "fact", "list_item")], "block marker"),
        ([S("1. butir", "fact", "paragraph")], "block marker"),
        ([S("> kutipan", "fact", "paragraph")], "block marker"),
        ([S("Anggaran naik [P1].", "fact", "paragraph", ("P1",))], "citation label"),
        ([S("a\x00b", "fact", "paragraph")], "control"),
    ],
)
def test_invalid_segments_are_named(segments: list[Segment], needle: str) -> None:
    problems = validate_segments(segments)
    assert any(needle in p for p in problems), problems
    with pytest.raises(ValueError):
        compose(segments)


def test_escaped_pipe_stays_in_its_cell() -> None:
    assert table_cells("a \\| b | c") == ["a \\| b", "c"]
    assert (
        validate_segments([S("a | b", "framing", "table_header"), S("x \\| y | z", "fact", "table_row")])
        == []
    )


texts = st.lists(st.sampled_from(ALPHABET + UNSAFE), max_size=10).map("".join)
any_segment = st.builds(
    Segment,
    text=texts,
    kind=st.sampled_from([*KINDS, "bogus"]),
    layout=st.sampled_from([*LAYOUTS, "bogus"]),
    cites=st.lists(st.sampled_from(["P1", "P2", "P9"]), max_size=2).map(tuple),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(any_segment, max_size=8))
def test_random_segments_are_rejected_or_composed_exactly(segments: list[Segment]) -> None:
    problems = validate_segments(segments)
    if any(ch in seg.text for seg in segments for ch in UNSAFE):
        assert problems
    if problems:
        with pytest.raises(ValueError):
            compose(segments)
    else:
        check_invariants(compose(segments), segments)


safe_text = (
    st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=10).map("".join).map(str.strip).filter(bool)
)


@st.composite
def valid_documents(draw: st.DrawFn) -> list[Segment]:
    segments: list[Segment] = []
    for _ in range(draw(st.integers(1, 5))):
        block = draw(st.sampled_from(["paragraph", "heading", "list", "table"]))
        kind = draw(st.sampled_from(KINDS))
        if block in ("paragraph", "heading"):
            segments.append(Segment(draw(safe_text), kind, block))
            for _ in range(draw(st.integers(0, 2))):
                segments.append(Segment(draw(safe_text), "fact", "continue", ("P1",)))
        elif block == "list":
            for _ in range(draw(st.integers(1, 3))):
                segments.append(Segment(draw(safe_text), kind, "list_item"))
                if draw(st.booleans()):
                    segments.append(Segment(draw(safe_text), "fact", "continue"))
        else:
            n = draw(st.integers(1, 3))
            cell = safe_text.map(lambda t: t.replace("|", "¦").replace("\\", "/"))
            segments.append(Segment(" | ".join(draw(cell) for _ in range(n)), "framing", "table_header"))
            for _ in range(draw(st.integers(0, 3))):
                segments.append(
                    Segment(" | ".join(draw(cell) for _ in range(n)), "fact", "table_row", ("P2",))
                )
    return segments


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_documents())
def test_valid_documents_keep_exact_offsets_in_both_units(segments: list[Segment]) -> None:
    problems = validate_segments(segments)
    # A random text may still begin with a block marker ("# ", "- ", "1. "): that is a rejection.
    assume(not problems)
    composed = compose(segments)
    check_invariants(composed, segments)
    for span in composed.spans:
        if span.segment.layout == "table_row":
            header = next(s for s in reversed(segments[: span.index]) if s.layout == "table_header")
            assert span.context.endswith(header.text)
