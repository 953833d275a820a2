"""Rule metadata, read from the ``rules/<CODE>-<name>/`` folders.

Those folders are the single source of every rule's name, summary, fix safety and docs;
the tests and ``docs/rules/`` are generated from them too. They ship inside the wheel as
``dupguard/_rules`` and are read from the source tree in a development checkout.
Metadata is loaded lazily: linting a file needs only codes, not docs.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DOCS_URL = "https://github.com/dupguard/dupguard/blob/main/docs/rules/{code}.md"


@dataclass(frozen=True)
class RuleMeta:
    code: str
    name: str
    summary: str
    fix: str  # "none" | "safe" | "unsafe"
    runtime_fix: str
    seed: str
    folder: Path

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    @property
    def doc(self) -> str:
        return (self.folder / "doc.md").read_text(encoding="utf-8")


def rules_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "_rules", here.parent.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("dupguard's rules/ folder is missing from this installation")


@functools.lru_cache(maxsize=1)
def all_rules() -> dict[str, RuleMeta]:
    metas = {}
    for toml_path in sorted(rules_dir().glob("*/rule.toml")):
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        meta = RuleMeta(
            code=data["code"],
            name=data["name"],
            summary=data["summary"],
            fix=data.get("fix", "none"),
            runtime_fix=data.get("runtime_fix", ""),
            seed=data.get("seed", ""),
            folder=toml_path.parent,
        )
        metas[meta.code] = meta
    return metas
