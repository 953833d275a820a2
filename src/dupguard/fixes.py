"""What a fix is made of: the context a rule's fix reads, and the small value it returns.

A rule reports a finding with ``fix=ctx.fix(*args)`` (rules/registry.py), which builds
nothing. When the caller wants fixes (a report that shows them, ``fix``, ``check --fix``), the
pipeline hands the finding's fix a :class:`FixContext` and gets a :class:`FixProposal` back:

* ``FixContext``: the module, its model and positions, and what only fixes need: each node's
  parent, libcst's scope analysis, where each top-level statement sits in the text. Each is
  built on first use and shared by every fix of the pass (one parse of the file, one analysis,
  then every fix); nothing of it is kept in a module global, so nothing outlives the pass.
* ``FixProposal``: a title and the node :class:`Replacement` s that make the fix (several
  allowed), or the reason there is none (``refusal``), and its applicability when it differs
  from the rule's declared safety (ruff decides applicability per fix too).

``dupguard.edits`` turns a proposal into text edits (what a report shows and what conflicts are
judged on) and applies the proposals chosen in one pass with one transformer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

import libcst as cst

if TYPE_CHECKING:
    from libcst.metadata import Scope

    from .rules.registry import Finding, Safety
    from .semantic.model import Model
    from .semantic.positions import Positions

Produced = cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[Any]


@dataclass(frozen=True)
class Replacement:
    """One change to one node of the module, made by the fixer, never by the rule.

    * ``new``: what replaces the node (a node, ``libcst.RemoveFromParent()``, or a
      ``libcst.FlattenSentinel`` of statements);
    * ``update``: a function of the node *as the fix's other replacements left it* that returns
      what replaces it, so that one fix can change a function (its decorators, its leading
      blank lines) and a statement inside it;
    * ``before`` / ``after``: statements inserted in front of or after the node (which must sit
      in a block's or the module's body).

    A node gets at most one ``new`` and then no other replacement inside it; updates and
    insertions on one node compose, in the order given.
    """

    node: cst.CSTNode
    new: Produced | None = None
    update: Callable[[Any], Produced] | None = None
    before: tuple[cst.BaseStatement, ...] = ()
    after: tuple[cst.BaseStatement, ...] = ()


def replace(node: cst.CSTNode, new: Produced) -> Replacement:
    return Replacement(node, new=new)


def remove(node: cst.CSTNode) -> Replacement:
    return Replacement(node, new=cst.RemoveFromParent())


def update(node: cst.CSTNode, change: Callable[[Any], Produced]) -> Replacement:
    return Replacement(node, update=change)


def insert_before(node: cst.BaseStatement, *statements: cst.BaseStatement) -> Replacement:
    return Replacement(node, before=statements)


def insert_after(node: cst.BaseStatement, *statements: cst.BaseStatement) -> Replacement:
    return Replacement(node, after=statements)


@dataclass(frozen=True)
class FixProposal:
    """A finding's fix: ``title`` and ``replacements``, or the ``refusal`` that says why there is
    none. ``applicability`` None means the rule's declared safety."""

    title: str = ""
    replacements: tuple[Replacement, ...] = ()
    refusal: str = ""
    applicability: Safety | None = None

    @classmethod
    def refuse(cls, reason: str) -> FixProposal:
        return cls(refusal=reason)

    def propose(self, ctx: FixContext) -> FixProposal:
        """A ready proposal is its own builder (see ``rules.registry.ProposesFix``)."""
        return self


# fields of each node type that can hold nodes other than trivia (whitespace, comments,
# punctuation): the parent map follows them; replacements are never made inside trivia
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    found = _CHILD_FIELDS.get(kind)
    if found is None:
        from .semantic.visitor import holds_nodes, is_trivia

        found = _CHILD_FIELDS[kind] = tuple(
            f.name for f in fields(kind) if not is_trivia(f.name) and holds_nodes(f.type)
        )
    return found


class FixContext:
    """One analysed module, as every fix of one pass sees it.

    The parent map and the scope analysis cost a walk of the whole module each (libcst's
    ``ScopeProvider`` several), so they are built when the first fix asks and then shared: a
    file with three thousand findings pays for them once per pass, not once per finding.
    """

    def __init__(self, module: cst.Module, model: Model, positions: Positions, code: str | None = None) -> None:
        self.module = module
        self.model = model
        self.positions = positions
        if code is not None:
            self.__dict__["code"] = code
        self._proposals: dict[int, FixProposal | None] = {}

    @cached_property
    def code(self) -> str:
        """The module's text (``module.code``; the pipeline passes the text it parsed)."""
        return self.module.code

    def line(self, node: cst.CSTNode) -> int:
        return self.positions.line(node)

    # ------------------------------------------------------------------ the finding's fix

    def propose(self, finding: Finding, safety: Safety | None) -> FixProposal | None:
        """``finding``'s fix, built once per pass; None when the finding has no fix or its rule
        declares none (``safety`` None). The applicability is the proposal's own, else ``safety``."""
        key = id(finding)
        if key in self._proposals:
            return self._proposals[key]
        proposal = None
        if finding.fix is not None and safety is not None:
            proposal = finding.fix.propose(self)
            if proposal.applicability is None:
                proposal = FixProposal(proposal.title, proposal.replacements, proposal.refusal, safety)
        self._proposals[key] = proposal
        return proposal

    # ------------------------------------------------------------------ parents

    @cached_property
    def parents(self) -> dict[int, cst.CSTNode]:
        """id(node) → its parent, for every node outside trivia fields (one walk of the module,
        through the nodes' dataclass fields: no libcst visitor, whose ``visit`` rebuilds every node)."""
        parents: dict[int, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [self.module]
        node_types: set[type] = set()
        while stack:
            node = stack.pop()
            for name in _child_fields(type(node)):
                value = getattr(node, name)
                kind = type(value)
                if kind is list or kind is tuple:
                    for child in value:
                        if isinstance(child, cst.CSTNode):
                            parents[id(child)] = node
                            stack.append(child)
                elif kind in node_types or isinstance(value, cst.CSTNode):
                    node_types.add(kind)
                    parents[id(value)] = node
                    stack.append(value)
        return parents

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """The parent of ``node``, its parent, … up to the module. ``ValueError`` when ``node``
        is not in the module (a fix that names a node of another tree)."""
        if node is self.module:
            return
        parents = self.parents
        current = parents.get(id(node))
        if current is None:
            raise ValueError(f"the fix replaces a {type(node).__name__} that is not in the module")
        while current is not None:
            yield current
            current = parents.get(id(current))

    def top_index(self, node: cst.CSTNode) -> int | None:
        """The index in ``module.body`` of the top-level statement that holds ``node`` (or is
        it); None for the module itself."""
        if node is self.module:
            return None
        top = node
        for ancestor in self.ancestors(node):
            if ancestor is self.module:
                break
            top = ancestor
        return self.body_index(top)

    def body_index(self, node: cst.CSTNode) -> int | None:
        """The index of ``node`` in ``module.body``; None when it is not a top-level statement."""
        return self._body_indexes.get(id(node))

    @cached_property
    def _body_indexes(self) -> dict[int, int]:
        return {id(stmt): index for index, stmt in enumerate(self.module.body)}

    # ------------------------------------------------------------------ scopes

    @cached_property
    def scopes(self) -> Any:
        """libcst's ``ScopeProvider`` for the module: node → ``Scope`` (several parses' worth
        of time, hence once per pass and only when a fix asks)."""
        from libcst.metadata import MetadataWrapper, ScopeProvider

        return MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(ScopeProvider)

    def scope(self, node: cst.CSTNode) -> Scope | None:
        found: Scope | None = self.scopes.get(node)
        return found

    # ------------------------------------------------------------------ layout

    @cached_property
    def statement_spans(self) -> list[tuple[int, int]] | None:
        """(start, end) offsets in :attr:`code` of each top-level statement's text (its leading
        blank and comment lines included), so that a fix can be printed and compared statement
        by statement instead of the whole module; None when the module's text is not the plain
        concatenation of its parts."""
        module = self.module
        pieces = [module.code_for_node(line) for line in module.header]
        start = sum(map(len, pieces))
        spans = []
        for stmt in module.body:
            end = start + len(module.code_for_node(stmt))
            spans.append((start, end))
            start = end
        tail = "".join(module.code_for_node(line) for line in module.footer)
        if start + len(tail) != len(self.code):
            return None  # no trailing newline (libcst drops the last one): the caller diffs the module
        return spans
