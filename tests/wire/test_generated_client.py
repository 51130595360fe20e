"""A client generated from ``/openapi.json`` by a standard generator (openapi-python-client) compiles, imports
and answers: one /query/v2 call, the conversation it made read back by its path parameter, and a refused body
parsed as the declared error. A document the generator warns about fails here."""

from __future__ import annotations

import compileall
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from serve_app.wire.openapi import openapi_document
from tests.conftest import API_KEY
from tests.support.live import serve_demo
from tests.support.service import BUDGET_QUESTION

pytestmark = pytest.mark.slow
PACKAGE = "aceh_rag_openapi_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The generated package on ``sys.path``; its modules are dropped again afterwards."""
    tmp = tmp_path_factory.mktemp("openapi_client")
    document = tmp / "openapi.json"
    document.write_text(json.dumps(openapi_document()), encoding="utf-8")
    config = tmp / "generator.yaml"
    config.write_text("post_hooks: []\n", encoding="utf-8")  # no formatter run: the code as generated
    cli = Path(sys.executable).with_name("openapi-python-client")
    done = subprocess.run(
        [str(cli), "generate", "--path", str(document), "--output-path", str(tmp / PACKAGE), "--meta", "none",
         "--config", str(config)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "warning" not in output.lower() and "error" not in output.lower(), output
    assert compileall.compile_dir(tmp / PACKAGE, quiet=1)
    sys.path.insert(0, str(tmp))
    try:
        yield PACKAGE
    finally:
        sys.path.remove(str(tmp))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _module(package: str, name: str) -> ModuleType:
    return importlib.import_module(f"{package}.{name}")


def test_every_operation_has_a_generated_module(generated: str) -> None:
    document: dict[str, Any] = openapi_document()
    count = sum(len(ops) for ops in document["paths"].values())
    folder = Path(_module(generated, "api.default").__file__ or "").parent
    modules = [p for p in folder.glob("*.py") if not p.name.startswith("__")]
    assert len(modules) == count, sorted(p.name for p in modules)


def test_the_generated_client_makes_a_query_v2_call(
    generated: str, demo_index: Path, demo_retriever: Any, tmp_path: Path
) -> None:
    client_module = _module(generated, "client")
    models = _module(generated, "models")
    query_v2 = _module(generated, "api.default.post_query_v2")
    read_conversation = _module(generated, "api.default.get_conversations_conversation_id")
    with serve_demo(tmp_path, demo_index, demo_retriever) as base:
        client = client_module.Client(base_url=base, headers={"X-API-Key": API_KEY}, timeout=60.0)
        answered = query_v2.sync_detailed(client=client, body=models.QueryV2Request(query=BUDGET_QUESTION))
        assert answered.status_code == 200, answered.content[:300]
        answer = answered.parsed
        assert isinstance(answer, models.QueryV2Response)
        assert answer.schema == "annotate-v2" and answer.claims and answer.answer
        assert answer.faithfulness.verification.value in ("full", "partial", "none")
        view = read_conversation.sync(conversation_id=answer.conversation_id, client=client)
        assert isinstance(view, models.ConversationView) and view.conversation_id == answer.conversation_id
        refused = query_v2.sync_detailed(
            client=client, body=models.QueryV2Request(query=BUDGET_QUESTION, offer_artifacts=True)
        )
        assert refused.status_code == 422 and isinstance(refused.parsed, models.ErrorBody)
        assert refused.parsed.error == "validation_error"
