"""``libcst.parse_module``, with the per-node costs of libcst's dataclasses taken out.

Parsing is most of ``check``'s time on agent code (bench/RESULTS.md). libcst's native parser
builds the tree by calling, for every node, the class of that name in the ``libcst`` module
with keyword arguments; about a third of a parse is those calls. Two of their costs buy
nothing for a tree parsed from source:

1. **Validation.** ``CSTNode.__post_init__`` checks every node when it is constructed: a guard
   against mistakes in nodes built by hand, as codemods do. Nodes the native parser builds
   from source it accepted are valid by construction, yet the checks cost about 15% of a
   parse (tuning step 9). libcst's own source notes the waste ("PERF: ... would allow us to
   avoid validating the tree when parsing a file", ``libcst/_nodes/base.py``).
2. **The class call.** Calling a class runs ``type.__call__``, ``__new__``, then the
   ``__init__`` that ``dataclasses`` wrote for a frozen class, which stores each field with
   ``object.__setattr__`` (a lookup through the MRO per field) and then calls
   ``__post_init__``. For the node classes that make up 95% of a parse, a plain function that
   makes the object with ``object.__new__`` and stores through each slot's descriptor builds
   the same node for ≈ 10% less parse time (tuning step 13).

So while the parser runs, ``CSTNode.__post_init__`` does nothing and the ``libcst`` module's
names of the hot classes point at those functions; both are put back before anything else
happens, so codemods and any other caller of libcst get libcst as installed, checks included.
(Another thread building nodes during a parse would skip the checks too: nothing in dupguard
does.) If a libcst release changes a hot class so that it cannot be mirrored exactly, that
class is simply left to libcst; if it drops ``__post_init__``, this is the plain parse.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

_VALIDATE = cst.CSTNode.__dict__.get("__post_init__")

# The node classes that make up 95% of the nodes in a parse of agent code (counted over
# corpus b and llama_index.core; SimpleWhitespace alone is 41%, Name 13%). Writing a factory
# costs a compile (≈ 0.13 ms a class), which for all 344 classes would cost a small run more
# than it saves.
HOT_NODE_CLASSES = (
    "SimpleWhitespace",
    "Name",
    "Newline",
    "TrailingWhitespace",
    "Dot",
    "Attribute",
    "SimpleStatementLine",
    "Arg",
    "Comma",
    "ParenthesizedWhitespace",
    "Call",
    "EmptyLine",
    "SimpleString",
    "AssignEqual",
    "Annotation",
    "AssignTarget",
    "Assign",
    "LeftSquareBracket",
    "RightSquareBracket",
    "IndentedBlock",
    "ImportAlias",
    "Param",
    "SubscriptElement",
    "Index",
    "Subscript",
    "Expr",
    "ImportFrom",
    "Element",
    "Parameters",
    "FunctionDef",
)


def _skip(self: cst.CSTNode) -> None:
    return None


def _factory_source(kind: type, names: dict[str, object]) -> str | None:
    """Source of ``_{kind}_make``: the parameters and defaults of ``kind``'s dataclass
    ``__init__``, building the node without calling the class. The objects it refers to (the
    class, slot setters, defaults, default factories) go into ``names``."""
    init = kind.__dict__.get("__init__")
    if not dataclasses.is_dataclass(kind) or getattr(getattr(init, "__code__", None), "co_filename", "") != "<string>":
        return None  # not an ``__init__`` that ``dataclasses`` wrote: not a layout we know
    prefix = f"_{kind.__name__}_"
    names[f"{prefix}class"] = kind
    params, body = [], [f"node = _new({prefix}class)"]
    for i, f in enumerate(dataclasses.fields(kind)):
        if not f.init or f.kw_only:
            return None
        slot = next((k.__dict__[f.name] for k in kind.__mro__ if f.name in k.__dict__), None)
        if hasattr(type(slot), "__set__"):
            names[f"{prefix}s{i}"] = slot.__set__  # type: ignore[union-attr]
            store = f"{prefix}s{i}(node, {{}})"
        elif kind.__dictoffset__:  # instances have a ``__dict__``
            store = f"node.__dict__[{f.name!r}] = {{}}"
        else:  # pragma: no cover - neither a slot nor an instance dict
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
    body.append("return node")
    return f"def {prefix}make({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)


def _factories() -> dict[str, Callable[..., cst.CSTNode]]:
    """The hot classes' factories, by the class's name in the ``libcst`` module."""
    names: dict[str, object] = {"_MISSING": dataclasses.MISSING, "_new": object.__new__}
    sources = {}
    for name in HOT_NODE_CLASSES:
        kind = getattr(cst, name, None)
        source = _factory_source(kind, names) if isinstance(kind, type) and kind.__name__ == name else None
        if source is not None:
            sources[name] = source
    exec(compile("".join(sources.values()), "<dupguard.parsing factories>", "exec"), names)
    return {name: names[f"_{name}_make"] for name in sources}  # type: ignore[misc]


FACTORIES = _factories() if _VALIDATE is not None else {}
_CLASSES = {name: getattr(cst, name) for name in FACTORIES}


def parse_module(source: str | bytes) -> cst.Module:
    if _VALIDATE is None:  # pragma: no cover - a libcst without per-node validation
        return cst.parse_module(source)
    namespace = vars(cst)
    cst.CSTNode.__post_init__ = _skip  # type: ignore[method-assign]
    namespace.update(FACTORIES)
    try:
        return cst.parse_module(source)
    finally:
        namespace.update(_CLASSES)
        cst.CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]
