"""Rule metadata, read from the ``rules/<CODE>-<name>/`` folders.

Those folders are the single source of every rule's name, summary, fix safety and docs;
the tests and ``docs/rules/`` are generated from them too. They ship inside the wheel as
``dupguard/_rules`` and are read from the source tree in a development checkout.
Metadata is loaded lazily: linting a file needs only codes, not docs.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import NamedTuple

DOCS_URL = "https://github.com/dupguard/dupguard/blob/main/docs/rules/{code}.md"


class RuleMeta(NamedTuple):
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


def toml_loads(text: str) -> dict:
    """``tomllib.loads`` (tomli before 3.11), imported on first use: most runs read no TOML.

    Raises ``ValueError`` (``TOMLDecodeError`` is one) on invalid TOML.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)


@functools.lru_cache(maxsize=1)
def rule_codes() -> tuple[str, ...]:
    """The codes alone, from the folder names (``DUP101-shared-agent-singleton``): linting
    needs only these, and reading them costs no TOML parsing (tests check they agree)."""
    return tuple(sorted(f.name.partition("-")[0] for f in rules_dir().glob("DUP*-*") if f.is_dir()))


@functools.lru_cache(maxsize=1)
def all_rules() -> dict[str, RuleMeta]:
    metas = {}
    for toml_path in sorted(rules_dir().glob("*/rule.toml")):
        data = toml_loads(toml_path.read_text(encoding="utf-8"))
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
