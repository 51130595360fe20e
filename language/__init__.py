"""The Indonesian/English text and figure core: word tables and the bilingual lexicon (lexicon, bilingual,
bilingual_statute), numbers and figures as written (numbers, figure, digits, spelled, periods, qualifiers,
ocr_runs, ocr_words), legal references (references), sentences, words and stem keys (textunits, regions,
abbreviations).

The rule judge (judge/), retrieval (retrieval/) and the agent and answer roles (serve_app/) all read text
through it. It is the ground floor: it imports nothing of judge, retrieval, models, serve_app or ray
(tests/test_import_rules.py)."""
