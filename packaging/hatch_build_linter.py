"""Build hook of the ``dupguard`` wheel: it depends on ``dupguard-runtime`` at the same version.

The wheel excludes ``dupguard/runtime`` (see ``exclude`` in pyproject.toml): those files are
shipped by the ``dupguard-runtime`` distribution (packaging/dupguard-runtime), so no file
belongs to two distributions and ``pip install dupguard`` still brings ``dupguard.runtime``.
The requirement is added to *standard* wheels only: an editable install puts ``src/`` on the
path, which has the runtime already, so a development checkout needs no published
``dupguard-runtime`` to install.
"""

from __future__ import annotations

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class LinterWheel(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if version == "standard":
            build_data["dependencies"].append(f"dupguard-runtime=={self.metadata.version}")
