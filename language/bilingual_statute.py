"""More general statute vocabulary for the bilingual lexicon (language.bilingual, same table format and rule:
every Indonesian side stands in at least three statutes of ``indo_legal_corpus``, checked by
tests/language/test_bilingual.py). The English side follows the renderings of the government's official
statute translations and the Ministry of Finance's English budget reports, as in language.bilingual; kept
apart so that module stays small."""

from __future__ import annotations

# Names of things a statute or budget counts or governs.
STATUTE_TABLE = """
arus kas : cash flow; cash flows
arus kas bersih : net cash flow; net cash flows
aktivitas operasi : operating activities; operations
aktivitas investasi : investing activities; investment activities
aktivitas pendanaan : financing activities
pendanaan : financing; funding
kampanye : campaign; campaigning
pelaksana kampanye : campaigner; campaigners; campaign executor
kurungan : detention; confinement
pidana kurungan : detention; imprisonment in detention
penjara : prison; imprisonment
suara sah : valid votes; valid vote
suara : vote; votes
kursi : seats; seat
pasangan calon : candidate pair; candidate pairs
pejabat : official; officials
kinerja : performance
jabatan : position; post; office
jabatan pimpinan tinggi : top executive post; high leadership position
kecelakaan : accident; accidents
pengemudi : driver; drivers
sepeda motor : motorcycle; motorcycles
siang hari : daytime; during the day
profesor : professor; professors
batas usia pensiun : retirement age
bayi : baby; babies
air susu ibu : breastfeeding; breast milk
kepala desa : village head; village heads
masa jabatan : term of office; term
pelantikan : installation; inauguration
tanggungan : dependant; dependants; dependent
keluarga : family; families
anggota keluarga : family member; family members
penumpang : passenger; passengers
karcis : ticket; tickets
harga : price; prices
wajib belajar : compulsory education
pendidikan dasar : basic education
warga negara : citizen; citizens
rokok : cigarette; cigarettes
pajak rokok : cigarette tax
penghasilan kena pajak : taxable income
orang pribadi : individual; individuals
peredaran bruto : gross turnover; gross revenue
"""

# Verbs and qualifiers: translated, but no names of a term (a claim may restate them in other words).
STATUTE_GENERAL_TABLE = """
dipidana : punishable; punished; sentenced
meninggal dunia : dies; died; death
sengaja : deliberately; intentionally
mengganggu : disrupt; disrupts; disturb
memperbaiki : improve; improves; repair
diperpanjang : extended; prolonged
pengembalian : refund; return; reimbursement
membatalkan : cancel; cancels; cancelled
dikurangi : minus; less; reduced; deducted
"""
