"""Small helpers of the semantic model that stand in for slower libcst properties."""

from __future__ import annotations

import libcst as cst
import pytest

from dupguard.semantic.model import string_value
from linthelpers import ROOT

EDGE_CASES = [
    '"a"',
    "'b'",
    '""',
    "''",
    '"""c"""',
    "'''d'''",
    "''''''",
    '"it\'s"',
    "'say \"hi\"'",
    'b"x"',
    'u"x"',
    'r"\\d"',
    'R"x"',
    'rb"\\x"',
    '"\\n"',
    '"\\u00e9"',
    '"""two\nlines"""',
    '"""crlf\r\nlines"""',
    "'''a\\\nb'''",
]


@pytest.mark.parametrize("source", EDGE_CASES)
def test_string_value_is_libcsts_evaluated_value(source: str) -> None:
    node = cst.parse_expression(source)
    assert isinstance(node, cst.SimpleString)
    assert string_value(node) == node.evaluated_value
    assert type(string_value(node)) is type(node.evaluated_value)


def test_string_value_on_every_string_of_the_examples() -> None:
    strings: list[cst.SimpleString] = []

    class Collect(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            strings.append(node)

    for path in sorted(p for d in ("rules", "tests/corpus") for p in (ROOT / d).rglob("*.py")):
        cst.parse_module(path.read_bytes()).visit(Collect())
    assert len(strings) > 500
    assert [string_value(s) for s in strings] == [s.evaluated_value for s in strings]


@pytest.mark.parametrize("source", ['f"x"', "x", "1", "'a' 'b'"])
def test_string_value_of_other_nodes_is_what_libcst_has_or_none(source: str) -> None:
    node = cst.parse_expression(source)
    assert string_value(node) == getattr(node, "evaluated_value", None)


# ----------------------------------------------------------------------------- indexes and analyses
#
# The model answers its queries from indexes built once (bench/sizes.py: a query that scans every
# function or binding makes a large module quadratic). Each index must answer exactly what the
# plain scan over the records answers, on every file the rules are tested on.

SOURCES = sorted(p for d in ("rules", "tests/corpus", "examples") for p in (ROOT / d).rglob("*.py"))


def _build(path):
    from dupguard.config import Settings
    from dupguard.semantic.builder import build_model
    from dupguard.semantic.catalog_loader import catalog_for

    module = cst.parse_module(path.read_bytes())
    return module, build_model(module, catalog_for(Settings()), Settings())


def _scan_function_named(model, name, class_name=None, within=None):
    scope = within
    while scope is not None:
        for fn in model.functions:
            if fn.name == name and fn.parent is scope and fn.class_name is None:
                return fn
        scope = scope.parent
    for fn in model.functions:
        if fn.name == name and fn.class_name == class_name and (fn.parent is None or class_name):
            return fn
    return None


def _scan_module_binding(model, target):
    found = None
    for b in model.bindings:
        if b.target == target and b.scope == "module" and not b.in_main:
            found = b
    return found


def _scan_local_binding(model, name, fn):
    while fn is not None:
        if name in fn.global_names:
            break
        if name in fn.local_names:
            found = None
            for b in model.bindings:
                if b.target == name and b.function is fn:
                    found = b
            return found
        fn = fn.parent
    return _scan_module_binding(model, name)


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_indexes_answer_what_a_scan_answers(path) -> None:
    _, model = _build(path)
    scopes = [None, *model.functions]
    names = {b.target for b in model.bindings} | {n for fn in model.functions for n in fn.local_names}
    for fn in scopes:
        for name in names:
            assert model.local_binding(name, fn) is _scan_local_binding(model, name, fn), (name, fn)
    for name in names:
        assert model.module_binding(name) is _scan_module_binding(model, name)
    for name in {fn.name for fn in model.functions} | {"missing"}:
        for class_name in (None, "", *model.classes):
            for within in scopes:
                expected = _scan_function_named(model, name, class_name, within)
                assert model.function_named(name, class_name, within) is expected, (name, class_name, within)
    for fn in model.functions:
        if fn.class_name:
            for b in model.bindings:
                if b.target.startswith("self."):
                    expected = None
                    for other in model.bindings:
                        if other.target == b.target and other.class_name == fn.class_name:
                            expected = other
                    assert model.binding_of(b.target, fn) is expected
    for i, call in enumerate(model.calls):
        assert model.order(call) == i
        assert model.calls_within(call) == [c for c in model.calls if call in c.outer]
    for fn in model.functions:
        assert model.callers(fn) == [c for c in model.calls if model.called_function(c) is fn]
    for loop in model.loops:
        assert model.calls_in(loop) == [c for c in model.calls if loop in c.loops]
        body = getattr(loop.node, "body", None)
        if body is not None:
            assert model.bindings_under(body) == [b for b in model.bindings if id(body) in b.branch]


def test_the_model_keeps_only_its_declared_fields() -> None:
    """Every derived fact lives in the model's declared indexes or in ``Model.memo``: after
    every rule (and every fix) ran, no module has attached an attribute of its own."""
    from dataclasses import fields

    from dupguard.config import Settings
    from dupguard.fixes import FixContext
    from dupguard.rules import RuleContext, load
    from dupguard.semantic.model import Model
    from dupguard.semantic.positions import Positions

    declared = {f.name for f in fields(Model)}
    rules = load()
    for path in SOURCES:
        module, model = _build(path)
        ctx = RuleContext(Positions(module))
        fixes = FixContext(module, model, ctx.positions)
        for code in sorted(Settings().enabled_codes()):
            for finding in rules[code](model, ctx):
                fixes.propose(finding, rules[code].safety)
        assert set(vars(model)) == declared, (path, set(vars(model)) - declared)
    assert model.memo  # the analyses did run, and kept their values there


def test_an_analysis_runs_once_per_model_and_arguments() -> None:
    from dupguard.semantic.model import analysis

    runs = []

    @analysis
    def count(model, call):
        runs.append(call)
        return len(runs)

    _, first = _build(ROOT / "examples" / "chat_service.py")
    _, second = _build(ROOT / "examples" / "chat_service.py")
    call = first.calls[0]
    assert count(first, call) == count(first, call) == 1
    assert count(first, first.calls[1]) == 2
    assert count(second, call) == 3  # another model: computed again
    assert runs == [call, first.calls[1], call]


def test_a_recursive_analysis_sees_a_cycle_as_nothing() -> None:
    from dupguard.semantic.model import recursive_analysis

    source = "def a():\n    b()\n\ndef b():\n    a()\n    a()\n"
    from dupguard.config import Settings
    from dupguard.semantic.builder import build_model
    from dupguard.semantic.catalog_loader import catalog_for

    model = build_model(cst.parse_module(source), catalog_for(Settings()))
    entered = []

    @recursive_analysis(on_cycle=list)
    def reach(model, fn):
        entered.append(fn.name)
        out = [fn.name]
        for call in fn.calls:
            callee = model.called_function(call)
            if callee is not None:
                out += reach(model, callee)
        return out

    a = model.functions[0]
    assert reach(model, a) == ["a", "b"]  # b's calls of a are the cycle: they add nothing
    assert reach(model, a) is reach(model, a) and entered == ["a", "b"]


def test_cost_per_line_does_not_grow_with_the_module() -> None:
    """Model + rules on generated agent modules of 500 and 5,000 lines (bench/sizes.py): the
    CPU time per line of the larger one stays within 2x the smaller one's (a per-query scan
    made it 4x at these sizes)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("_dupguard_bench_sizes", ROOT / "bench" / "sizes.py")
    sizes = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = sizes
    spec.loader.exec_module(sizes)

    def per_line(lines: int, reps: int) -> float:
        text = sizes.generate(lines)
        runs = [sizes.measure(text) for _ in range(reps)]
        best = min(t["model"] + t["rules"] for t in runs)  # fewest seconds: the least disturbed run
        return best / text.count("\n")

    sizes.measure(sizes.generate(300))  # warm up
    small, large = per_line(500, 3), per_line(5000, 1)
    assert large <= 2 * small, (small, large)


class _CountedList(list):
    """A record list of the model that counts how often it is scanned from end to end."""

    scans: dict[str, int]
    name = ""

    def __iter__(self):
        self.scans[self.name] = self.scans.get(self.name, 0) + 1
        return super().__iter__()


class _CountedDict(dict):
    scans: dict[str, int]
    name = ""

    def _count(self) -> None:
        self.scans[self.name] = self.scans.get(self.name, 0) + 1

    def __iter__(self):
        self._count()
        return super().__iter__()

    def keys(self):
        self._count()
        return super().keys()

    def values(self):
        self._count()
        return super().values()

    def items(self):
        self._count()
        return super().items()


def _scans_of_the_records(text: str) -> dict[str, int]:
    """How many times the rules (and the analyses they ask for) scan each record collection of
    the model, running every enabled rule on ``text``: which collection, how many scans."""
    from dupguard.config import Settings
    from dupguard.parsing import parse_module
    from dupguard.rules import RuleContext, load
    from dupguard.semantic.builder import build_model
    from dupguard.semantic.catalog_loader import catalog_for
    from dupguard.semantic.positions import Positions

    settings = Settings()
    module = parse_module(text)
    model = build_model(module, catalog_for(settings), settings)
    scans: dict[str, int] = {}
    for name, value in vars(model).items():
        if name.startswith("_") or name == "memo" or type(value) not in (list, dict):
            continue
        counted = (_CountedList if type(value) is list else _CountedDict)(value)
        counted.scans, counted.name = scans, name
        setattr(model, name, counted)
    ctx = RuleContext(Positions(module))
    rules = load()
    findings = sum(1 for code in sorted(settings.enabled_codes()) for _ in rules[code](model, ctx))
    assert findings > 0
    return scans


def test_no_rule_scans_the_records_once_per_object() -> None:
    """Not timed: the rules scan each record list of the model (calls, bindings, functions,
    loops, imports...) as many times on a generated module of 3,000 lines as on one of 600
    (bench/sizes.py's template: the same blocks, five times as many). A query that scans every
    function or binding once per shared object, per key or per call (how a 100,000-line module
    cost minutes: ``_accessors`` of semantic/shared.py, DUP102's agents per memory, DUP103's
    bindings per key, the Gradio host per call) makes the count grow with the module."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("_dupguard_bench_sizes", ROOT / "bench" / "sizes.py")
    assert spec is not None and spec.loader is not None
    sizes = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = sizes
    spec.loader.exec_module(sizes)

    small, large = _scans_of_the_records(sizes.generate(600)), _scans_of_the_records(sizes.generate(3000))
    assert {"calls", "bindings", "functions"} <= small.keys()
    assert large == small
