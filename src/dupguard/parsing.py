"""Source text → libcst tree, for ``check`` (the engine) and bench/phases.py.

The tree is exactly ``libcst.parse_module``'s. Parsing is most of ``check``'s time on agent
code (bench/RESULTS.md), so by default the parse skips libcst's per-node checks and builds the
most frequent nodes without calling their classes: a shortcut through libcst's internals that
lives in ``dupguard.cstfast`` with the others, and that ``DUPGUARD_PLAIN_LIBCST=1`` turns off.
"""

from __future__ import annotations

import libcst as cst

from . import cstfast


def parse_module(source: str | bytes) -> cst.Module:
    """``libcst.parse_module(source)``; raises what it raises (``ParserSyntaxError``...)."""
    if cstfast.enabled():
        return cstfast.parse_module(source)
    return cst.parse_module(source)
