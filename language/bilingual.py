"""A bilingual lexicon of general public-finance and legal terms, Indonesian ↔ English, with abbreviations.

Used by the rule judge (English claims over Indonesian passages) and by retrieval (an English query expanded
with the Indonesian words of the corpus). Every entry is a general term of Indonesian budget and statute
language, not a phrase of any evaluation item; the Indonesian side of each stands in at least three statutes
of ``indo_legal_corpus`` (tests/language/test_bilingual.py checks it when the corpus is present).

Where an English side of an entry stands in the project's own development claims, the entry must name the
public glossary it follows: a trailing ``# KEY[, KEY…]`` on its line, each KEY one of ``GLOSSARIES``
(language/bilingual_statute.py, title and address of each). tests/language/test_lexicon_glossary.py fails when
such a side carries no key; sides that no named glossary gives were removed.

Table format: ``indonesian[, variant…] [= ABBREVIATION] : english[; alternative…] [# GLOSSARY]``; a line
that starts with ``#`` is a comment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from language.bilingual_statute import GLOSSARIES, STATUTE_GENERAL_TABLE, STATUTE_TABLE

_TABLE = """
anggaran pendapatan dan belanja negara = APBN : state budget; state revenue and expenditure budget  # FITRA
anggaran pendapatan dan belanja daerah = APBD : regional budget; local government budget  # ENGLISHDBS, FITRA
anggaran pendapatan dan belanja negara perubahan = APBN-P : revised state budget  # FITRA
anggaran : budget; appropriation  # FITRA
tahun anggaran = TA : fiscal year; budget year  # DICT
pendapatan negara : state revenue; government revenue  # GFSM
penerimaan negara : state revenue; state receipts  # GFSM
pendapatan : revenue; income  # GFSM
neto : net  # GFSM
bruto : gross  # GFSM
penerimaan : revenue; receipts; receipt  # GFSM
penerimaan perpajakan : tax revenue; taxation revenue  # GFSM
penerimaan pajak : tax revenue  # GFSM
pendapatan pajak : tax revenue; tax income  # GFSM
perdagangan internasional : international trade  # DICT
perdagangan : trade  # DICT
internasional : international  # DICT
lainnya : other  # DICT
penerimaan negara bukan pajak = PNBP : non-tax state revenue; non-tax revenue  # GFSM
bukan pajak : non-tax  # GFSM
hibah : grant; grants  # GFSM
belanja negara : state expenditure  # GFSM
belanja : expenditure; expenditures  # GFSM
belanja pemerintah pusat : central government expenditure; central government spending
belanja pegawai : personnel expenditure; employee expenditure; employee spending
belanja barang : goods expenditure; material expenditure
belanja modal : capital expenditure  # GFSM
subsidi : subsidy; subsidies  # GFSM
subsidi energi : energy subsidy; energy subsidies
bantuan sosial : social assistance; social aid
bantuan : assistance; aid
pembayaran bunga utang : interest payments; debt interest payments
transfer ke daerah : transfers to regions; regional transfers
dana perimbangan : fiscal balance funding; regional fiscal balance funding; balancing fund  # FITRABRIEF,JOSES
dana alokasi umum = DAU : general allocation fund  # WB
dana alokasi khusus = DAK : special allocation fund
dana bagi hasil = DBH : shared revenue fund; revenue sharing fund  # FITRABRIEF, JOSES
bagi hasil : profit sharing
otonomi khusus = otsus : special autonomy  # PAPUA
dana otonomi khusus : special autonomy fund  # SETKAB
dana desa : village fund; village funds  # CPI
alokasi dana desa : village fund allocation
pendapatan asli daerah = PAD : regional own-source revenue; local own-source revenue; own-source revenue
pajak daerah : local tax
retribusi daerah : regional levy; regional levies; regional user charges
retribusi : user charge
pajak kendaraan bermotor = PKB : motor vehicle tax
bea balik nama kendaraan bermotor = BBNKB : motor vehicle title transfer fee; motor vehicle transfer fee
bea perolehan hak atas tanah dan bangunan = BPHTB : land and building acquisition duty; land title duty
pajak bumi dan bangunan = PBB : land and building tax; property tax
pajak penghasilan = PPh : income tax  # LEGAL
pajak pertambahan nilai = PPN : value added tax; value-added tax; vat  # LEGAL
pajak penjualan atas barang mewah = PPnBM : luxury goods sales tax; sales tax on luxury goods
bea meterai : stamp duty  # TAXDUTY
bea masuk : import duty; import duties  # TAXDUTY
bea keluar : export duty; export duties  # TAXDUTY
cukai : excise  # TAXDUTY
kepabeanan : customs
pajak : tax; taxes  # GFSM
perpajakan : taxation; tax  # GFSM
wajib pajak : taxpayer; taxpayers  # DJP
pengampunan pajak : tax amnesty  # AMNESTY
harta : assets; wealth  # AMNESTY
surat pemberitahuan = SPT : tax return; notification letter
nomor pokok wajib pajak = NPWP : taxpayer identification number
tarif : rate; tariff  # DICT
dasar pengenaan pajak : tax base
objek pajak : tax object; taxable object
subjek pajak : tax subject
pembiayaan : financing  # GFSM
pembiayaan anggaran : budget financing  # GFSM
defisit : deficit  # GFSM
surplus : surplus  # GFSM
defisit anggaran : budget deficit  # GFSM
sisa lebih pembiayaan anggaran = SiLPA : budget financing surplus; excess of budget financing
saldo anggaran lebih = SAL : excess budget balance; budget surplus balance
utang : debt; debts  # GFSM
pinjaman : loan; loans; borrowing
pinjaman luar negeri : foreign loan; foreign loans; foreign borrowing
pinjaman dalam negeri : domestic loan; domestic loans; domestic borrowing
surat berharga negara = SBN : government securities; state securities
surat utang negara = SUN : government bonds; government debt securities
surat berharga syariah negara = SBSN : government sharia securities; sovereign sukuk
penyertaan modal negara = PMN : state capital participation; state equity participation
badan usaha milik negara = BUMN : state-owned enterprise; state-owned enterprises
badan usaha milik daerah = BUMD : regionally owned enterprise; region-owned enterprise
badan layanan umum = BLU : public service agency
produk domestik bruto = PDB : gross domestic product; gdp
pertumbuhan ekonomi : economic growth  # DICT
inflasi : inflation
nilai tukar : exchange rate
suku bunga : interest rate  # DICT
bunga : interest  # GFSM
minyak bumi : crude oil; oil; petroleum  # DICT
gas bumi : natural gas; gas  # DICT
minyak mentah : crude oil
asumsi dasar ekonomi makro : basic macroeconomic assumptions; macroeconomic assumptions
bendahara umum negara = BUN : state general treasurer
keuangan negara : state finances; public finance
kekayaan negara : state assets; state wealth
barang milik negara = BMN : state property; state-owned assets
barang milik daerah = BMD : regional property; region-owned assets
perbendaharaan negara : state treasury
kas negara : state treasury; state cash
laporan keuangan : financial statements; financial report  # AKSARA
pertanggungjawaban : accountability; accountability report  # DICT
badan pemeriksa keuangan = BPK : audit board; supreme audit board
pemeriksaan : audit; examination; inspection
pengawasan : supervision; oversight
intern : internal  # DICT
ekstern : external
dewan perwakilan rakyat = DPR : house of representatives
dewan perwakilan rakyat daerah = DPRD : regional house of representatives; regional legislative council
dewan perwakilan daerah = DPD : regional representative council
pemerintah pusat : central government  # MANPOWER
pemerintah daerah : regional government; local government  # MANPOWER
pemerintah : government  # DICT
daerah : region; regional; regions; local  # DICT
provinsi : province; provincial; provinces  # DICT
kabupaten : regency; regencies  # DICT
kota : city; municipality; cities  # DICT
desa : village; villages  # DICT
kecamatan : subdistrict; sub-district
negara : state; country; national  # DICT
nasional : national  # DICT
pusat : central  # DICT
kementerian : ministry
menteri : minister  # DICT
menteri keuangan : minister of finance
lembaga : institution; agency  # DICT
badan : agency; body; board  # DICT
presiden : president
gubernur : governor  # DICT
bupati : regent
walikota : mayor
undang-undang = UU : law; act; statute  # LEGAL
rancangan undang-undang = RUU : bill; draft law  # LEGAL
peraturan pemerintah = PP : government regulation
peraturan pemerintah pengganti undang-undang = Perppu : government regulation in lieu of law
peraturan presiden = Perpres : presidential regulation
peraturan menteri : ministerial regulation
peraturan daerah = Perda : regional regulation
keputusan presiden = Keppres : presidential decree
pasal : article  # LEGAL
ayat : paragraph; clause
huruf : letter; point
lampiran : annex; appendix; attachment
penjelasan : elucidation; explanation
ketentuan : provision; provisions
ketentuan peralihan : transitional provisions
ketentuan pidana : criminal provisions
sanksi administratif : administrative sanction; administrative sanctions  # MANPOWER
sanksi administrasi : administrative sanction; administrative sanctions  # MANPOWER
sanksi : sanction; sanctions; penalty  # DICT
denda : fine; fines; penalty  # DICT
pidana penjara : imprisonment; prison sentence
pidana denda : criminal fine
jangka waktu : period; time limit; term  # DICT
biaya : cost; costs; fee
imbalan : fee; compensation; reward
gaji : salary; salaries  # DICT
tunjangan : allowance; allowances  # DICT
pensiun : pension; pensions
pegawai negeri sipil = PNS : civil servant; civil servants  # DICT
aparatur sipil negara = ASN : state civil apparatus
pelayanan publik : public service; public services  # DICT
kekurangan : deficiency; underpayment
tambahan : additional  # DICT
keberatan : objection  # DJP
banding : appeal  # DJP
keputusan : decision  # DICT
kuota : quota  # DICT
kas : treasury; cash  # DICT
kas daerah : regional cash
termasuk : included; including; includes  # DICT
pelunasan : repayment; settlement  # DICT
bulanan : monthly  # DICT
pendidikan : education  # DICT
kesehatan : health  # DICT
jaminan sosial : social security
infrastruktur : infrastructure
kemiskinan : poverty
pengangguran : unemployment
penduduk : population; residents
bahan bakar minyak = BBM : fuel; fuel oil  # DICT
listrik : electricity  # DICT
sumber daya alam : natural resources  # DICT
pertambangan : mining  # DICT
kehutanan : forestry
perikanan : fisheries
panas bumi : geothermal  # DICT
dividen : dividend; dividends
bagian laba : profit share; share of profit
ekspor : export; exports  # DICT
impor : import; imports  # DICT
penanaman modal : investment; capital investment
investasi : investment
modal : capital  # DICT
kredit : credit
kebijakan fiskal : fiscal policy
risiko fiskal : fiscal risk
kapasitas fiskal : fiscal capacity
pengelolaan keuangan : financial management
kewajiban : liability; liabilities; obligation  # DICT
aset : asset; assets  # GFSM
ekuitas : equity
cadangan : reserve; reserves
pagu : ceiling; budget ceiling  # DICT
realisasi : realization; realisation
perubahan : amendment; revision; change  # DICT
data pribadi : personal data  # DICT
pelindungan : protection  # MANPOWER
perlindungan : protection  # MANPOWER
haji : hajj  # DICT
ibadah haji : hajj pilgrimage; hajj  # DICT
jemaah : pilgrims; congregation
transfer : transfer; transfers  # GFSM
penyaluran : distribution
suku bunga acuan : reference rate; reference interest rate  # ACT
pencairan : withdrawal
tenaga kerja : manpower; labour; labor; workforce  # MANPOWER
ketenagakerjaan : manpower; employment; labour affairs  # MANPOWER
pekerja : worker; workers; employee; employees  # MANPOWER
pengusaha : employer; employers
upah : wage; wages
upah minimum : minimum wage
cuti : leave  # DICT
cuti tahunan : annual leave  # DICT
tahunan : annual; yearly  # DICT
lembur : overtime
pesangon : severance pay; severance
pemutusan hubungan kerja = PHK : termination of employment; dismissal; layoff
berhak : entitled; has the right  # DICT
hak : right; rights  # DICT
guru : teacher; teachers  # DICT
pendidik : educator; educators  # DICT
dosen : lecturer; lecturers  # DICT
peserta didik : student; students; pupil; pupils
sekolah : school; schools
anak : child; children
usia : age  # DICT
surat izin mengemudi = SIM : driving licence; driving license; driver's license  # DICT
kendaraan bermotor : motor vehicle; motor vehicles
pemilihan umum = Pemilu : general election; election; elections  # DICT
partai politik : political party; political parties
perkawinan : marriage
tanah : land  # DICT
kecuali : except; unless  # DICT
selain : other than; besides; apart from
sistem : system  # DICT
"""

# General verbs and qualifiers of statute text (the same glossary conventions): translated like the terms, but
# not names of a budget or legal term, so a claim may restate them in other words (textunits.names_term).
_GENERAL_TABLE = """
ditambah : plus; added  # DICT
dibagi : divided; shared  # DICT
acuan : reference  # DICT
mengungkapkan : disclose; disclosed; reveal  # DICT
terakhir : last; latest; final  # DICT
dibiayai : financed; funded
"""

_SPACE_RE = re.compile(r"\s+")
_WORD_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class Term:
    """One lexicon entry: the Indonesian phrase, its standard English names, its abbreviation if any, and the
    keys of the public glossaries its English follows (``GLOSSARIES``, joined by ", "), if its line names
    any."""

    indonesian: str
    english: tuple[str, ...]
    abbreviation: str | None = None
    glossary: str | None = None


def _norm(text: str) -> str:
    return _SPACE_RE.sub(" ", text.strip().lower())


def _parse(table: str) -> tuple[Term, ...]:
    terms = []
    for line in table.strip().splitlines():
        entry, _, glossary = line.partition("#")
        if not entry.strip():
            continue  # a comment line
        left, _, right = entry.partition(" : ")
        indonesian, _, abbreviation = left.partition(" = ")
        english = tuple(_norm(e) for e in right.split(";") if e.strip())
        key = ", ".join(k.strip() for k in glossary.split(",") if k.strip()) or None
        unknown = [k for k in (key or "").split(", ") if k and k not in GLOSSARIES]
        if unknown:
            raise ValueError(f"unknown glossary {unknown[0]!r} in lexicon line {line!r}")
        terms.append(Term(_norm(indonesian), english, abbreviation.strip() or None, key))
    return tuple(terms)


GENERAL_TERMS: tuple[Term, ...] = _parse(_GENERAL_TABLE) + _parse(STATUTE_GENERAL_TABLE)
TERMS: tuple[Term, ...] = _parse(_TABLE) + _parse(STATUTE_TABLE) + GENERAL_TERMS
# The words of the general entries, both sides: never a term's name
GENERAL_WORDS = frozenset(
    word for term in GENERAL_TERMS for side in (term.indonesian, *term.english) for word in side.split()
)


def _index() -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str], dict[str, str]]:
    to_id: dict[str, list[str]] = {}
    to_en: dict[str, list[str]] = {}
    abbreviations: dict[str, str] = {}
    abbreviation_of: dict[str, str] = {}
    for term in TERMS:
        for english in term.english:
            to_id.setdefault(english, []).append(term.indonesian)
        to_en.setdefault(term.indonesian, []).extend(term.english)
        if term.abbreviation:
            abbreviations[term.abbreviation.lower()] = term.indonesian
            abbreviation_of[term.indonesian] = term.abbreviation
    return to_id, to_en, abbreviations, abbreviation_of


_TO_ID, _TO_EN, _ABBREVIATIONS, _ABBREVIATION_OF = _index()
_LOWER_ABBREVIATIONS = frozenset(t.abbreviation for t in TERMS if t.abbreviation and t.abbreviation.islower())
_LONGEST = max(len(key.split()) for key in [*_TO_ID, *_TO_EN])


def _singular(phrase: str) -> str:
    """English plural of the last word dropped ("allocation funds" → "allocation fund"); lookups only."""
    if phrase.endswith("ies") and len(phrase) > 4:
        return phrase[:-3] + "y"
    if phrase.endswith("s") and not phrase.endswith("ss") and len(phrase) > 3:
        return phrase[:-1]
    return phrase


def english_to_indonesian(term: str) -> list[str]:
    """The Indonesian phrases for an English term ("general allocation fund" → ["dana alokasi umum"]);
    a final plural is tried singular too. Empty when the term is not in the lexicon."""
    key = _norm(term)
    found = _TO_ID.get(key) or _TO_ID.get(_singular(key)) or []
    return list(dict.fromkeys(found))


def indonesian_to_english(term: str) -> list[str]:
    """The standard English names of an Indonesian term or an abbreviation ("DAU" → the fund's name)."""
    key = _norm(term)
    key = _ABBREVIATIONS.get(key, key)
    return list(_TO_EN.get(key, ()))


def expand_abbreviation(abbreviation: str) -> str | None:
    """The Indonesian expansion of an abbreviation ("APBN" → "anggaran pendapatan dan belanja negara")."""
    return _ABBREVIATIONS.get(_norm(abbreviation))


def abbreviation_of(term: str) -> str | None:
    """The usual abbreviation of an Indonesian term, as written ("dana alokasi umum" → "DAU")."""
    return _ABBREVIATION_OF.get(_norm(term))


@dataclass(frozen=True, slots=True)
class PhraseMatch:
    """A lexicon phrase found in a token sequence: tokens[start:end], in ``language``, and its equivalents
    in the other language (an abbreviation's equivalents are its Indonesian expansion and English names)."""

    start: int
    end: int
    language: str  # "id", "en" or "abbr"
    equivalents: tuple[str, ...]


@lru_cache(maxsize=8192)
def _lookup(phrase: str, written: str) -> tuple[str, tuple[str, ...]] | None:
    # an abbreviation counts as written in capitals ("SUN", "PAD"), or in lower case when that is its usual
    # form ("otsus"): "sun" and "pad" in an English text are words
    if (
        phrase in _ABBREVIATIONS
        and " " not in phrase
        and (written != phrase or phrase in _LOWER_ABBREVIATIONS)
    ):
        expansion = _ABBREVIATIONS[phrase]
        return "abbr", (expansion, *_TO_EN.get(expansion, ()))
    if phrase in _TO_EN:
        return "id", tuple(_TO_EN[phrase])
    found = _TO_ID.get(phrase) or _TO_ID.get(_singular(phrase))
    if found:
        return "en", tuple(dict.fromkeys(found))
    return None


def find_phrases(tokens: Sequence[str]) -> list[PhraseMatch]:
    """Lexicon phrases in ``tokens`` (lower-case words), longest first from left to right, not overlapping."""
    words = [token.lower() for token in tokens]
    matches = []
    index = 0
    while index < len(words):
        for size in range(min(_LONGEST, len(words) - index), 0, -1):
            found = _lookup(" ".join(words[index : index + size]), tokens[index] if size == 1 else "")
            if found is not None:
                matches.append(PhraseMatch(index, index + size, found[0], found[1]))
                index += size
                break
        else:
            index += 1
    return matches


def expand_tokens(tokens: Sequence[str]) -> list[str]:
    """``tokens`` followed by the words of every equivalent of the lexicon phrases found in them: an English
    query gains the Indonesian words of the corpus, an Indonesian one the English names, an abbreviation its
    expansion. Order is kept and no word is added twice."""
    out = list(tokens)
    seen = {token.lower() for token in tokens}
    for match in find_phrases(tokens):
        for equivalent in match.equivalents:
            for word in _WORD_RE.findall(equivalent):
                if word not in seen:
                    seen.add(word)
                    out.append(word)
    return out
