#!/usr/bin/env python3
"""The floors a LibCST linter is measured against: bare loops over a list of files, one process.

Why: bench/RESULTS.md's targets promise that dupguard costs little more than parsing with LibCST and
walking the tree once, so the benchmark needs those floors measured on exactly the files the
linter sees, in the same run. ``bench/run.py`` starts this script as a subprocess (so that its
wall time includes interpreter start-up and the ``import libcst``, like the linter's does).

Usage: ``python bench/loops.py MODE FILELIST`` with MODE one of

* ``cst-parse``: ``libcst.parse_module`` per file;
* ``cst-visit``: the same plus one walk with an empty ``libcst.CSTVisitor``;
* ``ast-parse``: ``ast.parse`` per file.

Files are decoded the way the linter decodes them (BOM / PEP 263 cookie). Files that do not
parse are counted, not fatal. Prints one JSON line: files, failures, in-process seconds.
"""

from __future__ import annotations

import io
import json
import sys
import time
import tokenize


def _decode(data: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text.removeprefix("\ufeff")


def main(argv: list[str]) -> int:
    mode, listfile = argv
    with open(listfile, encoding="utf-8") as handle:
        paths = [line.rstrip("\n") for line in handle if line.strip()]
    start = time.perf_counter()
    failures = 0
    if mode == "ast-parse":
        import ast

        for path in paths:
            with open(path, "rb") as f:
                data = f.read()
            try:
                ast.parse(_decode(data), path)
            except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
                failures += 1
    elif mode in ("cst-parse", "cst-visit"):
        import libcst as cst

        visitor = cst.CSTVisitor() if mode == "cst-visit" else None
        for path in paths:
            with open(path, "rb") as f:
                data = f.read()
            try:
                module = cst.parse_module(_decode(data))
            except (cst.ParserSyntaxError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
                failures += 1
                continue
            if visitor is not None:
                module.visit(visitor)
    else:
        print(f"unknown mode {mode!r}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start
    print(json.dumps({"mode": mode, "files": len(paths), "failures": failures, "seconds": elapsed}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
