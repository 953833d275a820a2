"""Proposals → text edits, and the one transformer that applies the fixes of a pass.

A rule's fix is a ``dupguard.fixes.FixProposal``: node replacements, never text. Two things are
made of it here:

* **its text edits** (:func:`proposal_edits`): what ``check --output-format json`` shows as the
  finding's ``fix`` (:class:`ReportFixes`), and what conflicts between the fixes of one pass
  are judged on. Only the top-level statements the fix touches are transformed, printed and
  compared with their text, so a finding costs the size of what it changes, not of the file.
  Consecutive touched statements are compared as one stretch, which gives the edits a
  comparison of the whole module would (``text_edits`` trims equal lines at both ends first);
  a stretch longer than :data:`STRETCH_LINES` is compared statement by statement;
* **the pass** (:class:`Batch`): ``fix`` takes the proposals in order, keeps each one that does
  not conflict with those already kept, and applies them all with one :class:`Replacer`, a
  libcst transform that enters only the nodes on the way to a replaced one.

When two fixes conflict is decided on their text edits, as before proposals existed (and as
ruff does): an edit of one must not overlap or touch an edit of the other, except an
identical edit (the same import added for two findings), which is made once. Because one
transform applies them, their nodes are checked too: one fix may not replace outright a node
the other changes inside, or change one node differently; two fixes that change one node
the same way (the same import statement, the same factory) share that change. The printed
result of the pass must then be the text with the kept fixes' edits applied; it is compared,
and when two fixes made one edit from different nodes (the same line inserted after a
statement and before the next) only the first fix is applied, the next pass sees the rest
(tests/test_fix.py: ``test_json_edits_reproduce_fixed``, ``test_the_same_edit_from_two_nodes_is_not_made_twice``).
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import libcst as cst

from .diagnostics import Edit, Fix

if TYPE_CHECKING:
    from .fixes import FixContext, FixProposal, Produced, Replacement
    from .rules.registry import Finding


class TextEdit(NamedTuple):
    """Replace ``code[start:end]`` with ``content`` (offsets into ``module.code``)."""

    start: int
    end: int
    content: str


# ----------------------------------------------------------------------------- the transformer


class Replacer(cst.CSTTransformer):
    """Apply replacements in one transform of the tree.

    Only the ancestors of replaced nodes are entered (their ids come from the fix context's
    parent map); every other subtree is kept as it is, the same objects, so the cost is the
    paths to the changes, not the module."""

    def __init__(self, ctx: FixContext, replacements: Iterable[Replacement]) -> None:
        super().__init__()
        self.targets: dict[int, list[Replacement]] = {}
        self.on_path: set[int] = set()
        for replacement in replacements:
            self.targets.setdefault(id(replacement.node), []).append(replacement)
            for ancestor in ctx.ancestors(replacement.node):
                if id(ancestor) in self.on_path:
                    break
                self.on_path.add(id(ancestor))

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.on_path

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        found = self.targets.get(id(original_node))
        if found is None:
            return updated_node
        return _replaced(updated_node, found, changed_inside=id(original_node) in self.on_path)


def _replaced(node: cst.CSTNode, replacements: Sequence[Replacement], *, changed_inside: bool) -> Produced:
    """What ``node`` (as the replacements inside it left it) becomes."""
    news = [r.new for r in replacements if r.new is not None]
    result: Produced = node
    if news:
        if len(news) > 1 or changed_inside or any(r.update is not None for r in replacements):
            raise ValueError(f"two replacements of one {type(node).__name__}")
        result = news[0]
    for r in replacements:
        if r.update is not None:
            if not isinstance(result, cst.CSTNode):
                raise ValueError(f"an update of a {type(node).__name__} that is no longer there")
            result = r.update(result)
    before = [s for r in replacements for s in r.before]
    after = [s for r in replacements for s in r.after]
    if not before and not after:
        return result
    if isinstance(result, cst.RemovalSentinel):
        middle: list[Any] = []
    elif isinstance(result, cst.FlattenSentinel):
        middle = list(result.nodes)
    else:
        middle = [result]
    return cst.FlattenSentinel([*before, *middle, *after])


def _printed(module: cst.Module, produced: Produced) -> str:
    if isinstance(produced, cst.RemovalSentinel):
        return ""
    if isinstance(produced, cst.FlattenSentinel):
        return "".join(module.code_for_node(node) for node in produced.nodes)
    return module.code_for_node(produced)


# ----------------------------------------------------------------------------- proposal → edits


class Claim(NamedTuple):
    """What one fix does to one node: whether it replaces the node outright (``new``: nothing
    else may change inside it), and what it makes of it (``outcome``: the printed replacement,
    update or insertion, made from the node as it was, to recognise the same change made by
    two fixes)."""

    node: cst.CSTNode
    new: bool
    outcome: str


class ProposalEdits(NamedTuple):
    """A proposal as the pass needs it: its text edits, and its claims by id(node)."""

    edits: tuple[TextEdit, ...]
    claims: dict[int, Claim]
    replacements: tuple[Replacement, ...]


# Consecutive changed statements are compared as one stretch up to this many lines; a longer
# stretch (one fix that rewrites hundreds of functions) statement by statement. difflib's
# matching costs about the cube of the lines compared when, as there, the same lines repeat
# in every hunk (bench/fix_sizes.py: 400 rewritten functions took 7 s to compare as one);
# compared apart, the edits make the same text, cut at statement boundaries.
STRETCH_LINES = 1_000


def proposal_edits(ctx: FixContext, proposal: FixProposal) -> ProposalEdits:
    """The text edits that make ``proposal`` and the nodes it claims. Raises ``ValueError``
    for replacements that cannot be applied (a node outside the module, a node replaced twice).

    Only the top-level statements with a replacement are transformed and printed, and each
    stretch of consecutive ones is compared with its text; the whole module when a
    replacement is the module itself (or its text is not the concatenation of its statements).
    """
    module, code = ctx.module, ctx.code
    replacer = Replacer(ctx, proposal.replacements)
    claims = _claims(module, proposal.replacements)
    indexes = set()
    spans = ctx.statement_spans
    for replacement in proposal.replacements:
        index = ctx.top_index(replacement.node)
        if index is None or spans is None:
            new = module.visit(replacer)
            if not isinstance(new, cst.Module):
                raise TypeError("the fix removes the whole module")
            return ProposalEdits(text_edits(code, new.code), claims, proposal.replacements)
        indexes.add(index)
    assert spans is not None
    runs: list[list[int]] = []
    for index in sorted(indexes):
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    edits: list[TextEdit] = []
    for run in runs:
        start, end = spans[run[0]][0], spans[run[-1]][1]
        if len(run) > 1 and code.count("\n", start, end) > STRETCH_LINES:
            pieces = [[i] for i in run]  # one rewrite of thousands of statements: each on its own
        else:
            pieces = [run]
        for piece in pieces:
            start, end = spans[piece[0]][0], spans[piece[-1]][1]
            text = "".join(_printed(module, module.body[i].visit(replacer)) for i in piece)
            edits.extend(TextEdit(e.start + start, e.end + start, e.content) for e in text_edits(code[start:end], text))
    return ProposalEdits(tuple(edits), claims, proposal.replacements)


def _claims(module: cst.Module, replacements: Iterable[Replacement]) -> dict[int, Claim]:
    by_node: dict[int, list[Replacement]] = {}
    for replacement in replacements:
        by_node.setdefault(id(replacement.node), []).append(replacement)
    claims = {}
    for key, found in by_node.items():
        node = found[0].node
        parts = []
        new = [r.new for r in found if r.new is not None]
        if new:
            parts.append("new:" + _printed(module, new[0]))
        result: Produced = node
        for r in found:
            if r.update is not None and isinstance(result, cst.CSTNode):
                result = r.update(result)
                parts.append("update:" + _printed(module, result))
        for r in found:
            parts.append("before:" + "".join(module.code_for_node(s) for s in r.before))
            parts.append("after:" + "".join(module.code_for_node(s) for s in r.after))
        claims[key] = Claim(node, bool(new), "\0".join(parts))
    return claims


def text_edits(old: str, new: str) -> tuple[TextEdit, ...]:
    """Line-level diff, each changed hunk trimmed to the characters that differ."""
    if old == new:
        return ()
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    starts = line_starts(old)
    edits = []
    matcher = difflib.SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = starts[head + i1], starts[head + i2]
        old_part, new_part = old[start:end], "".join(b[head + j1 : head + j2])
        prefix = 0
        limit = min(len(old_part), len(new_part))
        while prefix < limit and old_part[prefix] == new_part[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and old_part[-1 - suffix] == new_part[-1 - suffix]:
            suffix += 1
        edits.append(TextEdit(start + prefix, end - suffix, new_part[prefix : len(new_part) - suffix]))
    return tuple(edits)


def apply_edits(code: str, edits: Iterable[TextEdit]) -> str:
    """``code`` with non-conflicting ``edits`` applied (each distinct edit once)."""
    parts = []
    at = 0
    for edit in sorted(set(edits)):
        parts.append(code[at : edit.start])
        parts.append(edit.content)
        at = max(at, edit.end)
    parts.append(code[at:])
    return "".join(parts)


def line_starts(code: str) -> list[int]:
    """The offset at which each line of ``code`` starts, plus one past the end."""
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def row_col(starts: list[int], offset: int) -> tuple[int, int]:
    """An offset → (1-based row, 0-based column), given :func:`line_starts`."""
    index = bisect.bisect_right(starts, offset) - 1
    index = min(index, len(starts) - 1)
    return index + 1, offset - starts[index]


# ----------------------------------------------------------------------------- one pass


class Batch:
    """The fixes one pass of ``fix`` applies together (see the module docstring for when two
    fixes conflict)."""

    def __init__(self, ctx: FixContext) -> None:
        self.ctx = ctx
        self._starts: list[int] = []  # kept edits, each once, sorted, pairwise apart
        self._edits: list[TextEdit] = []
        self._claims: dict[int, Claim] = {}  # the nodes kept fixes change
        self._inside: set[int] = set()  # ids of the nodes that hold one of those
        self._kept: list[tuple[ProposalEdits, list[Replacement]]] = []

    def add(self, changes: ProposalEdits) -> bool:
        """Keep a fix unless it conflicts with one kept before; False when it does."""
        taken_edits = set(self._edits)
        fresh_edits = [edit for edit in changes.edits if edit not in taken_edits]
        if any(self._touches(edit) for edit in fresh_edits):
            return False
        shared: set[int] = set()
        ancestry: list[tuple[int, list[int]]] = []
        for key, claim in changes.claims.items():
            taken = self._claims.get(key)
            if taken is not None:
                if taken.outcome != claim.outcome:
                    return False
                shared.add(key)  # the same change: made once
                continue
            if claim.new and key in self._inside:
                return False  # it would replace a node another fix changes inside
            above = [id(node) for node in self.ctx.ancestors(claim.node)]
            if any(a in self._claims and self._claims[a].new for a in above):
                return False  # another fix replaces a node it lies in
            ancestry.append((key, above))
        for edit in fresh_edits:
            at = bisect.bisect_left(self._starts, edit.start)
            self._starts.insert(at, edit.start)
            self._edits.insert(at, edit)
        for key, above in ancestry:
            self._claims[key] = changes.claims[key]
            self._inside.update(above)
        self._kept.append((changes, [r for r in changes.replacements if id(r.node) not in shared]))
        return True

    def _touches(self, edit: TextEdit) -> bool:
        """Does ``edit`` overlap or touch a kept edit? (Kept edits are apart from each other, so
        only the last one starting at or before ``edit``'s end, and the one after, can.)"""
        at = bisect.bisect_right(self._starts, edit.end)
        for other in self._edits[max(0, at - 1) : at + 1]:
            if edit.start <= other.end and other.start <= edit.end:
                return True
        return False

    def apply(self) -> tuple[str, int]:
        """The text with the kept fixes applied by one transform, and how many of them (in the
        order they were kept) that is.

        The printed result must be the text with the kept fixes' edits applied, which is what a
        report shows for them. Two fixes that make the same edit from different nodes (the same
        line inserted after one statement and before the next) would be printed twice, not
        once: then only the first fix is applied in this pass, and the next pass sees the rest."""
        for kept in (self._kept, self._kept[:1]):
            new = self.ctx.module.visit(Replacer(self.ctx, [r for _, found in kept for r in found]))
            if not isinstance(new, cst.Module):
                raise TypeError("the fixes remove the whole module")
            text = new.code
            if text == apply_edits(self.ctx.code, [e for changes, _ in kept for e in changes.edits]):
                return text, len(kept)
        raise ValueError("a fix's edits and its printed result differ")


# ----------------------------------------------------------------------------- the report


class ReportFixes:
    """The report's ``Fix`` for each finding of one analysed module.

    One per module: the fix context (parents, scopes, statement spans) and the line starts
    are computed once for all its findings, and nothing outlives it.
    """

    def __init__(self, ctx: FixContext) -> None:
        self.ctx = ctx
        self._starts: list[int] | None = None

    def fix(self, code: str, finding: Finding) -> Fix | None:
        """Applicability, message and row/column edits; None when there is no fix here."""
        from .rules import load

        rule = load().get(code)
        try:
            proposal = self.ctx.propose(finding, rule.safety if rule is not None else None)
            if proposal is None or proposal.refusal or not proposal.replacements:
                return None
            edits = proposal_edits(self.ctx, proposal).edits
        except Exception:
            return None
        if not edits:
            return None
        if self._starts is None:
            self._starts = line_starts(self.ctx.code)
        out = []
        for edit in edits:
            row, col = row_col(self._starts, edit.start)
            end_row, end_col = row_col(self._starts, edit.end)
            out.append(Edit(edit.content, row, col, end_row, end_col))
        return Fix(proposal.applicability or "unsafe", proposal.title or "Apply the fix", tuple(out))
