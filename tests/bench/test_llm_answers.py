"""benchmarks/llm_vllm_answers.py without a model server: which questions, which index, which roles."""

from __future__ import annotations

from pathlib import Path

from benchmarks.llm_vllm_answers import arm_config, pick_index, subset


def test_subset_takes_the_first_questions_by_id() -> None:
    questions = [{"id": "q-3"}, {"id": "q-1"}, {"id": "q-2"}]
    assert [q["id"] for q in subset(questions, 2)] == ["q-1", "q-2"]
    assert [q["id"] for q in subset(questions, None)] == ["q-1", "q-2", "q-3"]


def test_pick_index_wants_a_manifest(tmp_path: Path) -> None:
    assert pick_index(str(tmp_path)) is None
    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    assert pick_index(str(tmp_path)) == tmp_path


def test_the_two_arms_differ_only_in_their_roles(tmp_path: Path) -> None:
    env = {"ACEH_API_KEYS": "k", "ACEH_INDEX_DIR": str(tmp_path)}
    llm = arm_config("llm", env, "http://127.0.0.1:9/v1", "smollm2")
    embedded = arm_config("embedded", env, "http://127.0.0.1:9/v1", "smollm2")
    for role in ("agent", "framing", "judge"):
        assert getattr(llm.roles, role).engine == "openai"
        assert getattr(llm.roles, role).base_url == "http://127.0.0.1:9/v1"
        assert getattr(embedded.roles, role).engine == "embedded"
    assert llm.model_servers == [] and embedded.model_servers == []
    assert llm.retrieval == embedded.retrieval and llm.budgets == embedded.budgets
