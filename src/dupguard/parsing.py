"""``libcst.parse_module`` without re-checking every node the parser builds.

libcst checks each node when it is constructed (``CSTNode.__post_init__`` calls
``_validate``): a guard against mistakes in nodes built by hand, as codemods do. Nodes the
native parser builds from source it accepted are valid by construction, yet the checks cost
about 15% of parsing a large file, and parsing is most of ``check``'s time on agent code
(bench/RESULTS.md, tuning step 9). libcst's own source notes the waste ("PERF: ... would allow
us to avoid validating the tree when parsing a file", ``libcst/_nodes/base.py``).

So while the parser runs, ``CSTNode.__post_init__`` does nothing, and it is put back before
anything else happens; codemods, which build nodes by hand, are still checked. Another
thread building nodes during a parse would skip its checks too: nothing in dupguard does.
If a libcst release drops ``__post_init__``, this falls back to the plain parse.
"""

from __future__ import annotations

import libcst as cst

_VALIDATE = cst.CSTNode.__dict__.get("__post_init__")


def _skip(self: cst.CSTNode) -> None:
    return None


def parse_module(source: str | bytes) -> cst.Module:
    if _VALIDATE is None:  # pragma: no cover - a libcst without per-node validation
        return cst.parse_module(source)
    cst.CSTNode.__post_init__ = _skip  # type: ignore[method-assign]
    try:
        return cst.parse_module(source)
    finally:
        cst.CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]
