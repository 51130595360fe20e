from __future__ import annotations

from retrieval.querying import corpus_query, diversify, is_english


def test_english_question_gains_the_indonesian_words_of_its_lexicon_terms() -> None:
    query = "How much capital expenditure does the regional budget plan?"
    assert is_english(query)
    expanded = corpus_query(query)
    assert expanded.startswith(query)
    assert {"belanja", "modal", "anggaran", "daerah"} <= set(expanded.split())


def test_indonesian_question_and_quoted_names_stay_as_asked() -> None:
    for query in ("Berapa belanja modal dalam APBD 2020?", "Berapa anggaran (state budget) untuk jalan?"):
        assert not is_english(query)
        assert corpus_query(query) == query
    # an Indonesian name quoted in an English question does not make it Indonesian
    assert is_english("What does the law say about (Belanja Pegawai Daerah) in the budget?")


def test_diversify_keeps_other_documents_in_view() -> None:
    items = [("a", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 5), ("a", 6), ("c", 7), ("d", 8)]
    # half of 4 places: the best of "a" and of "b" stay; the best of the rest fill the other two
    assert diversify(items, lambda x: x[0], 0.5, 4) == [("a", 1), ("a", 2), ("a", 3), ("b", 5)]
    assert diversify(items, lambda x: x[0], 0.75, 4) == [("a", 1), ("a", 2), ("b", 5), ("c", 7)]
    assert diversify(items, lambda x: x[0], 1.0, 4) == [("a", 1), ("b", 5), ("c", 7), ("d", 8)]
    assert diversify(items, lambda x: x[0], 0.0, 3) == items[:3]


def test_english_regulation_names_are_written_the_indonesian_way() -> None:
    from retrieval.legal import find_references

    for query, code, number, year in (
        ("What does Law 21/2001 say about special autonomy?", "UU", "21", 2001),
        ("What does Law No. 13 of 2003 say about annual leave?", "UU", "13", 2003),
        ("What does Government Regulation Number 12 of 2019 say on budgets?", "PP", "12", 2019),
    ):
        refs = find_references(corpus_query(query))
        assert [(r.doc_type, r.number, r.year) for r in refs] == [(code, number, year)]
    # an Indonesian question is left as asked
    assert corpus_query("Apa isi Law 21/2001?") == "Apa isi Law 21/2001?"
