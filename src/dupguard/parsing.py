"""``libcst.parse_module``, with the per-node costs of libcst's dataclasses taken out.

Parsing is most of ``check``'s time on agent code (bench/RESULTS.md), and most of a parse is
libcst's Python side: the native parser calls each node class once per node, and each call
pays for two things that a parser's output does not need.

1. **Validation.** ``CSTNode.__post_init__`` checks every node when it is constructed: a guard
   against mistakes in nodes built by hand, as codemods do. Nodes the native parser builds
   from source it accepted are valid by construction, yet the checks cost about 15% of a
   parse (tuning step 9). libcst's own source notes the waste ("PERF: ... would allow us to
   avoid validating the tree when parsing a file", ``libcst/_nodes/base.py``). So while the
   parser runs, ``CSTNode.__post_init__`` does nothing; it is put back before anything else
   happens, and codemods are still checked. (Another thread building nodes during a parse
   would skip its checks too: nothing in dupguard does.)
2. **Frozen-dataclass stores.** The ``__init__`` that ``dataclasses`` writes for a frozen class
   stores each field with ``object.__setattr__(self, name, value)``, which looks the slot up
   through the class's MRO on every call. :func:`_install_direct_constructors` gives the node
   classes that make up most of a parse an ``__init__`` with the same parameters, defaults and
   ``__post_init__`` call that stores through the slot's descriptor (or the instance
   ``__dict__``, for the classes that have one) directly: the same objects, ≈ 7% less parse
   time (tuning step 13). It is installed once, when this module is imported; a class it
   cannot mirror exactly (a field that is not an ``__init__`` parameter, a keyword-only
   field, an ``__init__`` not written by ``dataclasses``) keeps its own constructor.

If a libcst release drops ``__post_init__`` or stops using dataclasses, this falls back to the
plain parse.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

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


# The node classes that make up 95% of the nodes in a parse of agent code (counted over corpus
# b and llama_index.core; SimpleWhitespace alone is 41%, Name 13%). Only these get a direct
# constructor: writing one costs a compile (≈ 0.13 ms a class), which for all 344 classes
# would cost a small run more than it saves.
HOT_NODE_CLASSES = (
    "SimpleWhitespace", "Name", "Newline", "TrailingWhitespace", "Dot", "Attribute",
    "SimpleStatementLine", "Arg", "Comma", "ParenthesizedWhitespace", "Call", "EmptyLine",
    "SimpleString", "AssignEqual", "Annotation", "AssignTarget", "Assign", "LeftSquareBracket",
    "RightSquareBracket", "IndentedBlock", "ImportAlias", "Param", "SubscriptElement", "Index",
    "Subscript", "Expr", "ImportFrom", "Element", "Parameters", "FunctionDef",
)


def _direct_constructor_source(kind: type, prefix: str, names: dict[str, object]) -> str | None:
    """Source of ``kind``'s dataclass ``__init__``, as ``{prefix}init``, storing each field
    directly; the objects it refers to (slot setters, defaults, factories) go into ``names``."""
    params, body = [], []
    for i, f in enumerate(dataclasses.fields(kind)):
        if not f.init or f.kw_only:
            return None
        slot = next((k.__dict__[f.name] for k in kind.__mro__ if f.name in k.__dict__), None)
        if hasattr(type(slot), "__set__"):
            names[f"{prefix}s{i}"] = slot.__set__  # type: ignore[union-attr]
            store = f"{prefix}s{i}(self, {{}})"
        elif kind.__dictoffset__:  # instances have a ``__dict__``
            store = f"d[{f.name!r}] = {{}}"
        else:  # pragma: no cover - neither a slot nor an instance dict: not a layout we know
            return None
        if f.default is not dataclasses.MISSING:
            names[f"{prefix}d{i}"] = f.default
            params.append(f"{f.name}={prefix}d{i}")
            value = f.name
        elif f.default_factory is not dataclasses.MISSING:
            names[f"{prefix}f{i}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            value = f"{prefix}f{i}() if {f.name} is _MISSING else {f.name}"
        else:
            params.append(f.name)
            value = f.name
        body.append(store.format(value))
    if any(line.startswith("d[") for line in body):
        body.insert(0, "d = self.__dict__")
    body.append("self.__post_init__()")
    return f"def {prefix}init(self{''.join(', ' + p for p in params)}):\n" + "".join(f"    {line}\n" for line in body)


def _install_direct_constructors() -> dict[type, Callable[..., None]]:
    """Replace the dataclass ``__init__`` of the hot node classes; returns the originals."""
    names: dict[str, object] = {"_MISSING": dataclasses.MISSING}
    sources: dict[type, str] = {}
    for name in HOT_NODE_CLASSES:
        kind = getattr(cst, name, None)
        init = getattr(kind, "__dict__", {}).get("__init__")
        if not dataclasses.is_dataclass(kind) or getattr(getattr(init, "__code__", None), "co_filename", "") != "<string>":
            continue  # not a dataclass, or an ``__init__`` not written by ``dataclasses``
        source = _direct_constructor_source(kind, f"_{name}_", names)
        if source is not None:
            sources[kind] = source
    exec(compile("".join(sources.values()), "<dupguard.parsing constructors>", "exec"), names)
    originals: dict[type, Callable[..., None]] = {}
    for kind in sources:
        originals[kind] = kind.__dict__["__init__"]
        new = names[f"_{kind.__name__}_init"]
        new.__qualname__ = f"{kind.__qualname__}.__init__"  # type: ignore[attr-defined]
        kind.__init__ = new  # type: ignore[misc]
    return originals


# the constructors ``dataclasses`` wrote, by class (tests build reference trees with them)
DATACLASS_CONSTRUCTORS = _install_direct_constructors() if _VALIDATE is not None else {}
