#!/bin/sh
# The container images' install steps (deploy/Dockerfile.cpu, deploy/Dockerfile.gpu), also run by
# tests/deploy/test_install.py in a clean virtual environment. No editable install, no source tree: the
# service runs from the wheel that `pip wheel .` builds, and its configs, policy, demo corpus and JSON
# Schemas come from that wheel.
#
#   deploy/install.sh install cpu|gpu VENV WHEEL   venv + pinned dependencies + the wheel, then checks
#   deploy/install.sh demo-index VENV INDEX_DIR    the shipped demo corpus ingested into INDEX_DIR
#   deploy/install.sh container-config VENV FILE   the shipped default config, listening on 0.0.0.0
#
# cpu: deploy/requirements-cpu.txt (every dependency pinned, torch 2.13.0 CPU; `make lock` writes it)
#      installed with --no-deps, then the wheel with --no-deps, then `pip check` (fails on a missing pin).
# gpu: the wheel with its `gpu` extra, resolved by pip (Ray's llm extra pins vLLM, which pins its CUDA torch).
# pip's index settings come from the environment (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
usage() {
    echo "usage: $0 install cpu|gpu VENV WHEEL | demo-index VENV INDEX_DIR | container-config VENV FILE" >&2
    exit 2
}

[ $# -ge 1 ] || usage
step=$1
shift
case "$step" in
install)
    [ $# -eq 3 ] || usage
    variant=$1 venv=$2 wheel=$3
    [ -f "$wheel" ] || { echo "no wheel at $wheel (build it with: pip wheel --no-deps -w DIR .)" >&2; exit 2; }
    python3 -m venv "$venv"
    pip="$venv/bin/python -m pip"
    case "$variant" in
    cpu)
        $pip install --no-deps -r "$HERE/requirements-cpu.txt"
        $pip install --no-deps "$wheel"
        ;;
    gpu)
        $pip install "$wheel[gpu]"
        ;;
    *) usage ;;
    esac
    $pip check
    "$venv/bin/aceh-rag" --help >/dev/null
    echo "installed $(basename "$wheel") ($variant) into $venv" >&2
    ;;
demo-index)
    [ $# -eq 2 ] || usage
    venv=$1 index=$2
    corpus=$("$venv/bin/python" -c 'from serve_app.config import DATA_ROOT; print(DATA_ROOT / "configs" / "demo_corpus")')
    "$venv/bin/aceh-rag" ingest "$corpus" --index "$index"
    ;;
container-config)
    [ $# -eq 2 ] || usage
    venv=$1 out=$2
    # Inside a container 127.0.0.1 is unreachable from outside: the same config with serve.host 0.0.0.0,
    # checked by loading it as the service will.
    "$venv/bin/python" - "$out" <<'PY'
import sys
from pathlib import Path

import yaml

from serve_app.config import DEFAULT_CONFIG, load_config

raw = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
raw["serve"]["host"] = "0.0.0.0"
Path(sys.argv[1]).write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
assert load_config(sys.argv[1], env={}).serve.host == "0.0.0.0"
PY
    ;;
*) usage ;;
esac
