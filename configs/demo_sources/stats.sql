-- FICTIONAL demo statistics (issue 21): invented regions and invented figures, for showing the sql_query
-- tool only. Nothing here describes a real place. Built into stats.sqlite by
-- `python -m serve_app.runtime.demo_sources build`.
CREATE TABLE keterangan (catatan TEXT NOT NULL);
INSERT INTO keterangan VALUES ('Data fiktif untuk demo aceh-rag; wilayah dan angka dikarang, bukan data resmi.');

CREATE TABLE penduduk_kecamatan (
  kabupaten TEXT NOT NULL,
  kecamatan TEXT NOT NULL,
  tahun INTEGER NOT NULL,
  penduduk INTEGER NOT NULL
);
INSERT INTO penduduk_kecamatan VALUES
  ('Teluk Rekaan', 'Lhok Fiksi', 2023, 41250),
  ('Teluk Rekaan', 'Ujong Contoh', 2023, 28730),
  ('Teluk Rekaan', 'Blang Khayal', 2023, 17415),
  ('Teluk Rekaan', 'Lhok Fiksi', 2022, 40980),
  ('Teluk Rekaan', 'Ujong Contoh', 2022, 28410),
  ('Teluk Rekaan', 'Blang Khayal', 2022, 17202),
  ('Bukit Karangan', 'Gampong Andaian', 2023, 35120),
  ('Bukit Karangan', 'Krueng Semu', 2023, 22964);

CREATE TABLE sekolah_kabupaten (
  kabupaten TEXT NOT NULL,
  tahun INTEGER NOT NULL,
  jenjang TEXT NOT NULL,
  jumlah_sekolah INTEGER NOT NULL
);
INSERT INTO sekolah_kabupaten VALUES
  ('Teluk Rekaan', 2023, 'SD', 96),
  ('Teluk Rekaan', 2023, 'SMP', 31),
  ('Teluk Rekaan', 2023, 'SMA', 14),
  ('Bukit Karangan', 2023, 'SD', 71),
  ('Bukit Karangan', 2023, 'SMP', 22),
  ('Bukit Karangan', 2023, 'SMA', 9);
