"""Generate ``docs/rules/`` from the ``rules/`` folders: one page per rule and an index.

Run ``python -m dupguard.docgen`` after editing a rule folder; a test fails when the
committed pages differ from what this produces.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .rulemeta import RuleMeta, all_rules


def rule_page(meta: RuleMeta) -> str:
    bad = (meta.folder / "bad.py").read_text(encoding="utf-8")
    good = (meta.folder / "good.py").read_text(encoding="utf-8")
    parts = [
        f"# {meta.name} ({meta.code})\n",
        f"{meta.summary}.\n",
        f"- Fix: **{meta.fix}**",
        f"- Runtime fix: {meta.runtime_fix}" if meta.runtime_fix else "",
        f"- Source: seed {meta.seed}\n" if meta.seed else "",
        meta.doc.rstrip() + "\n",
        "## Flagged examples (`bad.py`)\n",
        f"```python\n{bad.rstrip()}\n```\n",
        "## Near-misses that stay clean (`good.py`)\n",
        f"```python\n{good.rstrip()}\n```\n",
    ]
    return "\n".join(p for p in parts if p) + ""


def index_page(metas: dict[str, RuleMeta]) -> str:
    lines = [
        "# Rules\n",
        "Generated from `rules/*/` by `python -m dupguard.docgen`; do not edit by hand.\n",
        "| code | name | summary | fix | runtime fix |",
        "|---|---|---|---|---|",
    ]
    for meta in metas.values():
        lines.append(
            f"| [{meta.code}]({meta.code}.md) | {meta.name} | {meta.summary} | {meta.fix} | {meta.runtime_fix} |"
        )
    return "\n".join(lines) + "\n"


def render() -> dict[str, str]:
    metas = all_rules()
    pages = {f"{code}.md": rule_page(meta) for code, meta in metas.items()}
    pages["index.md"] = index_page(metas)
    return pages


def main(out_dir: str = "docs/rules") -> int:
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    pages = render()
    for stale in target.glob("*.md"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        (target / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
