"""The reference web client in a real browser: Debian's chromium driven by Playwright against the running
service (the in-process app on uvicorn). States the demo corpus cannot produce (every verdict at once, non-BMP
text, a stream cut short) are contract-valid streams built by ``ui_streams`` and served through Playwright's
request routing; everything else is the real service. A screenshot per state goes to
``.aceh/test-artifacts/ui/`` for review."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Request, Route, expect, sync_playwright

from serve_app.errors import NothingReadable
from serve_app.runtime import factory
from serve_app.wire.sse import error_frame, event_frame
from tests.conftest import API_KEY, REPO
from tests.contract.checks import parse_sse
from tests.contract.stream_checks import assert_v2_stream
from tests.contract.test_errors import JAILBREAK
from tests.support.net import serving
from tests.support.service import BUDGET_QUESTION, config
from tests.wire.ui_streams import Piece, build

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / ".aceh" / "test-artifacts" / "ui"
FINISHED = re.compile(r"^(Selesai|Berhenti|Gagal)\.$")


@pytest.fixture(scope="module")
def service(demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    cfg = config(tmp_path_factory.mktemp("ui"), demo_index)
    with serving(factory.build_inprocess_app(cfg, retriever=demo_retriever)) as base:
        yield base


@pytest.fixture(scope="module")
def limited_service(
    demo_index: Path, demo_retriever: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The same service allowing one request a minute per key: the second question gets a real 429."""
    cfg = config(tmp_path_factory.mktemp("ui-limited"), demo_index, limits={"requests_per_minute": 1})
    with serving(factory.build_inprocess_app(cfg, retriever=demo_retriever)) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():  # never a skip: `make test` installs it, and CI must run these
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium (make chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    """A fresh tab (its own sessionStorage). Uncaught script errors and CSP violations fail the test."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on(
        "console",
        lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None,
    )
    yield page
    context.close()
    assert not problems, problems


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _open(page: Page, base: str, key: str = API_KEY) -> None:
    page.goto(f"{base}/ui/")
    expect(page.locator("html")).to_have_attribute("data-ready", "true")
    page.fill("#api-key", key)
    page.click("#cred-save")


def _ask(page: Page, question: str) -> Any:
    """Asks through the form (Enter in the question field); the turn's locator once it finished."""
    turns = page.locator(".turn")
    before = turns.count()
    page.fill("#question", question)
    page.press("#question", "Enter")
    turn = turns.nth(before)
    expect(turn.locator(".status")).to_have_text(FINISHED, timeout=60_000)
    return turn


def _stream(page: Page, body: str) -> None:
    """Serves ``body`` as the next /query/v2/stream responses (the connection closes at its end)."""

    def fulfil(route: Route) -> None:
        route.fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=body)

    page.route("**/query/v2/stream", fulfil)


# ------------------------------------------------------------------ constructed answers

P1 = (
    "Pasal 6\n\n(1) Belanja urusan pendidikan 𝔸 ditetapkan sebesar Rp871.667.219.294.\n"
    "(2) Belanja kesehatan sebesar Rp612.384.905.118."
)
P2 = "Realisasi belanja urusan pendidikan sebesar Rp822.592.351.730 atau 94,37 persen dari pagu."
SUPPORTED = "Belanja 𝔸 pendidikan ditetapkan Rp871.667.219.294."
UNSUPPORTED = "Belanja kesehatan 📈 sebesar Rp612 miliar."
DISPUTED = "Realisasinya 94,37 persen."
UNCITED = "Anggaran naik setiap tahun."
INVALID = "Pagu totalnya Rp4,34 triliun."
FROM_CONVERSATION = "Anda menyebut tinggal di Banda Aceh 🏠."
FRAMING = "Ringkasan 🙂 anggaran:"
UNCOVERED = "Catatan 𝔹 tanpa rentang."
PIECES = [
    Piece(FRAMING, "framing"),
    Piece(" "),
    Piece(SUPPORTED, "fact", "supported", ("P1",), layout="continue"),
    Piece(" "),
    Piece(UNSUPPORTED, "fact", "unsupported", ("P1",), layout="continue"),
    Piece("\n\n- "),
    Piece(DISPUTED, "fact", "unverified", ("P2",), reason="disputed", layout="list_item"),
    Piece("\n- "),
    Piece(UNCITED, "fact", "uncited", layout="list_item"),
    Piece("\n- "),
    Piece(INVALID, "fact", "invalid_citation", ("P7",), invalid=("P7",), layout="list_item"),
    Piece("\n\n"),
    Piece(FROM_CONVERSATION, "fact", "from_conversation"),
    Piece(" "),
    Piece(UNCOVERED, "uncovered"),
]
CLAIM_TEXTS = [SUPPORTED, UNSUPPORTED, DISPUTED, UNCITED, INVALID, FROM_CONVERSATION]


def _claim(turn: Any, index: int) -> Any:
    return turn.locator(f'.mark[data-claim="{index}"]')


# ------------------------------------------------------------------ the real service


def test_a_fully_verified_answer_and_its_passage(page: Page, service: str) -> None:
    _open(page, service)
    turn = _ask(page, BUDGET_QUESTION)
    expect(turn.locator(".status")).to_have_text("Selesai.")
    verified = turn.locator(".mark-ok")
    expect(verified.first).to_be_visible()
    expect(turn.locator(".badge-ok").first).to_have_text("terverifikasi")
    expect(turn.locator(".banner")).to_be_hidden()  # verification "full": the only state without a banner
    expect(turn.locator(".answer")).to_have_attribute("aria-live", "polite")
    assert "871.667.219.294" in verified.all_inner_texts()[-1]
    _shot(page, "01-verified")
    chip = turn.locator("button.chip").first
    chip.click()
    dialog = page.locator("#passage")
    expect(dialog).to_be_visible()
    expect(dialog.locator("mark").first).to_have_text(re.compile(r"871\.667\.219\.294"))
    expect(page.locator("#passage-close")).to_be_focused()
    # opened through GET /documents/{id}/passages/{chunk_id} with the page's key: the reader's context
    expect(page.locator("#passage-context")).to_have_text(re.compile(r"^Konteks: \S"))
    expect(page.locator("#passage-after")).not_to_be_empty()
    _shot(page, "02-passage")
    page.click("#passage-close")
    expect(dialog).to_be_hidden()
    expect(chip).to_be_focused()


def test_an_answer_with_nothing_verified_shows_the_banner(page: Page, service: str) -> None:
    _open(page, service)
    turn = _ask(page, "Halo")
    expect(turn.locator(".banner")).to_be_visible()
    expect(turn.locator(".banner")).to_contain_text("belum terverifikasi")
    expect(turn.locator(".mark-ok")).to_have_count(0)
    expect(turn.locator(".answer")).not_to_be_empty()
    _shot(page, "03-nothing-verified")


def test_a_policy_block(page: Page, service: str) -> None:
    _open(page, service)
    turn = _ask(page, JAILBREAK)
    expect(turn.locator(".notice")).to_contain_text("Penolakan: diblokir oleh Policy Guard")
    expect(turn.locator(".banner")).to_be_visible()  # fallback_used is no trust signal either way
    expect(turn.locator(".mark-ok")).to_have_count(0)
    expect(turn.locator(".uncovered")).not_to_have_count(0)  # the refusal text: "belum diverifikasi"
    expect(turn.locator(".badge-warn").first).to_have_text("belum diverifikasi")
    _shot(page, "04-policy-blocked")


def test_a_429_shows_the_wait_from_retry_after(page: Page, limited_service: str) -> None:
    _open(page, limited_service)
    _ask(page, "Halo")
    turn = _ask(page, "Halo lagi")
    notice = turn.locator(".notice")
    expect(notice).to_contain_text("Galat 429")
    text = notice.inner_text()
    wait = re.search(r"Coba lagi dalam (\d+) detik", text)
    assert wait is not None and 1 <= int(wait.group(1)) <= 60, text
    expect(page.locator("#ask")).to_be_disabled()
    expect(page.locator("#ask")).to_have_text(re.compile(r"^Tunggu \d+ detik$"))
    _shot(page, "05-rate-limited")


def test_a_refused_key_is_said_plainly(page: Page, service: str) -> None:
    _open(page, service, key="kunci-salah")
    turn = _ask(page, BUDGET_QUESTION)
    expect(turn.locator(".notice")).to_have_text("Galat 401: Kredensial tidak valid.")
    expect(page.locator("#api-key")).to_be_focused()


def test_keyboard_only_ask_open_a_source_and_continue_the_conversation(page: Page, service: str) -> None:
    sent: list[dict[str, Any]] = []

    def record(request: Request) -> None:
        if request.url.endswith("/query/v2/stream"):
            sent.append(request.post_data_json or {})

    page.on("request", record)
    page.goto(f"{service}/ui/")
    expect(page.locator("html")).to_have_attribute("data-ready", "true")
    page.keyboard.press("Tab")
    expect(page.locator("#api-key")).to_be_focused()
    page.keyboard.type(API_KEY)
    page.keyboard.press("Enter")  # saves the key and moves to the question
    expect(page.locator("#question")).to_be_focused()
    page.keyboard.type(BUDGET_QUESTION)
    page.keyboard.press("Enter")
    first = page.locator(".turn").nth(0)
    expect(first.locator(".status")).to_have_text("Selesai.", timeout=60_000)
    expect(page.locator("#question")).to_be_focused()
    for _ in range(3):  # Tanya, Percakapan baru, then the first citation chip
        page.keyboard.press("Tab")
    chip = first.locator("button.chip").first
    expect(chip).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#passage")).to_be_visible()
    expect(page.locator("#passage-close")).to_be_focused()
    _shot(page, "06-keyboard-passage")
    page.keyboard.press("Enter")
    expect(page.locator("#passage")).to_be_hidden()
    # the dialog's "close" event (a queued task) gives the chip its focus back: keys pressed before it ran
    # were undone by it (a fresh-clone CI run saw focus jump back after the first Shift+Tab)
    page.wait_for_function("() => document.getElementById('passage').opener === null")
    expect(chip).to_be_focused()
    for _ in range(3):
        page.keyboard.press("Shift+Tab")
    expect(page.locator("#question")).to_be_focused()
    page.keyboard.type("Bagaimana dengan tahun 2024?")
    page.keyboard.press("Enter")
    second = page.locator(".turn").nth(1)
    expect(second.locator(".status")).to_have_text("Selesai.", timeout=60_000)
    expect(page.locator(".turn")).to_have_count(2)  # continued in place, under the first turn
    assert "conversation_id" not in sent[0]
    conversation = sent[1].get("conversation_id")
    assert conversation and page.locator("#conversation").inner_text().startswith(
        f"Percakapan {conversation[:8]}"
    )
    _shot(page, "07-conversation")


# ------------------------------------------------------------------ constructed streams


def test_every_verdict_with_non_bmp_text(page: Page, service: str) -> None:
    built = build(PIECES, {"P1": P1, "P2": P2})
    _open(page, service)
    _stream(page, built.body)
    turn = _ask(page, "Ringkas anggaran pendidikan dan kesehatan.")
    # UTF-16 offsets sliced directly: each mark holds exactly its claim, after emoji and 𝔸 alike
    for index, text in enumerate(CLAIM_TEXTS):
        expect(_claim(turn, index)).to_have_text(text)
    expect(turn.locator(".mark-ok")).to_have_count(1)
    expect(_claim(turn, 0)).to_have_class(re.compile(r"\bmark-ok\b"))
    for index in range(1, 5):
        expect(_claim(turn, index)).to_have_class(re.compile(r"\bmark-warn\b"))
    expect(_claim(turn, 5)).to_have_class(re.compile(r"\bmark-conv\b"))
    badges = turn.locator(".badge").all_inner_texts()
    assert badges == [
        "terverifikasi",
        "belum diverifikasi · tidak didukung sumber",
        "belum diverifikasi · penilaian diperdebatkan",
        "belum diverifikasi · tanpa sumber",
        "belum diverifikasi · sitasinya tidak dapat diselesaikan",
        "dari percakapan, bukan dokumen",
        "belum diverifikasi",  # the uncovered text
    ], badges
    expect(turn.locator(".uncovered")).to_have_text(UNCOVERED)
    paragraph = turn.locator(".answer p").first
    assert paragraph.inner_text().startswith(FRAMING)  # framing: plain text, no mark of its own
    expect(turn.locator(".mark", has_text="Ringkasan")).to_have_count(0)
    expect(turn.locator(".banner")).to_contain_text("1 dari 5 pernyataan terverifikasi")
    expect(turn.locator("button.chip:not(.chip-weak)")).to_have_count(1)  # only the supported claim's chip
    expect(turn.locator(".chip-invalid")).to_have_text("P7 (tidak valid)")
    _shot(page, "08-every-verdict-non-bmp")
    turn.locator("button.chip").first.click()
    expect(page.locator("#passage-text mark")).to_have_text("871.667.219.294")
    expect(page.locator("#passage-text")).to_contain_text("pendidikan 𝔸 ditetapkan")
    _shot(page, "09-passage-non-bmp")


def test_a_stream_cut_before_annotations_is_wholly_unverified(page: Page, service: str) -> None:
    built = build(PIECES, {"P1": P1, "P2": P2})
    _open(page, service)
    _stream(page, built.cut_before("annotations"))
    turn = _ask(page, "Ringkas anggaran.")
    expect(turn.locator(".status")).to_have_text("Berhenti.")
    banner = turn.locator(".banner")
    expect(banner).to_contain_text("tanda verifikasi tidak diterima")
    expect(banner).to_contain_text("terputus")
    expect(turn.locator(".mark-ok")).to_have_count(0)
    _shot(page, "10-cut-before-annotations")


def test_text_without_its_annotations_frame_is_wholly_unverified(page: Page, service: str) -> None:
    """A stream that lost its annotations frame (a faulty proxy) but carries text: all of it unverified."""
    built = build(PIECES, {"P1": P1, "P2": P2})
    body = "".join(f for f in built.frames if not f.startswith("event: annotations\n"))
    _open(page, service)
    _stream(page, body)
    turn = _ask(page, "Ringkas anggaran.")
    expect(turn.locator(".mark-ok")).to_have_count(0)
    expect(turn.locator(".badge-ok")).to_have_count(0)
    expect(turn.locator("button.chip")).to_have_count(0)
    joined = "".join(turn.locator(".uncovered").all_inner_texts())
    for text in (SUPPORTED, FRAMING, UNCOVERED):
        assert text in joined
    expect(turn.locator(".banner")).to_contain_text("tanda verifikasi tidak diterima")
    _shot(page, "11-no-annotations")


def test_a_stream_cut_mid_answer_keeps_only_whole_claims(page: Page, service: str) -> None:
    built = build(PIECES, {"P1": P1, "P2": P2})
    received = 80  # code points in the first two answer.delta frames (40 each)
    assert (
        built.answer.index(SUPPORTED) + len(SUPPORTED)
        <= received
        < built.answer.index(UNSUPPORTED) + len(UNSUPPORTED)
    )
    _open(page, service)
    _stream(page, built.cut_before("answer.delta", nth=3))
    turn = _ask(page, "Ringkas anggaran.")
    expect(_claim(turn, 0)).to_have_text(SUPPORTED)
    expect(turn.locator(".mark-ok")).to_have_count(1)
    expect(_claim(turn, 1)).to_have_count(0)  # its head arrived, its end did not: no verdict shown on it
    expect(turn.locator(".uncovered")).to_have_text(built.answer[built.answer.index(UNSUPPORTED) : received])
    expect(turn.locator(".banner")).to_contain_text("terputus")
    _shot(page, "12-cut-mid-answer")


def test_another_schema_is_wholly_unverified(page: Page, service: str) -> None:
    built = build(PIECES, {"P1": P1, "P2": P2})
    body = built.body.replace('"schema":"annotate-v2"', '"schema":"annotate-v3"', 1)
    assert body != built.body
    _open(page, service)
    _stream(page, body)
    turn = _ask(page, "Ringkas anggaran.")
    expect(turn.locator(".mark-ok")).to_have_count(0)
    expect(turn.locator(".banner")).to_contain_text("kontraknya bukan annotate-v2")
    _shot(page, "13-other-schema")


def test_an_error_frame_after_the_tools_is_said_plainly(page: Page, service: str) -> None:
    body = "".join(
        [
            event_frame("tool.started", {"call_id": "a1", "tool": "search", "arguments": {"query": "x"}}),
            event_frame(
                "tool.finished",
                {
                    "call_id": "a1",
                    "tool": "search",
                    "status": "error",
                    "result_count": 0,
                    "duration_ms": 1.0,
                },
            ),
            error_frame(404, "not_found", str(NothingReadable.detail)),
        ]
    )
    assert_v2_stream(parse_sse(body))
    _open(page, service)
    _stream(page, body)
    turn = _ask(page, "Ringkas anggaran.")
    expect(turn.locator(".notice")).to_have_text(f"Galat 404: {NothingReadable.detail}")
    expect(turn.locator(".banner")).to_contain_text("tanda verifikasi tidak diterima")
    _shot(page, "14-error-frame")


def test_figures_are_found_again_written_another_way(page: Page, service: str) -> None:
    """The passage highlight: the same value with a scale word or in full, not a neighbouring one."""
    page.goto(f"{service}/ui/")
    found = page.evaluate(
        """async () => {
            const { highlightRanges } = await import("./figures.js");
            const passage = "sebesar Rp871.667.219.294 dan Rp871.700.000.000 pada 2023";
            const show = (claim) => highlightRanges(claim, passage).map((r) => passage.slice(r.start, r.end));
            const claims = ["Rp871,67 miliar", "Rp871.667.219.294", "tahun 2023", "tanpa angka"];
            return claims.map(show);
        }"""
    )
    assert found == [["871.667.219.294"], ["871.667.219.294"], ["2023"], []]
