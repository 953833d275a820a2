"""Picks the files of the ``dupguard-runtime`` distribution: ``dupguard/runtime/**`` only.

The sources live in the repository's ``src/dupguard/runtime`` (two folders up from here); an
sdist of this distribution carries a copy under ``src/dupguard/runtime``, so a wheel built
from the sdist finds them there. Only ``.py`` files are taken (never ``__pycache__``), plus
``py.typed``, which marks the runtime as typed on its own. ``dupguard/__init__.py`` is *not*
shipped: it belongs to the ``dupguard`` distribution, and without it ``dupguard`` is a
namespace package (PEP 420), which is all ``from dupguard.runtime import ...`` needs.
"""

from __future__ import annotations

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def runtime_sources(root: Path) -> Path:
    for base in (root.parent.parent / "src", root / "src"):
        package = base / "dupguard" / "runtime"
        if (package / "__init__.py").is_file():
            return package
    raise FileNotFoundError(f"dupguard/runtime sources not found from {root}")


class RuntimeFiles(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        package = runtime_sources(Path(self.root).resolve())
        prefix = "src/dupguard/runtime" if self.target_name == "sdist" else "dupguard/runtime"
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" not in path.parts:
                build_data["force_include"][str(path)] = f"{prefix}/{path.relative_to(package).as_posix()}"
        # the repository marks the whole package typed (src/dupguard/py.typed); the sdist
        # carries that marker inside the runtime folder, where the wheel needs it
        for typed in (package.parent / "py.typed", package / "py.typed"):
            if typed.is_file():
                build_data["force_include"][str(typed)] = f"{prefix}/py.typed"
                break
