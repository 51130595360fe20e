"""Word tables for the rule judge: scale words, units, markers, and a small bilingual government lexicon.

Indonesian words here are surface forms; judge.textunits stems them with the same stemmer it applies to
passages, so both sides always agree.
"""

from __future__ import annotations

from decimal import Decimal

# Scale words: normalised name and multiplier. "M"/"T" are only scale words right after a currency amount.
SCALE_WORDS: dict[str, tuple[str, Decimal]] = {}
for _names, _canon, _exp in (
    (("ribu", "rb", "thousand", "k"), "ribu", 3),
    (("juta", "jt", "million", "mn", "mio"), "juta", 6),
    (("miliar", "milyar", "billion", "bn", "b"), "miliar", 9),
    (("triliun", "trilyun", "trillion", "tn"), "triliun", 12),
    (("kuadriliun", "quadrillion"), "kuadriliun", 15),
):
    for _name in _names:
        SCALE_WORDS[_name] = (_canon, Decimal(10) ** _exp)
CURRENCY_SCALE_LETTERS: dict[str, str] = {"M": "miliar", "T": "triliun"}

# Currency markers, before the number (prefix) or after it (suffix).
CURRENCY_PREFIX: dict[str, str] = {"rp": "IDR", "rp.": "IDR", "idr": "IDR", "us$": "USD", "usd": "USD", "$": "USD"}
CURRENCY_SUFFIX: dict[str, str] = {
    "rupiah": "IDR", "idr": "IDR", "usd": "USD", "dolar": "USD", "dollar": "USD", "dollars": "USD",
}
CURRENCY_HINTS: dict[str, frozenset[str]] = {
    "IDR": frozenset({"rp", "rupiah", "idr", "rp."}),
    "USD": frozenset({"usd", "dolar", "dollar", "us$"}),
}

PERCENT_WORDS = frozenset({"%", "persen", "perseratus", "percent", "per cent", "pct"})
PERMILLE_WORDS = frozenset({"‰", "permil", "per mil", "per seribu", "per mille", "permille"})

# Units written after a count; value is the normalised unit.
UNITS: dict[str, str] = {}
for _names, _canon in (
    (("jiwa", "orang", "people", "persons", "person", "penduduk", "residents", "inhabitants"), "person"),
    (("km", "kilometer", "kilometre", "kilometers", "kilometres"), "km"),
    (("m", "meter", "metre", "meters", "metres"), "m"),
    (("km2", "km²"), "km2"),
    (("ha", "hektare", "hektar", "hectare", "hectares"), "ha"),
    (("ton", "tons", "tonnes", "tonne"), "ton"),
    (("kg", "kilogram", "kilograms"), "kg"),
    (("liter", "litre", "liters", "litres"), "liter"),
    (("unit", "units", "buah"), "unit"),
    (("tahun", "years", "year", "thn"), "year"),
    (("bulan", "months", "month"), "month"),
    (("minggu", "weeks", "week"), "week"),
    (("hari", "days", "day"), "day"),
    (("jam", "hours", "hour"), "hour"),
    (("menit", "minutes", "minute"), "minute"),
    (("kali", "times"), "times"),
    (("desa", "gampong", "villages", "village"), "village"),
    (("kabupaten", "regencies", "regency"), "regency"),
    (("sekolah", "schools", "school"), "school"),
    (("paket", "packages", "package"), "package"),
    (("dokumen", "documents", "document"), "document"),
    (("kegiatan", "activities", "activity"), "activity"),
    (("rumah", "houses", "house"), "house"),
    (("keluarga", "households", "families", "family"), "family"),
):
    for _name in _names:
        UNITS[_name] = _canon

# Words that introduce a reference (clause, statute, annex), never a quantity.
STRUCTURAL_WORDS = frozenset({
    "pasal", "ayat", "huruf", "angka", "nomor", "no", "lampiran", "bab", "bagian", "paragraf", "butir",
    "article", "section", "chapter", "number", "annex",
})

APPROX_MARKERS = (
    "kurang lebih", "kurang-lebih", "lebih kurang", "lebih-kurang", "sekitar", "kira-kira", "kurleb", "sekira",
    "hampir", "kisaran", "approximately", "roughly", "around", "about", "nearly", "almost", "circa", "some",
    "±", "~", "+/-",
)
# Bound markers → normalised condition. Longer phrases first (the regex alternation keeps this order).
BOUND_MARKERS: dict[str, str] = {
    "paling sedikit": "min", "sekurang-kurangnya": "min", "setidak-tidaknya": "min", "setidaknya": "min",
    "minimal": "min", "minimum": "min", "paling rendah": "min", "paling singkat": "min", "at least": "min",
    "no less than": "min", "not less than": "min",
    "paling banyak": "max", "sebanyak-banyaknya": "max", "setinggi-tingginya": "max", "maksimal": "max",
    "maksimum": "max", "paling tinggi": "max", "serendah-rendahnya": "min", "paling lama": "max", "at most": "max", "up to": "max",
    "no more than": "max", "not more than": "max",
    "lebih dari pada": "gt", "lebih daripada": "gt", "kurang dari pada": "lt", "kurang daripada": "lt",
    "lebih dari": "gt", "di atas": "gt", "melebihi": "gt", "more than": "gt", "over": "gt", "above": "gt",
    "exceeding": "gt", "kurang dari": "lt", "di bawah": "lt", "less than": "lt", "under": "lt", "below": "lt",
    "fewer than": "lt",
}

# Surface forms (lower case): the stemmer maps "meningkat" and "tingkat" (level) alike, so stems won't do.
DIRECTION_UP = frozenset("""
naik menaik kenaikan dinaikkan meningkat meningkatnya peningkatan bertambah penambahan bertumbuh tumbuh
pertumbuhan melonjak lonjakan melambung menguat increase increased increases increasing rise rises rose
risen rising grew grow grows growth up higher gain gained surge surged
""".split())
DIRECTION_DOWN = frozenset("""
turun menurun menurunnya penurunan diturunkan berkurang berkurangnya pengurangan dikurangi menyusut
penyusutan merosot anjlok melemah dipangkas pemangkasan decrease decreased decreases decreasing decline
declined declines declining fell fall falls drop dropped down lower reduce reduced reduction cut shrank
""".split())
# "lebih tinggi" (higher) and "lebih rendah" (lower): comparative adjectives that carry a direction.
COMPARATIVE_UP = frozenset({"tinggi", "besar", "banyak"})
COMPARATIVE_DOWN = frozenset({"rendah", "kecil", "sedikit"})

NEGATIONS = frozenset({"tidak", "tak", "bukan", "belum", "tanpa", "jangan", "not", "no", "never", "without",
                       "nor", "neither", "cannot", "non"})
# Words skipped between a negation and the word it negates ("tidak dapat diberikan" negates "beri").
NEGATION_SKIP = frozenset({"dapat", "akan", "boleh", "pernah", "lagi", "perlu", "harus", "wajib", "bisa",
                           "sedang", "sudah", "juga", "pula", "be", "been", "being", "have", "has", "is",
                           "are", "was", "were", "do", "does", "did", "yet", "a", "an", "the", "to", "di"})

MONTHS: dict[str, int] = {}
for _i, _names in enumerate((
    ("januari", "january", "jan"), ("februari", "february", "feb", "pebruari"), ("maret", "march", "mar"),
    ("april", "apr"), ("mei", "may"), ("juni", "june", "jun"), ("juli", "july", "jul"),
    ("agustus", "august", "agu", "aug"), ("september", "sep", "sept"), ("oktober", "october", "okt", "oct"),
    ("november", "nopember", "nov"), ("desember", "december", "des", "dec"),
), start=1):
    for _name in _names:
        MONTHS[_name] = _i

STOPWORDS = frozenset("""
yang dan di ke dari untuk dengan pada dalam oleh atau ini itu tersebut sebagai serta juga akan telah sudah
bahwa agar karena jika bila apabila maka para atas bagi secara antara hingga sampai terhadap tentang
ada adanya dapat harus wajib masing-masing setiap tiap semua seluruh hal ia mereka kami kita
nya pun lah kah saja hanya sedang masih lagi pula sendiri tiap-tiap yaitu yakni ialah sebagaimana dimaksud
adalah merupakan s.d sd dst dll
the a an of and or in on at to for with by from as is are was were be been being this that these those it
its their there which who whom whose than then into onto over per via also only such each every all any
has have had will would shall may might can could should must do does did
""".split())
# Words that frame a figure without being an entity: a claim may use them without the passage doing so.
FRAMING_WORDS = frozenset("""
sebesar senilai sejumlah sebanyak setara tercatat mencapai menjadi total jumlah jumlahnya nilai nilainya
besaran besarnya dianggarkan dialokasikan direncanakan ditetapkan ditargetkan diproyeksikan dipatok
anggarannya rp rupiah idr persen sekitar kurang lebih kira-kira hampir paling sedikit banyak tahun
amount amounts amounted totals totalled totaled stands stood reached reaches value worth figure recorded
planned budgeted allocated set targeted projected about around approximately roughly nearly almost
percent rupiahs billion million trillion thousand year years
""".split())

# English government vocabulary → Indonesian words (stemmed at load time by judge.textunits, so keys always
# agree with what the stemmer makes of passages).
BILINGUAL: dict[str, tuple[str, ...]] = {
    "budget": ("anggaran",), "budgets": ("anggaran",), "budgeted": ("anggaran",),
    "appropriation": ("anggaran",), "revenue": ("pendapatan", "penerimaan"),
    "revenues": ("pendapatan", "penerimaan"), "income": ("pendapatan", "penghasilan"),
    "receipts": ("penerimaan",), "receipt": ("penerimaan",),
    "expenditure": ("belanja",), "expenditures": ("belanja",), "spending": ("belanja",),
    "expense": ("belanja",), "expenses": ("belanja",),
    "financing": ("pembiayaan",), "finance": ("keuangan",), "financial": ("keuangan",),
    "tax": ("pajak",), "taxes": ("pajak",), "taxation": ("perpajakan",), "levy": ("retribusi", "pungutan"),
    "levies": ("retribusi",), "fee": ("retribusi",), "fees": ("retribusi",),
    "state": ("negara",), "national": ("nasional", "negara"), "central": ("pusat",),
    "government": ("pemerintah",), "regional": ("daerah",), "region": ("daerah",), "local": ("daerah",),
    "province": ("provinsi",), "provincial": ("provinsi",), "regency": ("kabupaten",), "city": ("kota",),
    "village": ("desa", "gampong"), "villages": ("desa", "gampong"),
    "education": ("pendidikan",), "educational": ("pendidikan",), "health": ("kesehatan",),
    "healthcare": ("kesehatan",), "office": ("dinas", "kantor"), "agency": ("badan", "dinas"),
    "department": ("dinas",), "board": ("badan",), "secretariat": ("sekretariat",), "social": ("sosial",),
    "agriculture": ("pertanian",), "plantation": ("perkebunan",), "livestock": ("peternakan",),
    "food": ("pangan", "makanan"), "tourism": ("pariwisata",), "culture": ("kebudayaan",),
    "transport": ("perhubungan",), "transportation": ("perhubungan",), "housing": ("perumahan",),
    "settlement": ("permukiman",), "settlements": ("permukiman",), "manpower": ("tenaga", "kerja"),
    "labour": ("kerja",), "labor": ("kerja",), "employee": ("pegawai",), "employees": ("pegawai",),
    "personnel": ("pegawai",), "staff": ("pegawai",), "goods": ("barang",), "services": ("jasa",),
    "service": ("jasa", "pelayanan"), "capital": ("modal",), "grant": ("hibah",), "grants": ("hibah",),
    "assistance": ("bantuan",), "aid": ("bantuan",), "subsidy": ("subsidi",), "subsidies": ("subsidi",),
    "transfer": ("transfer",), "transfers": ("transfer",), "fund": ("dana",), "funds": ("dana",),
    "special": ("khusus",), "autonomy": ("otonomi",), "general": ("umum",), "allocation": ("alokasi",),
    "balancing": ("perimbangan",), "debt": ("utang",), "loan": ("pinjaman",), "loans": ("pinjaman",),
    "interest": ("bunga",), "deficit": ("defisit",), "surplus": ("surplus",), "original": ("asli",),
    "own-source": ("asli",), "own": ("asli",), "source": ("sumber",), "non-tax": ("bukan", "pajak"),
    "motor": ("motor",), "vehicle": ("kendaraan",), "vehicles": ("kendaraan",), "fuel": ("bahan", "bakar"),
    "water": ("air",), "environment": ("lingkungan",), "forestry": ("kehutanan",), "forest": ("hutan",),
    "women": ("perempuan",), "empowerment": ("pemberdayaan",), "child": ("anak",), "children": ("anak",),
    "protection": ("perlindungan",), "population": ("penduduk",), "poverty": ("kemiskinan",),
    "poor": ("miskin",), "unemployment": ("pengangguran",), "inflation": ("inflasi",),
    "growth": ("pertumbuhan",), "economic": ("ekonomi",), "economy": ("ekonomi",),
    "law": ("undang",), "laws": ("undang",), "regulation": ("peraturan",), "regulations": ("peraturan",),
    "decree": ("keputusan",), "article": ("pasal",), "paragraph": ("ayat",), "annex": ("lampiran",),
    "chapter": ("bab",), "provision": ("ketentuan",), "provisions": ("ketentuan",), "council": ("dewan",),
    "representatives": ("perwakilan",), "people": ("rakyat",), "minister": ("menteri",),
    "ministry": ("kementerian",), "governor": ("gubernur",), "regent": ("bupati",), "mayor": ("walikota",),
    "president": ("presiden",), "fiscal": ("anggaran", "fiskal"), "revised": ("perubahan",),
    "amendment": ("perubahan",), "amended": ("perubahan",), "realization": ("realisasi",),
    "realisation": ("realisasi",), "target": ("target",), "salary": ("gaji",), "salaries": ("gaji",),
    "allowance": ("tunjangan",), "allowances": ("tunjangan",), "honorarium": ("honorarium",),
    "honoraria": ("honorarium",), "travel": ("perjalanan",), "official": ("dinas",), "meeting": ("rapat",),
    "meetings": ("rapat",), "meals": ("makanan",), "drinks": ("minuman",), "rent": ("sewa",),
    "rental": ("sewa",), "building": ("bangunan", "gedung"), "buildings": ("bangunan", "gedung"),
    "equipment": ("peralatan", "alat"), "stationery": ("alat", "tulis"), "training": ("pelatihan",),
    "maintenance": ("pemeliharaan",), "procurement": ("pengadaan",), "road": ("jalan",), "roads": ("jalan",),
    "bridge": ("jembatan",), "hospital": ("rumah", "sakit"), "school": ("sekolah",),
    "schools": ("sekolah",), "islamic": ("islam",), "sharia": ("syariat",), "religious": ("agama",),
    "library": ("perpustakaan",), "archives": ("kearsipan", "arsip"), "communication": ("komunikasi",),
    "information": ("informasi",), "planning": ("perencanaan",), "development": ("pembangunan",),
    "inspectorate": ("inspektorat",), "civil": ("sipil",), "police": ("polisi",), "security": ("keamanan",),
    "investment": ("penanaman", "modal", "investasi"), "cooperative": ("koperasi",),
    "cooperatives": ("koperasi",), "small": ("kecil",), "medium": ("menengah",), "enterprises": ("usaha",),
    "business": ("usaha",), "fine": ("denda",), "fines": ("denda",), "prison": ("penjara",),
    "imprisonment": ("penjara",), "sanction": ("sanksi",), "members": ("anggota",), "member": ("anggota",),
    "term": ("masa",), "period": ("periode", "masa"), "semester": ("semester",), "quarter": ("triwulan",),
    "persons": ("orang",), "residents": ("penduduk",), "recipients": ("penerima",),
    "recipient": ("penerima",), "contribution": ("sumbangan",), "share": ("bagian",), "profit": ("laba",),
    "oil": ("minyak",), "gas": ("gas",), "natural": ("alam",), "resources": ("sumber", "daya"),
    "mining": ("pertambangan",), "customs": ("bea",), "excise": ("cukai",), "duty": ("bea",),
    "import": ("impor",), "export": ("ekspor",), "sales": ("penjualan",), "management": ("pengelolaan",),
    "implementation": ("pelaksanaan",), "administration": ("penyelenggaraan", "administrasi"),
    "organisation": ("penyelenggaraan",), "activities": ("kegiatan",), "activity": ("kegiatan",),
    "program": ("program",), "programme": ("program",), "regional-owned": ("daerah",),
    "receive": ("menerima",), "received": ("menerima",), "sub-district": ("kecamatan",),
    "district": ("kabupaten",), "districts": ("kabupaten",), "cities": ("kota",), "plan": ("rencana",),
    "outlay": ("belanja",), "payment": ("pembayaran",), "payments": ("pembayaran",),
    "utilities": ("jasa",), "electricity": ("listrik",), "telephone": ("telepon",), "office-supplies": ("alat",),
}

# Acronyms → the words of their expansion, so "APBN" grounds "Anggaran Pendapatan dan Belanja Negara".
ACRONYMS: dict[str, tuple[str, ...]] = {
    "apbn": ("anggaran", "pendapatan", "belanja", "negara"),
    "apbd": ("anggaran", "pendapatan", "belanja", "daerah"),
    "apba": ("anggaran", "pendapatan", "belanja", "aceh"),
    "apbk": ("anggaran", "pendapatan", "belanja", "kabupaten"),
    "pad": ("pendapatan", "asli", "daerah"),
    "pnbp": ("penerimaan", "negara", "bukan", "pajak"),
    "dau": ("dana", "alokasi", "umum"),
    "dak": ("dana", "alokasi", "khusus"),
    "dbh": ("dana", "bagi", "hasil"),
    "otsus": ("otonomi", "khusus"),
    "skpd": ("satuan", "kerja", "perangkat", "daerah"),
    "dpra": ("dewan", "perwakilan", "rakyat", "aceh"),
    "dprd": ("dewan", "perwakilan", "rakyat", "daerah"),
    "dpr": ("dewan", "perwakilan", "rakyat"),
    "pkb": ("pajak", "kendaraan", "bermotor"),
    "bbnkb": ("bea", "balik", "nama", "kendaraan", "bermotor"),
    "pbbkb": ("pajak", "bahan", "bakar", "kendaraan", "bermotor"),
    "tkd": ("transfer", "daerah"),
    "bpka": ("badan", "pengelolaan", "keuangan", "aceh"),
    "bappeda": ("badan", "perencanaan", "pembangunan", "daerah"),
    "pupr": ("pekerjaan", "umum", "perumahan", "rakyat"),
    "umkm": ("usaha", "mikro", "kecil", "menengah"),
    "ukm": ("usaha", "kecil", "menengah"),
    "pns": ("pegawai", "negeri", "sipil"),
    "asn": ("aparatur", "sipil", "negara"),
    "bumn": ("badan", "usaha", "milik", "negara"),
    "bumd": ("badan", "usaha", "milik", "daerah"),
    "uu": ("undang",),
    "pp": ("peraturan", "pemerintah"),
    "perpres": ("peraturan", "presiden"),
    "perda": ("peraturan", "daerah"),
    "pph": ("pajak", "penghasilan"),
    "ppn": ("pajak", "pertambahan", "nilai"),
    "lhk": ("lingkungan", "hidup", "kehutanan"),
    "kominfo": ("komunikasi", "informatika"),
    "bkd": ("badan", "kepegawaian", "daerah"),
    "bpsdm": ("badan", "pengembangan", "sumber", "daya", "manusia"),
    "mpu": ("majelis", "permusyawaratan", "ulama"),
    "maa": ("majelis", "adat", "aceh"),
    "bra": ("badan", "reintegrasi", "aceh"),
    "rsud": ("rumah", "sakit", "umum", "daerah"),
}

# Words the polarity and bound checks own; entity and coverage checks leave them alone.
MARKER_WORDS = frozenset(word for phrase in (*APPROX_MARKERS, *BOUND_MARKERS) for word in phrase.split()) | (
    NEGATIONS | DIRECTION_UP | DIRECTION_DOWN | {"lebih", "kurang", "paling"})
