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
ACEH_INDEX_DIR ?= .aceh/index
export ACEH_INDEX_DIR
ACEH_DATABASE_URL ?= sqlite:///.aceh/aceh.db
export ACEH_DATABASE_URL

.PHONY: install index serve test lint bench schemas clean

install: $(STAMP)

# torch is pinned here, not in pyproject.toml: 2.13.0 is the CPU wheel this machine carries, an
# unpinned torch would pull several GB of CUDA builds.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[cpu,dev]'
	touch $(STAMP)

index: install
	@test -f $(ACEH_INDEX_DIR)/manifest.json || $(BIN)/aceh-rag ingest configs/demo_corpus --index $(ACEH_INDEX_DIR)

serve: index
	@echo "aceh-rag: serving the demo corpus at http://127.0.0.1:$${ACEH_PORT:-8000} (X-API-Key: one of ACEH_API_KEYS)"
	ACEH_CORPUS=configs/demo_corpus $(BIN)/aceh-rag serve

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy .

schemas: install
	$(BIN)/python -m serve_app.wire.schema_export

bench: index
	$(BIN)/aceh-rag bench --help

clean:
	rm -rf .aceh
