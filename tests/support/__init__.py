"""What several test folders share: fakes on the real ABCs (engines, judges, writers, retrievers), builders of
segments, passages and budgets, the in-process service around them, and network helpers."""
