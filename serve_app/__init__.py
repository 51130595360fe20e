"""aceh-rag's service: the Ray Serve graph over plain objects that also run in one process.

Read the request's path by folder and file name:

``app.py`` (the graph, every ``.bind()``) → ``guard/`` (auth, limits, policy) → ``ingress.py`` (routes) →
``pipeline.py`` (the ordered steps of one answer) → ``agent/`` (planner, ``tools/``, ``writers/``) →
``answer/`` (compose, annotate, the v1 gate) → ``judge/`` → ``guard/`` → ``wire/`` (schemas, SSE, OpenAPI);
``conversation/`` holds the store and history, ``catalog/`` the serving side of the citation routes and the
v1 artifacts, ``runtime/`` the factory, serve runner and CLI, ``demo/`` the fictional open-data and MCP
servers.

Allowed imports (tests/test_import_rules.py fails when one is crossed):

* shared modules at the top (``errors``, ``budget``, ``config/`` (a package of its sections), ``metrics``,
  ``scope``, ``vocabulary`` (verdicts, unverified and refusal reasons, defined once)) import only each
  other; every layer may import them;
* ``guard/``, ``conversation/`` and ``demo/`` import no other package of serve_app;
* ``answer/`` imports no other package: it owns the segment, claim and verdict types
  (``answer/segments.py``, ``answer/annotation.py``);
* ``agent/`` may import ``answer/`` (it writes segments), never the reverse;
* ``wire/`` may import only the type modules of ``answer/`` (``segments``, ``annotation``) to publish them;
  the response builders live in ``wire/``;
* ``roles.py`` holds one Protocol per role (guard, agent, retriever, annotator, store) and imports the
  packages' types for them; ``pipeline.py`` imports ``roles`` and the role packages but not ``ingress``,
  ``app`` or ``runtime/``; ``ingress.py`` imports the pipeline, ``roles``, ``guard/``, ``catalog/`` and
  ``wire/``;
* ``catalog/`` imports ``answer/`` (table cells), ``guard/`` (the principal), ``conversation/`` (the artifact
  store) and ``wire/``; only
  ``ingress.py`` (and ``app.py``, ``runtime/``) import it;
* only ``app.py`` and ``runtime/`` import everything; nothing imports them but each other;
* the libraries ``retrieval/``, ``judge/`` and ``models/`` import neither Ray nor serve_app.
"""
