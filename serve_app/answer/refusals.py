"""The fixed Indonesian texts the service publishes instead of an answer (refusals, notices), written once.

A refusal carries no annotations; its text is a fixed system copy, never a model's or a server's message.
``policy_blocked`` texts belong to the Policy Guard (serve_app/guard/admission.py) and are not here.
"""

from __future__ import annotations

REFUSAL_TEXTS: dict[str, str] = {
    "source_scope_empty": (
        "Pilihan sumber untuk pertanyaan ini tidak memiliki dokumen yang terindeks atau tidak dapat Anda "
        "akses, sehingga pertanyaan ini tidak dijawab. Silakan pilih sumber lain."
    ),
    "query_budget_exhausted": (
        "Maaf, batas waktu atau jatah pemrosesan untuk pertanyaan ini sudah habis sebelum jawaban selesai "
        "disusun. Silakan ajukan pertanyaan yang lebih spesifik atau coba lagi."
    ),
    "model_timeout": (
        "Maaf, model bahasa tidak merespons dalam batas waktu, sehingga jawaban tidak dapat disusun. "
        "Silakan coba lagi beberapa saat lagi."
    ),
    "context_budget_exhausted": (
        "Bahan sumber yang dibutuhkan untuk pertanyaan ini tidak muat dalam konteks model, sehingga jawaban "
        "tidak disusun dan belum ada yang diperiksa. Persempit pertanyaan atau pilih lebih sedikit dokumen."
    ),
    "agent_output_limit": (
        "Maaf, jawaban untuk pertanyaan ini melampaui batas panjang keluaran sehingga tidak sempat "
        "diselesaikan. Silakan persempit pertanyaan Anda."
    ),
    "mcp_source_unavailable": (
        "Sumber data eksternal yang dibutuhkan untuk pertanyaan ini sedang tidak tersedia atau tidak "
        "diaktifkan, sehingga tidak ada angka yang disampaikan. Silakan coba lagi nanti."
    ),
    "source_out_of_scope": (
        "Dokumen yang dirujuk pertanyaan ini berada di luar sumber yang dipilih, sehingga tidak dibaca. "
        "Ubah pilihan sumber untuk menyertakannya."
    ),
    "source_scope_unavailable": (
        "Sumber yang dipilih saat ini tidak dapat dibaca, sehingga pertanyaan ini tidak dijawab. "
        "Silakan coba lagi nanti atau pilih sumber lain."
    ),
    "unparseable_completion": (
        "Maaf, sistem tidak dapat menyusun jawaban yang valid untuk pertanyaan ini. Silakan coba lagi "
        "atau ajukan pertanyaan dengan cara lain."
    ),
    # /query (v1) only: the faithfulness gate removed too many sentences to publish the rest.
    "insufficient_verified_claims": (
        "Maaf, sistem tidak dapat memverifikasi cukup banyak pernyataan dari sumber hasil pencarian, "
        "sehingga jawaban tidak ditampilkan. Gunakan /query/v2 untuk melihat jawaban beserta tandanya."
    ),
}

REFUSAL_REASONS: tuple[str, ...] = tuple(REFUSAL_TEXTS)

# Framing the agent writes when the passages it read do not answer the question.
NOT_FOUND_FRAMING = "Informasi tersebut tidak ditemukan dalam dokumen yang tersedia."
LEAD_IN_FRAMING = "Berikut yang tercantum dalam dokumen:"
SUMMARY_LEAD_IN = "Berikut pokok-pokok isi dokumen tersebut:"
GREETING_FRAMING = "Halo! Silakan ajukan pertanyaan tentang dokumen pemerintah yang tersedia."
# The same framings for a question asked in English (facts and quotes stay as the documents write them).
FRAMINGS_EN: dict[str, str] = {
    NOT_FOUND_FRAMING: "That information was not found in the available documents.",
    LEAD_IN_FRAMING: "Here is what the documents state:",
    SUMMARY_LEAD_IN: "The main points of the document:",
    GREETING_FRAMING: "Hello! Please ask a question about the available government documents.",
}


def framing_in(text: str, english: bool) -> str:
    """A fixed framing in the question's language (Indonesian unless the question is English)."""
    return FRAMINGS_EN.get(text, text) if english else text

# Honest notes of the optional external tools, shown to the agent and written as framing when it answers
# from other passages: a tool that is off or unreachable never yields a figure.
TOOL_NOTICES: dict[str, str] = {
    "open_data_disabled": "Pembacaan langsung portal Open Data tidak diaktifkan di server ini.",
    "open_data_unavailable": (
        "Portal Open Data sedang tidak dapat dihubungi, jadi tidak ada angka yang dibaca darinya."
    ),
    "bps_disabled": "Pembacaan langsung BPS WebAPI tidak diaktifkan di server ini.",
    "bps_unavailable": "BPS WebAPI sedang tidak dapat dihubungi, jadi tidak ada angka yang dibaca darinya.",
    "egress_denied": "Alamat sumber data eksternal tidak termasuk daftar izin server ini, jadi tidak dibaca.",
    "sql_unavailable": "Sumber data terstruktur (SQL) sedang tidak dapat dibaca.",
    "mcp_unavailable": (
        "Server MCP sumber data sedang tidak dapat dihubungi atau tidak menjawab tepat waktu, jadi tidak ada "
        "angka yang dibaca darinya."
    ),
}


def refusal_text(reason: str) -> str:
    """The fixed text of a loop-level or scope refusal. Raises KeyError for a reason that has none here."""
    try:
        return REFUSAL_TEXTS[reason]
    except KeyError:
        raise KeyError(f"no fixed refusal text for reason {reason!r}") from None
