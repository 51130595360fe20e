"""More general statute vocabulary for the bilingual lexicon (language.bilingual, same table format and rule:
every Indonesian side stands in at least three statutes of ``indo_legal_corpus``, checked by
tests/language/test_bilingual.py); kept apart so that module stays small. It also holds ``GLOSSARIES``, the
public sources a lexicon line names: an English side that stands in a development item names one."""

from __future__ import annotations

# The public glossaries an entry may name (a trailing "# KEY" on its line), each as its page gives its title.
# An English side that stands in a development claim needs one (tests/language/test_lexicon_glossary.py).
GLOSSARIES: dict[str, str] = {
    # APBD as "Regional Revenue and Expenditure Budget", "a regional budget plan"
    "ENGLISHDBS": 'EnglishDBS, "APBD: Anggaran Pendapatan dan Belanja Daerah", '
    "https://www.englishdbs.com/abbreviation/1314976",
    # the Balancing Fund: Revenue Sharing Funds (DBH), General (DAU) and Special (DAK) Allocation Funds
    "JOSES": 'Setiawan et al., "Menganalisis Balanced Budget (Dana Perimbangan)", JOSES (Universitas '
    'Malikussaleh), https://ojs.unimal.ac.id/index.php/joses/article/view/16269/0',
    # Indonesian budget terms with their English: APBN state budget, APBD local government budget, revised
    # budget, social aid
    "FITRA": 'Seknas FITRA, "Istilah Anggaran", https://seknasfitra.org/analisis/istilah-anggaran/',
    # revenue, taxes, grants, expenditure, subsidies, interest, debt, financing, cash flows, gross and net
    "GFSM": "IMF, Government Finance Statistics Manual 2014, "
    "https://www.elibrary.imf.org/display/book/9781498343763/front-1.xml",
    # Seknas FITRA's English budget brief: Shared Revenue Fund (DBH), Regional Fiscal Balance Funding
    "FITRABRIEF": 'Seknas FITRA, "Translation of budget brief dana perimbangan 2", '
    "https://text-id.123dok.com/document/y6jr4poq-translation-of-budget-brief-dana-perimbangan-2.html",
    # own-source revenue, General Allocation Fund (DAU), Special Allocation Fund (DAK)
    "WB": "World Bank figures as tabled in PMC2678112, Table 2, "
    "https://pmc.ncbi.nlm.nih.gov/articles/PMC2678112/table/T2",
    # the Directorate General of Taxes' English tax terms: appeal, tax objection, taxpayer identification
    "DJP": 'Forum Pajak, "Padan Kata Istilah Pajak dalam Bahasa Inggris" (list of the Directorate General of '
    "Taxes), https://forumpajak.org/padan-kata-istilah-pajak-dalam-bahasa-inggris",
    # import duty, export duty, stamp duty, excise, customs duties, tax base
    "TAXDUTY": 'Yaminhi, "Istilah Pajak dan Bea (Terms Used in Tax and Duty)", '
    "https://www.yaminhi.com/istilah-pajak-dan-bea-terms-used-in-tax-and-duty/",
    # income tax, value added tax, taxable income, individual income tax, state treasury, tax return
    "AKSARA": 'Aksara, "Istilah Pajak Indonesia-Inggris", http://aksara.org/blog/istilah-pajak-indonesia-inggris',
    # Act/Law, Government Regulation, Presidential Decree, Article, A Bill, Amendment, Income Tax, VAT
    "LEGAL": '"Law Vocabulary: The Translation of Popular Legal Terms in English and Indonesian", '
    "https://www.scribd.com/document/547815898/Law-Vocabulary",
    # an English translation of UU 13/2003: manpower, workers, central and regional government, protection,
    # administrative sanctions, criminal and transitional provisions
    "MANPOWER": 'English translation of UU 13/2003, "Law Number 13/2003 concerning Manpower", '
    "https://studylib.net/doc/7282039/-bkpm-",
    # an English translation of UU 21/2001: special autonomy
    "PAPUA": 'English translation of UU 21/2001, "Law No. 21 of 2001 on Special Autonomy for Papua '
    'Province", '
    "https://text-id.123dok.com/document/qo37vjjq-produkhukum-perdagangan-l21.html",
    # the Cabinet Secretariat's English pages: special autonomy fund
    "SETKAB": 'Cabinet Secretariat, "Law on Special Autonomy in Papua is Commitment to Bring Welfare for '
    'People: Minister", '
    "https://setkab.go.id/en/law-on-special-autonomy-in-papua-is-commitment-to-bring-welfare-for-people-minister",
    # an English translation of UU 11/2016: tax amnesty, assets, tax revenues, administrative sanction
    "AMNESTY": 'English translation of UU 11/2016, "Law on Tax Amnesty 2016", '
    "https://text-id.123dok.com/document/q06x5p9q-law-on-tax-amnesty-2016.html",
    # a report naming Dana Desa in English: village fund
    "CPI": "Climate Policy Initiative, Indonesia's Village Fund: An Important Lever for Better Land Use and "
    "Economic Growth at the Local Level (2018), "
    "https://vdocuments.mx/indonesia-s-village-fund-an-important-lever-for-better-development-plans.html",
    # a treasurers' glossary: reference rate (the quoted interest rate other rates are set by)
    "ACT": 'ACT Wiki (Association of Corporate Treasurers), "Reference rate", '
    "https://wiki.treasurers.org/wiki/Reference_rate",
    # the standard Indonesian-English dictionary (Cornell University Press), for a word's first sense; the
    # address is a page that describes it
    "DICT": "J. M. Echols and H. Shadily, An Indonesian-English Dictionary, described at "
    "https://sastralingua.co.id/siapa-penemu-kamus-bahasa-inggris-indonesia",
}

# Names of things a statute or budget counts or governs.
STATUTE_TABLE = """
arus kas : cash flow; cash flows  # GFSM
arus kas bersih : net cash flow; net cash flows  # GFSM
aktivitas operasi : operating activities; operations  # GFSM
aktivitas investasi : investing activities; investment activities
aktivitas pendanaan : financing activities  # GFSM
pendanaan : financing; funding  # GFSM
kampanye : campaign; campaigning  # DICT
kurungan : confinement  # DICT
pidana kurungan : imprisonment in detention
penjara : prison; imprisonment  # DICT
suara sah : valid votes; valid vote  # DICT
suara : vote; votes  # DICT
kursi : seats; seat  # DICT
pejabat : official; officials  # DICT
kinerja : performance  # DICT
jabatan : position; post; office  # DICT
jabatan pimpinan tinggi : high leadership position
kecelakaan : accident; accidents  # DICT
pengemudi : driver; drivers  # DICT
sepeda motor : motorcycle; motorcycles  # DICT
siang hari : daytime; during the day  # DICT
profesor : professor; professors  # DICT
batas usia pensiun : retirement age  # DICT
bayi : baby; babies  # DICT
air susu ibu : breast milk
kepala desa : village head; village heads  # DICT
masa jabatan : term of office; term  # DICT
pelantikan : inauguration  # DICT
tanggungan : dependant; dependants; dependent  # DICT
keluarga : family; families  # DICT
anggota keluarga : family member; family members  # DICT
penumpang : passenger; passengers  # DICT
karcis : ticket; tickets  # DICT
harga : price; prices  # DICT
wajib belajar : compulsory education  # DICT
pendidikan dasar : basic education
warga negara : citizen; citizens  # DICT
rokok : cigarette; cigarettes  # DICT
penghasilan kena pajak : taxable income  # AKSARA
orang pribadi : individual; individuals  # AKSARA
peredaran bruto : gross revenue
"""

# Verbs and qualifiers: translated, but no names of a term (a claim may restate them in other words).
STATUTE_GENERAL_TABLE = """
dipidana : punished; sentenced
meninggal dunia : dies; died; death  # DICT
sengaja : deliberately; intentionally  # DICT
mengganggu : disturb
memperbaiki : improve; improves; repair  # DICT
diperpanjang : extended; prolonged  # DICT
pengembalian : refund; return; reimbursement  # DICT
membatalkan : cancel; cancels; cancelled  # DICT
dikurangi : minus; less; reduced; deducted  # DICT
"""
