"""General English words an English question uses for what Indonesian statutes say, and the English frame
words that say nothing of what is asked.

The bilingual lexicon (language.lexicon, language.bilingual) holds the terms of public finance and law;
an English question also uses everyday words ("from what date did it begin", "what money was put aside",
"the estimated amount") that the statutes write in their own words ("mulai ... pada tanggal", "dana",
"diperkirakan sebesar"). Without them every such word counted as an asked thing no passage states, and an
English question was refused "not found" beside the passage that answers it. General vocabulary only, never
the words of a particular document or question.
"""

from __future__ import annotations

GENERAL_ENGLISH: dict[str, tuple[str, ...]] = {
    # time
    "date": ("tanggal",),
    "begin": ("mulai",),
    "began": ("mulai",),
    "begins": ("mulai",),
    "start": ("mulai",),
    "started": ("mulai",),
    "starts": ("mulai",),
    "effective": ("berlaku",),
    "age": ("usia", "umur"),
    "retire": ("pensiun",),
    "retirement": ("pensiun",),
    # acting and running
    "run": ("menyelenggarakan", "beroperasi"),
    "running": ("menyelenggarakan", "beroperasi"),
    "operate": ("beroperasi", "menyelenggarakan"),
    "operating": ("beroperasi", "menyelenggarakan"),
    "operation": ("operasional", "penyelenggaraan"),
    "established": ("dibentuk", "didirikan"),
    "formed": ("dibentuk",),
    "appointed": ("diangkat",),
    "paid": ("dibayar", "dibayarkan"),
    "pay": ("membayar", "bayar"),
    "payment": ("pembayaran",),
    "levied": ("dikenakan", "dipungut"),
    "charged": ("dikenakan",),
    "declared": ("diungkapkan", "dilaporkan"),
    "reported": ("dilaporkan",),
    "held": ("dimiliki",),
    "owned": ("dimiliki",),
    "repatriated": ("dialihkan",),
    "filing": ("penyampaian",),
    "submission": ("penyampaian",),
    # money and amounts
    "money": ("uang", "dana"),
    "funds": ("dana",),
    "amount": ("jumlah", "sebesar", "besaran"),
    "total": ("jumlah", "total"),
    "sum": ("jumlah",),
    "value": ("nilai",),
    "face": ("nominal",),
    "estimated": ("diperkirakan",),
    "estimate": ("diperkirakan", "perkiraan"),
    "expected": ("diperkirakan",),
    "forecast": ("diperkirakan",),
    "projected": ("diperkirakan",),
    "planned": ("direncanakan",),
    "allocated": ("dialokasikan", "alokasi"),
    "budgeted": ("dianggarkan", "anggaran"),
    "tariff": ("tarif",),
    "redemption": ("tebusan",),
    "amnesty": ("pengampunan",),
    "insurance": ("jaminan", "asuransi"),
    "pension": ("pensiun",),
    "wage": ("upah",),
    "wages": ("upah",),
    "stamp": ("meterai",),
    "document": ("dokumen",),
    "documents": ("dokumen",),
    "receipt": ("kuitansi", "penerimaan"),
    # comparisons and limits
    "above": ("lebih", "melebihi"),
    "exceeding": ("lebih", "melebihi"),
    "exceeds": ("lebih", "melebihi"),
    "maximum": ("paling", "maksimal"),
    "minimum": ("paling", "minimal"),
    "least": ("paling", "sedikit"),
    "most": ("paling",),
    # law
    "rights": ("hak",),
    "obligation": ("kewajiban",),
    "obligations": ("kewajiban",),
    "authority": ("kewenangan", "otorita"),
    "powers": ("kewenangan", "wewenang"),
    "court": ("pengadilan",),
    "judge": ("hakim",),
    "teacher": ("guru",),
    "teachers": ("guru",),
    "lecturer": ("dosen",),
    "lecturers": ("dosen",),
    "professional": ("profesi", "profesional"),
    "profession": ("profesi",),
    "worker": ("pekerja",),
    "workers": ("pekerja",),
    "officials": ("pejabat",),
    "land": ("tanah",),
    "explanatory": ("penjelasan",),
    "elucidation": ("penjelasan",),
}

# Frame words of English questions: a verb or filler that carries the question, not the asked thing.
ENGLISH_FRAME = frozenset(
    "set aside become becomes such stating states stated say says said expect give given gave go put "
    "make made provide provided provides".split()
)
