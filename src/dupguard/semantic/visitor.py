"""``Walker``: calls ``libcst.CSTVisitor``-style hooks over a tree, without libcst's visit machinery.

Why: a ``CSTVisitor`` walk costs about as much as parsing (bench/RESULTS.md), because
libcst's ``visit`` rebuilds (and re-validates) every node on the way back up, even for a
read-only visitor, and looks up four hook names with an f-string and a missing-attribute
``getattr`` for every node and every field. The model builder only reads the tree, so it
walks it directly: per node type, the hooks and the fields to descend into are found once and
kept in a plan.

The contract is libcst's, minus trivia:

* ``visit_<Node>(node)`` before the children (returning ``False`` skips them),
  ``leave_<Node>(node)`` after; ``visit_<Node>_<field>`` / ``leave_<Node>_<field>`` around a field;
* children in libcst's order (source order); ``tests/test_visitor.py`` checks the order of every
  hook against ``CSTVisitor`` on real files;
* fields that only ever hold whitespace, comments, punctuation or operators (``TRIVIA``) are
  not walked: no hook fires for a node reached only through them.

The order of the fields is libcst's internal business (each node's
``_visit_and_replace_children``); the walk takes it from ``dupguard.cstfast``, which keeps every
shortcut through libcst's internals. With ``DUPGUARD_PLAIN_LIBCST=1`` the same hooks are driven
by a real ``libcst.CSTVisitor`` instead (``_HookDriver``), in libcst's own order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import ClassVar, ForwardRef, get_args

import libcst as cst

from .. import cstfast

Hook = Callable[..., object] | None
Plan = tuple[Hook, Hook, tuple[tuple[str, Hook, Hook], ...]]

TRIVIA = frozenset(
    {
        "asynchronous",
        "colon",
        "comma",
        "comment",
        "dot",
        "empty_lines",
        "equal",
        "first_colon",
        "footer",
        "header",
        "lbrace",
        "lbracket",
        "leading_lines",
        "leading_whitespace",
        "lines_after_decorators",
        "lpar",
        "newline",
        "operator",
        "posonly_ind",
        "rbrace",
        "rbracket",
        "relative",
        "rpar",
        "second_colon",
        "semicolon",
        "separator",
        "trailing_whitespace",
    }
)


def is_trivia(field: str) -> bool:
    """A field that only ever holds whitespace, comments, punctuation or operators."""
    return field in TRIVIA or field.startswith("whitespace")


# libcst visits these fields (and fires their attribute hooks) only when they are set
SKIPPED_WHEN_NONE = frozenset({"format_spec"})


def holds_nodes(annotation: object) -> bool:
    """Can a field with this type hold a node? (``Name.value: str`` cannot; libcst does not
    visit such fields, so they get no attribute hooks either.)"""
    if isinstance(annotation, type):
        return issubclass(annotation, cst.CSTNode)
    if isinstance(annotation, (str, ForwardRef)):  # a forward reference: assume it can
        return True
    # Literal["", "*"] arguments are values, not types
    return any(holds_nodes(arg) for arg in get_args(annotation) if not isinstance(arg, str))


def _walked_fields(kind: type) -> tuple[str, ...]:
    """The fields of node type ``kind`` that the walk descends into, in libcst's visiting order."""
    names = tuple(f.name for f in fields(kind) if not is_trivia(f.name) and holds_nodes(f.type))
    return cstfast.in_visiting_order(kind, names)


# node classes met so far: ``isinstance(value, CSTNode)`` goes through ``ABCMeta`` (CSTNode is
# an ABC), a fifth of the builder's time on llama_index.core; a set lookup by type is not
_NODE_TYPES: set[type] = set()

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node``'s children in source order, without trivia (whitespace, comments, punctuation,
    operators: ``is_trivia``), for the analyses that search a subtree for calls, names, awaits
    or blocks. libcst's ``node.children`` runs a visitor over every field to collect them,
    trivia included, and was a tenth of a run on agent code (bench/RESULTS.md); this reads the
    fields the walk reads. With ``DUPGUARD_PLAIN_LIBCST=1``: ``node.children``."""
    if not cstfast.enabled():
        return list(node.children)
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _CHILD_FIELDS[kind] = _walked_fields(kind)
    out: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            out.extend(value)
        elif kind in _NODE_TYPES or isinstance(value, cst.CSTNode):
            out.append(value)
    return out


class Walker:
    _plans: ClassVar[dict[type, Plan]]
    # node types with no hook and no field to walk (``Name``, ``SimpleString``…): walking one
    # does nothing, and ``Name`` alone is a third of the nodes walked, so they are not entered
    _silent: ClassVar[set[type]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._plans = {}
        cls._silent = set()

    @classmethod
    def _plan(cls, kind: type) -> Plan:
        name = kind.__name__
        plan = cls._plans[kind] = (
            getattr(cls, f"visit_{name}", None),
            getattr(cls, f"leave_{name}", None),
            tuple(
                (field, getattr(cls, f"visit_{name}_{field}", None), getattr(cls, f"leave_{name}_{field}", None))
                for field in _walked_fields(kind)
            ),
        )
        if plan == (None, None, ()):
            cls._silent.add(kind)
        return plan

    def walk(self, node: cst.CSTNode) -> None:
        """Fire this walker's hooks over ``node`` and everything below it."""
        if cstfast.enabled():
            self._walk(node)
        else:
            node.visit(_HookDriver(self))

    def _walk(self, node: cst.CSTNode) -> None:
        try:
            visit, leave, walked = self._plans[type(node)]
        except KeyError:
            visit, leave, walked = self._plan(type(node))
        if visit is None or visit(self, node) is not False:
            silent = self._silent
            for field, before, after in walked:
                value = getattr(node, field)
                if value is None and field in SKIPPED_WHEN_NONE:
                    continue
                if before is not None:
                    before(self, node)
                kind = type(value)
                if kind in _NODE_TYPES:
                    if kind not in silent:
                        self._walk(value)
                elif kind is list or kind is tuple:
                    for child in value:
                        if type(child) not in silent:
                            self._walk(child)
                elif isinstance(value, cst.CSTNode):
                    _NODE_TYPES.add(kind)
                    self._walk(value)
                if after is not None:
                    after(self, node)
        if leave is not None:
            leave(self, node)


class _HookDriver(cst.CSTVisitor):
    """A walker's hooks driven by libcst's own ``visit`` (plain mode: no libcst internals).

    libcst visits every field, trivia included, in its own order; hooks are not fired below a
    trivia field, as the fast walk never enters one."""

    def __init__(self, walker: Walker) -> None:
        super().__init__()
        self.walker = walker
        self.hooks = type(walker)
        self.trivia = 0  # depth of trivia fields we are inside

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.trivia:
            return False
        hook = getattr(self.hooks, f"visit_{type(node).__name__}", None)
        return hook is None or hook(self.walker, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.trivia:
            return
        hook = getattr(self.hooks, f"leave_{type(original_node).__name__}", None)
        if hook is not None:
            hook(self.walker, original_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if is_trivia(attribute):
            self.trivia += 1
            return
        hook = getattr(self.hooks, f"visit_{type(node).__name__}_{attribute}", None)
        if hook is not None:
            hook(self.walker, node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if is_trivia(attribute):
            self.trivia -= 1
            return
        hook = getattr(self.hooks, f"leave_{type(original_node).__name__}_{attribute}", None)
        if hook is not None:
            hook(self.walker, original_node)
