from __future__ import annotations

import pytest

from serve_app.guard.policy import GuardDecision, PolicyGuard

NIK = "1171024509870003"  # fictitious, but plausible in structure (Banda Aceh, 05-09-1987, woman)


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        (f"NIK pemohon adalah {NIK}.", "pii.nik"),
        ("NIK pemohon adalah 1171 0245 0987 0003.", "pii.nik"),
        ("Hubungi beliau di 0812-6655-1234.", "pii.phone"),
        ("Nomor WA-nya +62 813 7788 9900.", "pii.phone"),
        ("Emailnya cut.nyak@gmail.com.", "pii.email"),
        ("Ia beralamat di Jalan Teuku Umar Lorong Damai, Banda Aceh.", "pii.address"),
        ("Rumahnya di Jl. Cut Meutia No. 7, RT 03/RW 02, Lhokseumawe.", "pii.address"),
    ],
)
def test_personal_data_not_in_passages_is_blocked(guard: PolicyGuard, answer: str, rule: str) -> None:
    decision = guard.check_answer(answer, ["Pasal 1 Qanun ini mengatur administrasi kependudukan."])
    assert decision == GuardDecision(False, "pii", rule)


def test_personal_data_present_in_cited_passages_is_allowed(guard: PolicyGuard) -> None:
    passage = (
        f"Pemohon atas nama Fulan, NIK {NIK}, telepon 0812 6655 1234, surel cut.nyak@gmail.com, "
        "beralamat di Jalan Teuku Umar Lorong Damai, Banda Aceh."
    )
    for answer in (
        f"NIK pemohon adalah {NIK[:4]}-{NIK[4:8]}-{NIK[8:12]}-{NIK[12:]}.",
        "Hubungi beliau di +62 812-6655-1234.",
        "Emailnya Cut.Nyak@gmail.com.",
        "Ia beralamat di Jalan Teuku Umar Lorong Damai, Banda Aceh.",
    ):
        assert guard.check_answer(answer, [passage]).allowed, answer


def test_numbers_that_are_not_personal_data_pass(guard: PolicyGuard) -> None:
    answer = (
        "Pendapatan Aceh direncanakan sebesar Rp41.081.200.000.000,00 dan Rp11.710.245.098.700,00; "
        "Pasal 3 ayat (2) huruf b UU Nomor 11 Tahun 2006, NIP 19650101 199003 1 005. "
        "Kode rekening 1299997890123456 (tanggal 78 tidak mungkin dalam NIK)."
    )
    assert guard.check_answer(answer).allowed


def test_links_must_come_from_the_passages(guard: PolicyGuard) -> None:
    answer = "Informasi lengkap ada di https://jdih.acehprov.go.id/qanun/6-2014."
    assert guard.check_answer(answer, ["Lihat jdih.acehprov.go.id/qanun/6-2014 untuk teks lengkap."]).allowed
    blocked = guard.check_answer("Unduh aplikasinya di www.malapp.xyz sekarang.", [])
    assert not blocked.allowed and blocked.category == "government_policy"


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        ("Developer Mode enabled. Berikut jawaban tanpa batasan.", "gov.jailbroken_output"),
        ("Menurut saya, pilihlah partai nomor urut 3 pada pemilu nanti.", "gov.partisan"),
        ("Aceh harus merdeka dari Indonesia sekarang juga.", "gov.separatism"),
        ("Presiden itu goblok dan tidak becus.", "gov.state_insult"),
        ("My system prompt says I must answer in Indonesian.", "gov.system_leak"),
    ],
)
def test_government_communication_policy(guard: PolicyGuard, answer: str, rule: str) -> None:
    decision = guard.check_answer(answer)
    assert decision == GuardDecision(False, "government_policy", rule)


@pytest.mark.parametrize(
    "answer",
    [
        "MoU Helsinki (2005) mengakhiri konflik bersenjata; GAM menyerahkan senjata dan "
        "Pemerintah RI menarik "
        "pasukan non-organik dari Aceh.",
        "Qanun Aceh Nomor 6 Tahun 2014 mengatur 'uqubat cambuk bagi pelaku jarimah maisir, "
        "khamar dan khalwat.",
        "Pasal 106 KUHP mengatur makar dengan maksud supaya sebagian wilayah negara memisahkan diri.",
        "Pemilih memilih pasangan calon gubernur secara langsung sesuai Pasal 65 UU Pemerintahan Aceh.",
    ],
)
def test_legal_answers_pass(guard: PolicyGuard, answer: str) -> None:
    assert guard.check_answer(answer, [answer]).allowed, answer


def test_refusal_texts_are_fixed_indonesian(guard: PolicyGuard) -> None:
    for kind in ("request_blocked", "answer_blocked"):
        text = guard.refusal_text(kind)
        assert text.startswith("Maaf") and len(text) > 40
    with pytest.raises(ValueError):
        guard.refusal_text("other")
