"""Every shortcut dupguard takes through libcst's internals, in one module, with one switch off.

Parsing and walking the tree are most of ``check``'s time on agent code (bench/RESULTS.md).
Four speed-ups get there by relying on how libcst works inside rather than on its documented
API. They live here and nowhere else, so that a libcst upgrade has one file to review; the
modules that use them take each one from here while the switch is on, and use libcst's public
API when it is off:

1. **Parsing without per-node checks** (``parse_module``, for ``dupguard.parsing``). Relies on:
   the native parser building every node by looking its class up *by name in the ``libcst``
   module* at call time; ``CSTNode.__post_init__`` being the only per-node validation; the hot
   node classes (``HOT_NODE_CLASSES``) being dataclasses whose ``__init__`` ``dataclasses``
   wrote, storing each field in a slot. Checked by tests/test_parsing.py: trees
   ``deep_equals`` libcst's on every file of rules/ and tests/corpus, every hot class gets a
   factory, each factory builds what its class builds, and the checks and classes are back
   after a parse (also after a syntax error).
2. **Positions from one code-generation pass** (``offsets``, for
   ``dupguard.semantic.positions``). Relies on: the private ``libcst._nodes.internal.CodegenState``
   and the hooks ``Module._codegen`` calls on it (``add_token``, ``add_indent_tokens``,
   ``before_codegen``/``after_codegen``, ``pop_trailing_newline``,
   ``record_syntactic_position``). Checked by tests/test_positions.py: every node of real
   files, with LF, CRLF and CR line ends, against ``PositionProvider``.
3. **Walking in libcst's child order without its visit machinery** (``in_visiting_order``, for
   ``dupguard.semantic.visitor``). Relies on: the order each node's
   ``_visit_and_replace_children`` visits its fields, which is the dataclass field order except
   for the types in ``SOURCE_ORDER``. Checked by tests/test_visitor.py: the sequence of hooks
   against a real ``CSTVisitor`` on every file of rules/ and tests/corpus, and every node
   type's order against the source of its ``_visit_and_replace_children``.
4. **String values without a compile** (``string_value``, for
   ``dupguard.semantic.model.string_value``). Relies on: ``SimpleString.value`` being the token
   as written (prefix and quotes included) and ``evaluated_value`` being what Python reads from
   it. Checked by tests/test_model.py and tests/test_cstfast.py: every string literal of the
   examples against ``evaluated_value``.

**The switch.** ``DUPGUARD_PLAIN_LIBCST=1`` (any value but empty or ``0``) in the environment
when dupguard is imported turns all four off: ``libcst.parse_module``,
``MetadataWrapper(...).resolve(PositionProvider)``, a ``libcst.CSTVisitor`` driving the walker's
hooks, and ``evaluated_value``. Use it with a libcst newer than the versions pyproject.toml
allows (which are the ones these tests passed on), or to rule the shortcuts out when chasing a
bug; the diagnostics are the same (tests/test_cstfast.py compares the JSON report of rules/ in
both modes), only slower. Plain mode never builds anything here: the
private import and the factories are made on first fast use. ``enabled()`` reads the switch;
``set_enabled()`` flips it in-process, for the tests that run the equivalence checks both ways.

A shortcut that cannot be set up on the installed libcst (a hot class that is no longer a
plain dataclass, ``CodegenState`` moved) is left to libcst for that part: slower, not wrong;
``tests/test_cstfast.py`` fails when that happens on a version pyproject.toml allows.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from functools import cache
from typing import Any

import libcst as cst

ENV_VAR = "DUPGUARD_PLAIN_LIBCST"

_enabled = os.environ.get(ENV_VAR, "") in ("", "0")


def enabled() -> bool:
    """Are the shortcuts on? (``DUPGUARD_PLAIN_LIBCST`` unset, empty or ``0`` at import.)"""
    return _enabled


def set_enabled(on: bool) -> None:
    """Turn the shortcuts on or off in this process (tests run the equivalence checks both ways).
    Takes effect for the next parse, walk, positions pass and string value."""
    global _enabled
    _enabled = bool(on)


# ----------------------------------------------------------------------------- 1. parsing
#
# libcst's native parser builds the tree by calling, for every node, the class of that name in
# the ``libcst`` module with keyword arguments; about a third of a parse is those calls. Two of
# their costs buy nothing for a tree parsed from source:
#
# * Validation. ``CSTNode.__post_init__`` checks every node when it is constructed: a guard
#   against mistakes in nodes built by hand, as codemods do. Nodes the parser builds from
#   source it accepted are valid by construction, yet the checks cost about 15% of a parse.
#   libcst's own source notes the waste ("PERF: ... would allow us to avoid validating the tree
#   when parsing a file", ``libcst/_nodes/base.py``).
# * The class call. Calling a class runs ``type.__call__``, ``__new__``, then the ``__init__``
#   that ``dataclasses`` wrote for a frozen class, which stores each field with
#   ``object.__setattr__`` (a lookup through the MRO per field) and then calls
#   ``__post_init__``. For the node classes that make up 95% of a parse, a plain function that
#   makes the object with ``object.__new__`` and stores through each slot's descriptor builds
#   the same node for about 10% less parse time.
#
# So while the parser runs, ``CSTNode.__post_init__`` does nothing and the ``libcst`` module's
# names of the hot classes point at those functions; both are put back before anything else
# happens, so codemods and any other caller of libcst get libcst as installed, checks included.
# (Another thread building nodes during a parse would skip the checks too: nothing in dupguard
# does.)

# The node classes that make up 95% of the nodes in a parse of agent code (SimpleWhitespace
# alone is 41%, Name 13%). Writing a factory costs a compile (about 0.13 ms a class), which
# for all 344 classes would cost a small run more than it saves.
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


@cache
def factories() -> dict[str, Callable[..., cst.CSTNode]]:
    """The hot classes' factories, by the class's name in the ``libcst`` module (made on first
    use). Empty on a libcst without per-node validation: then the parse is libcst's own."""
    if cst.CSTNode.__dict__.get("__post_init__") is None:
        return {}
    names: dict[str, object] = {"_MISSING": dataclasses.MISSING, "_new": object.__new__}
    sources = {}
    for name in HOT_NODE_CLASSES:
        kind = getattr(cst, name, None)
        source = _factory_source(kind, names) if isinstance(kind, type) and kind.__name__ == name else None
        if source is not None:
            sources[name] = source
    # the sources are built above from the dataclass fields of libcst's own classes
    exec(compile("".join(sources.values()), "<dupguard.cstfast factories>", "exec"), names)  # noqa: S102
    return {name: names[f"_{name}_make"] for name in sources}  # type: ignore[misc]


@cache
def _originals() -> tuple[Any, dict[str, type]]:
    """``CSTNode.__post_init__`` and the hot classes, as libcst has them, to put back after a parse."""
    return cst.CSTNode.__dict__.get("__post_init__"), {name: getattr(cst, name) for name in factories()}


def parse_module(source: str | bytes) -> cst.Module:
    """``libcst.parse_module`` with the per-node checks off and the hot constructors swapped."""
    validate, classes = _originals()
    if validate is None:  # pragma: no cover - a libcst without per-node validation
        return cst.parse_module(source)
    namespace = vars(cst)
    cst.CSTNode.__post_init__ = _skip  # type: ignore[method-assign]
    namespace.update(factories())
    try:
        return cst.parse_module(source)
    finally:
        namespace.update(classes)
        cst.CSTNode.__post_init__ = validate  # type: ignore[method-assign]


# ----------------------------------------------------------------------------- 2. positions
#
# LibCST's PositionProvider splits every token with a regular expression and builds two
# ``CodePosition`` objects per node; a linter needs positions only for the few nodes it
# reports. This pass records character offsets instead, with libcst's own code generation
# driving a ``CodegenState`` subclass; ``dupguard.semantic.positions`` turns the few offsets it
# is asked about into (line, column).


@cache
def _offset_state_type() -> type | None:
    """The ``CodegenState`` subclass that records offsets, or None when libcst moved the class."""
    try:
        from libcst._nodes.internal import CodegenState
    except ImportError:  # pragma: no cover - a libcst this module does not know
        return None

    class Syntactic:
        """``record_syntactic_position``: the node's range without its surrounding whitespace
        (what ``PositionProvider`` reports), optionally hoisted from child nodes."""

        __slots__ = ("end_node", "node", "start", "start_node", "state")

        def __init__(
            self, state: Any, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
        ) -> None:
            self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

        def __enter__(self) -> None:
            self.start = self.state.offset

        def __exit__(self, *exc: object) -> None:
            computed = self.state.computed
            start = computed[id(self.start_node)][0] if self.start_node is not None else self.start
            end = computed[id(self.end_node)][1] if self.end_node is not None else self.state.offset
            computed[id(self.node)] = (start, end)

    class OffsetState(CodegenState):
        """A codegen state that keeps the running character offset and each node's (start, end).

        Keyed by ``id(node)``: a CSTNode's ``__hash__`` is a Python method (identity anyway), and
        this pass hashes every node twice. The tree outlives the table, so ids are not reused."""

        def __init__(self, module: cst.Module) -> None:
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.offset = 0
            self.computed: dict[int, tuple[int, int]] = {}
            self._stack: list[int] = []
            self.popped = ""

        def add_indent_tokens(self) -> None:
            self.tokens.extend(self.indent_tokens)
            for token in self.indent_tokens:
                self.offset += len(token)

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            self.offset += len(value)

        def pop_trailing_newline(self) -> None:
            # like libcst: the token goes, the position stays (the module's range ends after it)
            if self.tokens:
                self.popped = self.tokens.pop()

        def before_codegen(self, node: cst.CSTNode) -> None:
            self._stack.append(self.offset)

        def after_codegen(self, node: cst.CSTNode) -> None:
            start = self._stack.pop()
            key = id(node)
            if key not in self.computed:  # a syntactic position recorded inside wins, as in libcst
                self.computed[key] = (start, self.offset)

        def record_syntactic_position(  # type: ignore[override]  # a context manager all the same
            self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
        ) -> Syntactic:
            return Syntactic(self, node, start_node, end_node)

    return OffsetState


def offsets(module: cst.Module) -> tuple[dict[int, tuple[int, int]], str] | None:
    """Each node's (start, end) character offsets by ``id(node)``, and the module's code, from
    one code-generation pass; None when this libcst's code generation is not one we know."""
    state_type = _offset_state_type()
    if state_type is None:  # pragma: no cover - see _offset_state_type
        return None
    state = state_type(module)
    module._codegen(state)
    return state.computed, "".join(state.tokens) + state.popped


# ----------------------------------------------------------------------------- 3. child order

# Node types whose dataclass field order differs from the order libcst visits them in (source
# order); only the fields that can hold nodes other than whitespace, comments and punctuation
# are listed. Every other type: dataclass field order.
SOURCE_ORDER: dict[str, tuple[str, ...]] = {
    "Arg": ("keyword", "value"),
    "ClassDef": ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    "ExceptHandler": ("type", "name", "body"),
    "ExceptStarHandler": ("type", "name", "body"),
    "FunctionDef": ("decorators", "name", "type_parameters", "params", "returns", "body"),
    "IfExp": ("body", "test", "orelse"),
    "MatchCase": ("pattern", "guard", "body"),
    "Parameters": ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    "TypeAlias": ("name", "type_parameters", "value"),
}


def in_visiting_order(kind: type, names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` (fields of node type ``kind``, in dataclass order) in the order libcst's
    ``_visit_and_replace_children`` visits them."""
    order = SOURCE_ORDER.get(kind.__name__)
    return names if order is None else tuple(sorted(names, key=order.index))


# ----------------------------------------------------------------------------- 4. string values


def string_value(node: cst.CSTNode | None) -> str | bytes | None:
    """A string literal's value (libcst's ``evaluated_value``), else None.

    libcst evaluates every literal with ``ast.literal_eval`` (about 25 µs: a compile); the model
    builder asks for each dictionary key in a file. A literal with no prefix and no backslash is
    its text between the quotes (with no ``\\r`` either, which Python reads as ``\\n``), so that
    case skips the compile."""
    if (
        _enabled
        and type(node) is cst.SimpleString
        and node.value[0] in "'\""
        and "\\" not in node.value
        and "\r" not in node.value
    ):
        quotes = 3 if node.value[:3] in ("'''", '"""') else 1
        return node.value[quotes:-quotes]
    return getattr(node, "evaluated_value", None)
