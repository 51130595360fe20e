"""Where the config's relative paths resolve: the checkout, or the copy of ``configs/`` an installed wheel
carries."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# An installed wheel has no repository around it: the build copies configs/ (YAML, policy, demo corpus) into
# the package (setup.py), and that copy is where configs/... paths resolve. Other relative paths of an
# installed service (index, corpus, database) are the operator's and resolve from the working directory.
PACKAGED_ROOT = Path(__file__).resolve().parents[1] / "_data"
INSTALLED = (PACKAGED_ROOT / "configs").is_dir()
DATA_ROOT = PACKAGED_ROOT if INSTALLED else REPO_ROOT
DEFAULT_CONFIG = DATA_ROOT / "configs" / "default.yaml"


def resolve_path(path: str) -> Path:
    """A relative path from the repository root; installed, a file the wheel ships or else the working
    directory's."""
    p = Path(path)
    if p.is_absolute():
        return p
    if not INSTALLED:
        return REPO_ROOT / p
    shipped = PACKAGED_ROOT / p
    return shipped if shipped.exists() else Path.cwd() / p
