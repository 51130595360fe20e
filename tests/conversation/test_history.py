"""Later turns see only verified text of earlier answers (CONTRACT.md "Conversations")."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from serve_app.conversation.exchange import Exchange
from serve_app.conversation.history import (
    NO_VERIFIED_NOTE,
    from_conversation_texts,
    memory_items,
    model_history,
    preferred_documents,
    single_referenced_document,
)
from serve_app.conversation.store import Store

VERDICTS = ["supported", "unsupported", "unverified", "uncited", "invalid_citation", "from_conversation"]


def citation(
    doc: str, *, title: str = "", year: int | None = None, number: str | None = None
) -> dict[str, Any]:
    cited = {"document_id": doc, "document_title": title or f"Dokumen {doc}", "document_year": year,
             "document_number": number}
    return {"citation_key": f"P-{doc}", "citation": cited}


def v2_answer(
    segments: list[tuple[str, str, list[dict[str, Any]]]], *, fallback: bool = False
) -> dict[str, Any]:
    """segments: (kind-or-verdict, text, citations); kind "framing" makes a framing span."""
    answer, claims, framing = "", [], []
    for n, (verdict, text, cites) in enumerate(segments):
        start = len(answer) + (1 if answer else 0)
        answer = f"{answer} {text}" if answer else text
        layout = "paragraph" if n == 0 else "continue"
        span = {"text": text, "start": start, "end": start + len(text), "layout": layout}
        if verdict == "framing":
            framing.append(span)
        else:
            claims.append({**span, "verdict": verdict, "citations": cites, "kind": "fact"})
    return {"schema": "annotate-v2", "answer": answer, "claims": claims, "framing": framing,
            "fallback_used": fallback}


def turn(user: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": body["answer"], "body": body}]


PARTIAL = v2_answer([
    ("framing", "Berikut datanya.", []),
    ("supported", "Anggaran pendidikan 2023 adalah Rp 5 miliar.", [citation("qanun-2023", year=2023)]),
    ("unsupported", "Naik 9 persen dari 2022.", [citation("qanun-2022", year=2022)]),
])
NOTHING_VERIFIED = v2_answer([
    ("framing", "Menurut dokumen,", []),
    ("unverified", "jumlah penduduk 5,4 juta jiwa.", [citation("bps")]),
])


def test_history_keeps_only_verified_segments() -> None:
    view = model_history(turn("Berapa anggaran pendidikan?", PARTIAL), max_exchanges=6)
    assert view.turns == [
        {"role": "user", "content": "Berapa anggaran pendidikan?"},
        {"role": "assistant", "content": "Berikut datanya. Anggaran pendidikan 2023 adalah Rp 5 miliar."},
    ]
    assert not view.truncated and view.exchanges_in_view == 1


def test_answer_without_verified_statement_is_quoted_whole_after_the_note() -> None:
    view = model_history(turn("Berapa penduduk Aceh?", NOTHING_VERIFIED), max_exchanges=6)
    assert view.turns[1]["content"] == f"{NO_VERIFIED_NOTE}\n\n{NOTHING_VERIFIED['answer']}"
    refusal = v2_answer([], fallback=True) | {"answer": "Maaf, sumber yang dipilih kosong."}
    assert model_history(turn("q", refusal), max_exchanges=6).turns[1]["content"].startswith(NO_VERIFIED_NOTE)


def test_conversation_repeats_stay_and_v1_answers_are_whole() -> None:
    body = v2_answer([("from_conversation", "Anda menyebut tahun 2023.", []),
                      ("supported", "Anggarannya Rp 5 miliar.", [citation("a")]),
                      ("uncited", "Itu naik tajam.", [])])
    v1 = {"answer": "Kalimat terverifikasi.", "claim_map": [{"text": "Kalimat terverifikasi."}]}
    view = model_history(turn("q1", body) + turn("q2", v1), max_exchanges=6)
    assert view.turns[1]["content"] == "Anda menyebut tahun 2023. Anggarannya Rp 5 miliar."
    assert view.turns[3]["content"] == "Kalimat terverifikasi."


def test_history_window_and_truncation() -> None:
    messages = turn("q1", PARTIAL) + turn("q2", NOTHING_VERIFIED) + turn("q3", PARTIAL)
    view = model_history(messages, max_exchanges=2)
    assert view.truncated and view.exchanges_in_view == 2
    assert [t["content"] for t in view.turns if t["role"] == "user"] == ["q2", "q3"]
    assert model_history(messages, max_exchanges=0).turns == []
    assert model_history([], max_exchanges=3) == model_history([], max_exchanges=3)
    assert not model_history([], max_exchanges=3).truncated


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(VERDICTS + ["framing"]), min_size=1, max_size=8))
def test_no_unverified_claim_text_ever_reaches_the_model(kinds: list[str]) -> None:
    body = v2_answer([(k, f"segmen{n}{k}.", []) for n, k in enumerate(kinds)])
    content = model_history(turn("q", body), max_exchanges=1).turns[1]["content"]
    if "supported" not in kinds:
        assert content.startswith(NO_VERIFIED_NOTE)
        return
    for n, kind in enumerate(kinds):
        visible = kind in ("supported", "from_conversation", "framing")
        assert (f"segmen{n}{kind}." in content) == visible
    assert memory_items(body) == [f"segmen{n}supported." for n, k in enumerate(kinds) if k == "supported"]


def test_memory_uses_supported_claims_only() -> None:
    assert memory_items(PARTIAL) == ["Anggaran pendidikan 2023 adalah Rp 5 miliar."]
    assert memory_items(NOTHING_VERIFIED) == []
    assert memory_items(PARTIAL | {"fallback_used": True}) == []
    assert memory_items({"answer": "A. B.", "claim_map": [{"text": "A."}, {"text": "B."}]}) == ["A.", "B."]


def test_preferred_documents_come_from_supported_claims_of_the_previous_answer() -> None:
    docs = [citation(f"d{n}", year=2015 + n) for n in range(8)]
    body = v2_answer([("supported", f"Klaim {n}.", [docs[n]]) for n in range(8)]
                     + [("unsupported", "Klaim lain.", [citation("tidak-didukung", year=2030)])])
    older = v2_answer([("supported", "Lama.", [citation("lama", year=2029)])])
    assert preferred_documents(turn("q1", older) + turn("q2", body)) == ["d7", "d6", "d5", "d4", "d3", "d2"]
    assert preferred_documents(turn("q", PARTIAL)) == ["qanun-2023"]
    assert preferred_documents(turn("q", NOTHING_VERIFIED)) == []
    assert preferred_documents([]) == []


def test_single_referenced_document() -> None:
    one = turn("Anggaran?", PARTIAL)
    assert single_referenced_document(one, "Apa isi dokumen tersebut?") == "qanun-2023"
    assert single_referenced_document(one, "Bagaimana dengan kesehatan?") is None
    # The unsupported claim's document does not count as referred to.
    assert single_referenced_document(turn("q", NOTHING_VERIFIED), "Apa isinya?") is None
    two = v2_answer([
        ("supported", "A.", [citation("qa", title="Qanun Aceh tentang Pendidikan", year=2023, number="5")]),
        ("supported", "B.", [citation("pp", title="Peraturan Gubernur Kesehatan", year=2021, number="12")]),
    ])
    assert single_referenced_document(turn("q", two), "Apa isi dokumen tersebut?") is None
    assert single_referenced_document(turn("q", two), "Ringkas qanun aceh tentang pendidikan") == "qa"
    assert single_referenced_document(turn("q", two), "Pergub nomor 12 tahun 2021 mengatur apa?") == "pp"
    assert single_referenced_document(turn("q", two), "Pergub nomor 12 tahun 2020 mengatur apa?") is None


def test_from_conversation_texts_are_user_words_and_verified_statements() -> None:
    messages = turn("Anggaran 2023 Rp 5 miliar, benar?", PARTIAL) + turn("Dan penduduk?", NOTHING_VERIFIED)
    texts = from_conversation_texts(messages, "Jadi naik berapa?")
    assert texts == ["Anggaran 2023 Rp 5 miliar, benar?", "Anggaran pendidikan 2023 adalah Rp 5 miliar.",
                     "Dan penduduk?", "Jadi naik berapa?"]


def test_history_reads_stored_messages(store: Store) -> None:
    cid = store.create_conversation("o")["conversation_id"]
    store.append_exchange(Exchange(
        cid, "o", "v2", "Berapa anggaran pendidikan?", PARTIAL, memory_items(PARTIAL)
    ))
    messages = store.list_messages(cid)
    assert model_history(messages, max_exchanges=6).turns[1]["content"] == (
        "Berikut datanya. Anggaran pendidikan 2023 adalah Rp 5 miliar.")
    assert preferred_documents(messages) == ["qanun-2023"]
    assert [m["text"] for m in store.list_memory("o")] == ["Anggaran pendidikan 2023 adalah Rp 5 miliar."]
