"""Word tables for the rule judge: scale words, units, markers, and a small bilingual government lexicon.

Indonesian words here are surface forms; language.textunits stems them with the same stemmer it applies to
passages, so both sides always agree. Tables are written as text ("words: meaning", one entry a line) to keep
them readable and short.
"""

from __future__ import annotations

from decimal import Decimal


def _table(text: str) -> dict[str, str]:
    """ "a b c: value" lines → {a: value, b: value, c: value}."""
    out = {}
    for line in text.strip().splitlines():
        names, _, value = line.partition(":")
        for name in names.split():
            out[name] = value.strip()
    return out


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Scale words: normalised name and multiplier. The spelled-out ones (Indonesian and English) are also the
# scale words of numbers written in letters (language.spelled), so both readers share this one table; the
# abbreviations only follow digits. "M"/"T" are only scale words right after a currency amount.
SCALE_EXPONENTS = {"ribu": 3, "juta": 6, "miliar": 9, "triliun": 12, "kuadriliun": 15}
SPELLED_SCALE_WORDS = _table("""
    ribu thousand: ribu
    juta million: juta
    miliar milyar billion: miliar
    triliun trilyun trillion: triliun
    kuadriliun quadrillion: kuadriliun
""")
_SCALE_ABBREVIATIONS = _table("rb k: ribu\njt mn mio: juta\nbn b: miliar\ntn: triliun")
DOTTED_SCALE_ABBREVIATIONS = frozenset({"rb", "jt"})  # Indonesian shorthand, often with a full stop: "5 jt."
SCALE_WORDS: dict[str, tuple[str, Decimal]] = {
    name: (canon, Decimal(10) ** SCALE_EXPONENTS[canon])
    for name, canon in {**SPELLED_SCALE_WORDS, **_SCALE_ABBREVIATIONS}.items()
}
CURRENCY_SCALE_LETTERS = {"M": "miliar", "T": "triliun"}

# Currency markers, before the number (prefix) or after it (suffix).
CURRENCY_PREFIX = _table("rp rp. idr: IDR\nus$ usd $: USD")
CURRENCY_SUFFIX = _table("rupiah idr: IDR\nusd dolar dollar dollars: USD")
CURRENCY_HINTS = {"IDR": _words("rp rupiah idr rp."), "USD": _words("usd dolar dollar us$")}

# "lima per seratus" (five per hundred) is how some statutes spell a percent out.
PERCENT_WORDS = frozenset({"%", "persen", "perseratus", "per seratus", "percent", "per cent", "pct"})
PERMILLE_WORDS = frozenset({"‰", "permil", "per mil", "per seribu", "per mille", "permille"})

# Units written after a count → the normalised unit.
UNITS = _table("""
    jiwa orang people persons person penduduk residents inhabitants: person
    km kilometer kilometre kilometers kilometres: km
    m meter metre meters metres: m
    km2 km²: km2
    ha hektare hektar hectare hectares: ha
    ton tons tonnes tonne: ton
    kg kilogram kilograms: kg
    liter litre liters litres: liter
    unit units buah: unit
    tahun years year thn: year
    bulan months month: month
    minggu weeks week: week
    hari days day: day
    jam hours hour: hour
    menit minutes minute: minute
    kali times: times
    desa gampong villages village: village
    kabupaten regencies regency: regency
    sekolah schools school: school
    paket packages package: package
    dokumen documents document: document
    kegiatan activities activity: activity
    rumah houses house: house
    keluarga households families family: family
""")

UNITS.update(dict.fromkeys(("hari kerja", "working days", "working day", "business days"), "day"))

# Words that introduce a reference (clause, statute, annex), never a quantity.
STRUCTURAL_WORDS = _words(
    "pasal ayat huruf angka nomor no lampiran bab bagian paragraf butir article section chapter number annex"
)

APPROX_MARKERS = tuple(
    "kurang lebih|kurang-lebih|lebih kurang|lebih-kurang|sekitar|kira-kira|kurleb|sekira|hampir|kisaran|"
    "approximately|roughly|around|about|nearly|almost|circa|some|±|~|+/-".split("|")
)
# Bound markers → normalised condition: min (at least), max (at most), gt (more than), lt (less than).
# The English ones are closed-class drafting vocabulary, not lexicon terms (as in K. Adams, "No Later Than or
# Not Later Than?", https://www.adamsdrafting.com/no-later-than-or-not-later-than/, after Merriam-Webster).
BOUND_MARKERS: dict[str, str] = {
    phrase.strip(): bound
    for bound, phrases in (
        ("min", "paling sedikit|sekurang-kurangnya|setidak-tidaknya|setidaknya|sedikitnya|minimal|minimum|"
                "paling rendah|paling singkat|paling cepat|secepat-cepatnya|serendah-rendahnya|at least|"
                "no less than|not less than|no earlier than|not earlier than|at the earliest"),
        ("max", "paling banyak|sebanyak-banyaknya|setinggi-tingginya|maksimal|maksimum|paling tinggi|"
                "paling lama|paling lambat|selambat-lambatnya|selama-lamanya|sampai dengan|hingga|at most|"
                "up to|no more than|not more than|no later than|not later than|at the latest|within"),
        ("gt", "lebih dari pada|lebih daripada|lebih dari|di atas|melebihi|more than|over|above|exceeding"),
        ("lt", "kurang dari pada|kurang daripada|kurang dari|di bawah|less than|under|below|fewer than"),
    )
    for phrase in phrases.split("|")
}  # fmt: skip

# Surface forms (lower case): the stemmer maps "meningkat" and "tingkat" (level) alike, so stems won't do.
DIRECTION_UP = _words("""
    naik menaik kenaikan dinaikkan meningkat meningkatnya peningkatan bertambah penambahan bertumbuh tumbuh
    pertumbuhan melonjak lonjakan melambung menguat increase increased increases increasing rise rises rose
    risen rising grew grow grows growth up higher gain gained surge surged
""")
DIRECTION_DOWN = _words("""
    turun menurun menurunnya penurunan diturunkan berkurang berkurangnya pengurangan dikurangi menyusut
    penyusutan merosot anjlok melemah dipangkas pemangkasan decrease decreased decreases decreasing decline
    declined declines declining fell fall falls drop dropped down lower reduce reduced reduction cut shrank
""")
# "lebih tinggi" (higher) and "lebih rendah" (lower): comparative adjectives that carry a direction.
COMPARATIVE_UP = _words("tinggi besar banyak")
COMPARATIVE_DOWN = _words("rendah kecil sedikit")

NEGATIONS = _words("tidak tak bukan belum tanpa jangan not no never without nor neither cannot non")
# Words skipped between a negation and the word it negates ("tidak dapat diberikan" negates "beri").
NEGATION_SKIP = _words("""
    dapat mampu sanggup akan boleh pernah lagi perlu harus wajib bisa sedang sudah juga pula be been being
    have has is are was were do does did yet a an the to di salah satu sebuah seorang suatu sekadar hanya
    lah pun
    mengalami melakukan dilakukan memiliki mempunyai undergo undergoes
""")  # light verbs too: "tidak mengalami perubahan" denies the change

MONTHS = {
    name: int(number)
    for name, number in _table("""
        januari january jan: 1
        februari february feb pebruari: 2
        maret march mar: 3
        april apr: 4
        mei may: 5
        juni june jun: 6
        juli july jul: 7
        agustus august agu aug: 8
        september sep sept: 9
        oktober october okt oct: 10
        november nopember nov: 11
        desember december des dec: 12
    """).items()
}

STOPWORDS = _words("""
    yang dan di ke dari untuk dengan pada dalam oleh atau ini itu tersebut sebagai serta juga akan telah sudah
    bahwa agar karena jika bila apabila maka para atas bagi secara antara hingga sampai terhadap tentang
    ada adanya dapat harus wajib masing-masing setiap tiap semua seluruh hal ia mereka kami kita
    nya pun lah kah saja hanya sedang masih lagi pula sendiri tiap-tiap yaitu yakni ialah sebagaimana dimaksud
    adalah merupakan s.d sd dst dll sehingga sedangkan lalu kemudian selain jika sisanya antaranya namun
    tetapi
    yakni bahwasanya itu
    the a an of and or in on at to for with by from as is are was were be been being this that these those it
    its their there which who whom whose than then into onto over per via also only such each every all any
    has have had will would shall may might can could should must do does did if when whenever they them
    after before once only until unless while where what how then both either just even still same its
    other others whose
""")
# Words that frame a figure without being an entity: a claim may use them without the passage doing so.
FRAMING_WORDS = _words("""
    sebesar senilai sejumlah sebanyak setara tercatat mencapai menjadi total jumlah jumlahnya nilai nilainya
    besaran besarnya dianggarkan dialokasikan direncanakan ditetapkan ditargetkan diproyeksikan dipatok
    anggarannya rp rupiah idr persen sekitar kurang lebih kira-kira hampir paling sedikit banyak tahun
    mulai sejak berlaku seterusnya selanjutnya
    amount amounts amounted totals totalled totaled stands stood reached reaches value worth figure recorded
    planned budgeted allocated set targeted projected about around approximately roughly nearly almost
    percent rupiahs billion million trillion thousand year years
""")

# English government vocabulary → Indonesian words (stemmed at load time by language.textunits, so keys always
# agree with what the stemmer makes of passages).
BILINGUAL: dict[str, tuple[str, ...]] = {
    name: tuple(value.split())
    for name, value in _table("""
        budget budgets budgeted appropriation: anggaran
        revenue revenues: pendapatan penerimaan
        income: pendapatan penghasilan
        receipts receipt: penerimaan
        expenditure expenditures spending expense expenses outlay: belanja
        financing: pembiayaan
        finance financial: keuangan
        tax taxes: pajak perpajakan
        taxation: perpajakan
        levy: retribusi pungutan
        levies fee fees: retribusi
        state: negara
        national: nasional negara
        central: pusat
        government: pemerintah
        regional region local regional-owned: daerah
        province provincial: provinsi
        regency district districts: kabupaten
        city cities: kota
        village villages: desa gampong
        education educational: pendidikan
        health healthcare: kesehatan
        office: dinas kantor
        agency: badan dinas
        department official: dinas
        board: badan
        secretariat: sekretariat
        social: sosial
        agriculture: pertanian
        plantation: perkebunan
        livestock: peternakan
        food: pangan makanan
        tourism: pariwisata
        culture: kebudayaan
        transport transportation: perhubungan
        housing: perumahan
        settlement settlements: permukiman
        manpower: tenaga kerja
        labour labor: kerja
        employee employees personnel staff: pegawai
        goods: barang
        services utilities: jasa
        service: jasa pelayanan
        capital: modal
        grant grants: hibah
        assistance aid: bantuan
        subsidy subsidies: subsidi
        transfer transfers: transfer
        fund funds: dana
        special: khusus
        autonomy: otonomi
        general: umum
        allocation: alokasi
        balancing: perimbangan
        debt: utang
        loan loans: pinjaman
        interest: bunga
        deficit: defisit
        surplus: surplus
        original own-source own: asli
        source: sumber
        non-tax: bukan pajak
        motor: motor
        vehicle vehicles: kendaraan
        fuel: bahan bakar
        water: air
        environment: lingkungan
        forestry: kehutanan
        forest: hutan
        women: perempuan
        empowerment: pemberdayaan
        child children: anak
        protection: perlindungan
        population residents: penduduk
        poverty: kemiskinan
        poor: miskin
        unemployment: pengangguran
        inflation: inflasi
        growth: pertumbuhan
        economic economy: ekonomi
        law laws: undang
        regulation regulations: peraturan
        decree: keputusan
        article: pasal
        paragraph: ayat
        annex: lampiran
        chapter: bab
        provision provisions: ketentuan
        council: dewan
        representatives: perwakilan
        people: rakyat
        minister: menteri
        ministry: kementerian
        governor: gubernur
        regent: bupati
        mayor: walikota
        president: presiden
        fiscal: anggaran fiskal
        revised amendment amended: perubahan
        realization realisation: realisasi
        target: target
        salary salaries: gaji
        allowance allowances: tunjangan
        honorarium honoraria: honorarium
        travel: perjalanan
        meeting meetings: rapat
        meals: makanan
        drinks: minuman
        rent rental: sewa
        building buildings: bangunan gedung
        equipment: peralatan alat
        stationery: alat tulis
        training: pelatihan
        maintenance: pemeliharaan
        procurement: pengadaan
        road roads: jalan
        bridge: jembatan
        hospital: rumah sakit
        school schools: sekolah
        islamic: islam
        sharia: syariat
        religious: agama
        library: perpustakaan
        archives: kearsipan arsip
        communication: komunikasi
        information: informasi
        planning: perencanaan
        development: pembangunan
        inspectorate: inspektorat
        civil: sipil
        police: polisi
        security: keamanan
        investment: penanaman modal investasi
        cooperative cooperatives: koperasi
        small: kecil
        medium: menengah
        enterprises business: usaha
        fine fines: denda
        prison imprisonment: penjara
        sanction: sanksi
        members member: anggota
        term: masa
        period: periode masa
        semester: semester
        quarter: triwulan
        persons: orang
        recipients recipient: penerima
        contribution: sumbangan
        share: bagian
        profit: laba
        oil: minyak
        gas: gas
        natural: alam
        resources: sumber daya
        mining: pertambangan
        customs duty: bea
        excise: cukai
        import: impor
        export: ekspor
        sales: penjualan
        management: pengelolaan
        implementation: pelaksanaan
        administration: penyelenggaraan administrasi
        organisation: penyelenggaraan
        activities activity: kegiatan
        program programme: program
        receive received: menerima
        sub-district: kecamatan
        plan: rencana
        payment payments: pembayaran
        electricity: listrik
        telephone: telepon
        office-supplies: alat
    """).items()
}

# Acronyms → the words of their expansion, so "APBN" grounds "Anggaran Pendapatan dan Belanja Negara".
ACRONYMS: dict[str, tuple[str, ...]] = {
    name: tuple(value.split())
    for name, value in _table("""
        apbn: anggaran pendapatan belanja negara
        apbd: anggaran pendapatan belanja daerah
        apba: anggaran pendapatan belanja aceh
        apbk: anggaran pendapatan belanja kabupaten
        pad: pendapatan asli daerah
        pnbp: penerimaan negara bukan pajak
        dau: dana alokasi umum
        dak: dana alokasi khusus
        dbh: dana bagi hasil
        otsus: otonomi khusus
        skpd: satuan kerja perangkat daerah
        dpra: dewan perwakilan rakyat aceh
        dprd: dewan perwakilan rakyat daerah
        dpr: dewan perwakilan rakyat
        pkb: pajak kendaraan bermotor
        bbnkb: bea balik nama kendaraan bermotor
        pbbkb: pajak bahan bakar kendaraan bermotor
        tkd: transfer daerah
        bpka: badan pengelolaan keuangan aceh
        bappeda: badan perencanaan pembangunan daerah
        pupr: pekerjaan umum perumahan rakyat
        umkm: usaha mikro kecil menengah
        ukm: usaha kecil menengah
        pns: pegawai negeri sipil
        asn: aparatur sipil negara
        bumn: badan usaha milik negara
        bumd: badan usaha milik daerah
        uu: undang
        pp: peraturan pemerintah
        perpres: peraturan presiden
        perda: peraturan daerah
        pph: pajak penghasilan
        ppn: pajak pertambahan nilai
        lhk: lingkungan hidup kehutanan
        kominfo: komunikasi informatika
        bkd: badan kepegawaian daerah
        bpsdm: badan pengembangan sumber daya manusia
        mpu: majelis permusyawaratan ulama
        maa: majelis adat aceh
        bra: badan reintegrasi aceh
        rsud: rumah sakit umum daerah
    """).items()
}

# Words naming the other member of a pair: a claim word of one side, unknown to the passage, where the passage
# writes the other side, names another entity ("impor" for "ekspor"), however tolerant the paraphrase check.
CONTRASTS: dict[str, frozenset[str]] = {}
# "|" separates groups; "/" the sides of a group; words of one side are synonyms.
for _group in """
    ekspor / impor | masuk / keluar | intern internal / ekstern eksternal | pusat / daerah | luar / dalam |
    barat / timur / utara / selatan / tengah | provinsi / kabupaten / kota / desa |
    pendapatan penerimaan / belanja pengeluaran | surplus / defisit | positif / negatif | bruto / neto |
    umum reguler / khusus | target rencana sasaran pagu / realisasi | tetap / sementara | badan / pribadi |
    penjara / kurungan | pertama / terakhir |
    awal / akhir | domestik / asing | nominal / riil | primer / sekunder | pokok / bunga |
    minimum / maksimum |
    harian / mingguan / bulanan / tahunan |
    import / export | internal / external | central / regional | domestic / foreign |
    revenue revenues income / expenditure expenditures spending | deficit / surplus | positive / negative |
    gross / net | general / special | first / last | minimum / maximum | daily / weekly / monthly / annual |
    private / public | principal / interest
""".split("|"):
    _sides = [frozenset(side.split()) for side in _group.split("/")]
    for _side in _sides:
        for _word in _side:
            CONTRASTS[_word] = frozenset().union(*(other for other in _sides if other is not _side))

# Synonyms of budget and statute language: a restatement may use any word of a group for another.
SYNONYMS: dict[str, frozenset[str]] = {}
for _group in """
    target sasaran rencana direncanakan ditargetkan pagu plafon |
    dipidana diancam hukuman pidana | termasuk mencakup meliputi | memperoleh mendapat mendapatkan menerima |
    ditetapkan ditentukan | mampu dapat sanggup |
    dikenai dikenakan | dibayar disetor dilunasi | pembayaran pelunasan penyetoran | wajib harus |
    porsi bagian proporsi
""".split("|"):
    _members = frozenset(_group.split())
    for _word in _members:
        SYNONYMS[_word] = _members - {_word}

# Words the polarity and bound checks own; entity and coverage checks leave them alone.
MARKER_WORDS = frozenset(
    part
    for phrase in (*APPROX_MARKERS, *BOUND_MARKERS)
    for word in phrase.split()
    for part in (word, *word.split("-"))  # the tokenizer splits "sekurang-kurangnya" in two
) | (NEGATIONS | DIRECTION_UP | DIRECTION_DOWN | {"lebih", "kurang", "paling"})
