#!/usr/bin/env python3
"""Where dupguard's time goes, per phase, in one process: CPU seconds over a set of files.

Why: ``bench/run.py`` says *whether* a target holds; when one fails, this says *which part*
is to blame (decode, prefilter, parse, the model builder's one traversal, each rule, the
positions pass, the fix edits), so the fix goes to the right place. It repeats the engine's
steps for one file (``dupguard.pipeline.lint_text``) with a CPU clock (``time.process_time``, so
that other load on the machine does not count) around each.

Usage: ``python bench/phases.py PATH... [--top N]`` (files or directories).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--top", type=int, default=5, help="show the N slowest files")
    ap.add_argument(
        "--fixes", action="store_true", help="build fixes too, as for --output-format json (plain check does not)"
    )
    args = ap.parse_args(argv)
    clock = time.process_time
    t = defaultdict(float)
    start = clock()

    from dupguard.config import Settings
    from dupguard.parsing import parse_module
    from dupguard.pipeline import decode, extra_modules
    from dupguard.prefilter import might_matter
    from dupguard.rules import RuleContext, load
    from dupguard.semantic.builder import build_model
    from dupguard.semantic.catalog_loader import catalog_for
    from dupguard.semantic.positions import Positions

    settings = Settings(with_fixes=args.fixes)  # the engine builds fixes only when the report shows them
    codes = sorted(settings.enabled_codes())
    rules = load()
    catalog = catalog_for(settings)
    extra = extra_modules(settings)
    t["imports"] = clock() - start
    files: list[Path] = []
    for p in map(Path, args.paths):
        files.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    per_file: list[tuple[float, str]] = []
    n_parsed = n_findings = 0
    for path in files:
        f0 = clock()
        a = clock()
        text, _ = decode(path.read_bytes())
        t["read+decode"] += clock() - a
        a = clock()
        keep = might_matter(text, extra)
        t["prefilter"] += clock() - a
        if not keep:
            continue
        n_parsed += 1
        a = clock()
        try:
            module = parse_module(text)
        except Exception:
            continue
        t["parse"] += clock() - a
        a = clock()
        model = build_model(module, catalog, settings)
        t["build_model"] += clock() - a
        ctx = RuleContext(Positions(module))
        findings = []
        for code in codes:
            a = clock()
            found = list(rules[code](model, ctx))
            t[f"rule {code}"] += clock() - a
            findings.extend((code, f) for f in found)
        a = clock()
        for _, f in findings:
            ctx.positions.range(f.node)
        t["positions"] += clock() - a
        a = clock()
        if settings.with_fixes and any(f.fix is not None for _, f in findings):
            from dupguard.edits import ReportFixes
            from dupguard.fixes import FixContext

            fixes = ReportFixes(FixContext(module, model, ctx.positions, text))
            for code, f in findings:
                if f.fix is not None:
                    fixes.fix(code, f)
        t["fix edits (report)"] += clock() - a
        n_findings += len(findings)
        per_file.append((clock() - f0, str(path)))
    total = clock() - start
    print(f"{len(files)} files, {n_parsed} parsed, {n_findings} findings, {total:.2f} CPU s in all")
    for name, value in sorted(t.items(), key=lambda kv: -kv[1]):
        print(
            f"  {name:<24} {value:8.3f} s  {100 * value / total:5.1f}%"
            + (f"  {1000 * value / max(n_parsed, 1):7.2f} ms/parsed file" if name != "imports" else "")
        )
    for seconds, name in sorted(per_file, reverse=True)[: args.top]:
        print(f"  slowest: {seconds * 1000:8.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
