"""``CachedVisitor``: a ``libcst.CSTVisitor`` whose hook lookups are cached per node type.

Why: for every node and every child attribute, libcst looks up ``visit_<Node>``,
``leave_<Node>``, ``visit_<Node>_<attribute>`` and ``leave_<Node>_<attribute>`` with an
f-string and ``getattr(self, name, None)``. Almost all of those lookups miss, and a missed
``getattr`` raises and catches ``AttributeError`` inside. On small agent files that lookup
work was about a quarter of a walk (bench/RESULTS.md, target 2). Here each (node type,
attribute) is looked up once per visitor class and then found in a dict.

The semantics are libcst's: a ``visit_`` hook returning ``False`` skips the children, and the
hooks are the same methods found by the same names.
"""

from __future__ import annotations

from typing import Callable, ClassVar

import libcst as cst

Hook = Callable[..., object] | None


class CachedVisitor(cst.CSTVisitor):
    _visit: ClassVar[dict[type, Hook]]
    _leave: ClassVar[dict[type, Hook]]
    _visit_attr: ClassVar[dict[tuple[type, str], Hook]]
    _leave_attr: ClassVar[dict[tuple[type, str], Hook]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._visit, cls._leave, cls._visit_attr, cls._leave_attr = {}, {}, {}, {}

    @classmethod
    def _find(cls, cache: dict, key: object, name: str) -> Hook:
        hook = cache[key] = getattr(cls, name, None)
        return hook

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        try:
            hook = self._visit[kind]
        except KeyError:
            hook = self._find(self._visit, kind, f"visit_{kind.__name__}")
        return hook is None or hook(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        kind = type(original_node)
        try:
            hook = self._leave[kind]
        except KeyError:
            hook = self._find(self._leave, kind, f"leave_{kind.__name__}")
        if hook is not None:
            hook(self, original_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        key = (type(node), attribute)
        try:
            hook = self._visit_attr[key]
        except KeyError:
            hook = self._find(self._visit_attr, key, f"visit_{key[0].__name__}_{attribute}")
        if hook is not None:
            hook(self, node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        key = (type(original_node), attribute)
        try:
            hook = self._leave_attr[key]
        except KeyError:
            hook = self._find(self._leave_attr, key, f"leave_{key[0].__name__}_{attribute}")
        if hook is not None:
            hook(self, original_node)
