"""One traversal of the LibCST tree that fills the semantic ``Model``.

This is the only place that walks a tree. It keeps a few stacks (functions, classes,
loops, ``with`` items, ``try`` parts, enclosing calls, suites) and records every call,
binding, function and list literal with a snapshot of those stacks, so rules can answer
"is this call inside a retry loop, under a lock, in a request handler?" by reading fields.
It walks with ``visitor.Walker`` (libcst's hooks and order, without libcst's node rebuilding),
which costs a fraction of an empty ``CSTVisitor`` walk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from .catalog import Catalog
from .contexts import classify_functions
from .model import (
    SESSION_KEYS,
    Arg,
    Binding,
    Call,
    ConstantKey,
    Decorator,
    Function,
    ListLiteral,
    Loop,
    Model,
    TryFrame,
    is_literal,
    string_value,
)
from .nodes import LEAVING, dotted
from .visitor import Walker

if TYPE_CHECKING:
    from ..config import Settings
    from ..project import ProjectFacts


def _module_name(node: cst.BaseExpression | None) -> str | None:
    return dotted(node) if node is not None else None


def _is_main_test(test: cst.BaseExpression) -> bool:
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    names = {dotted(left), dotted(right)}
    strings = [string_value(n) for n in (left, right) if type(n) is cst.SimpleString]
    return "__name__" in names and strings == ["__main__"] and type(test.comparisons[0].operator) is cst.Equal


class ModelBuilder(Walker):
    def __init__(self, catalog: Catalog, extra_handlers: frozenset[str] = frozenset()) -> None:
        self.model = Model(catalog=catalog)
        self._extra_handlers = extra_handlers
        # ("module" | "class" | "function", the class's name in a class body)
        self._scopes: list[tuple[str, str | None]] = [("module", None)]
        self._functions: list[Function] = []
        self._loops: list[Loop] = []
        self._withs: list[str] = []
        self._outer_withs: list[list[str]] = []  # the enclosing functions' ``_withs``
        self._trys: list[TryFrame] = []
        self._calls: list[Call] = []
        self._suites: list[list[Any]] = []  # [suite id, {id(stmt): index}, current index]
        self._statements: list[cst.CSTNode] = []
        self._main_ifs: list[cst.If] = []
        self._conds: list[cst.BaseExpression] = []
        self._awaited: set[int] = set()
        self._call_index: dict[int, Call] = {}

    # ------------------------------------------------------------------ helpers

    @property
    def _function(self) -> Function | None:
        return self._functions[-1] if self._functions else None

    def _scope(self) -> tuple[str, str | None]:
        return self._scopes[-1]

    def _block(self) -> tuple[int, int]:
        if not self._suites:
            return (0, 0)
        frame = self._suites[-1]
        return (frame[0], frame[2])

    def _branch(self) -> tuple[int, ...]:
        return tuple(frame[0] for frame in self._suites)

    def _enter_suite(self, node: cst.CSTNode, body: Sequence[cst.CSTNode]) -> None:
        self._suites.append([id(node), {id(s): i for i, s in enumerate(body)}, -1])

    def _enter_statement(self, node: cst.CSTNode) -> None:
        if self._suites:
            frame = self._suites[-1]
            index = frame[1].get(id(node))
            if index is not None:
                frame[2] = index
        self._statements.append(node)

    def _leave_statement(self) -> None:
        self._statements.pop()

    def _resolve(self, text: str | None) -> str | None:
        if text is None:
            return None
        return self.model.resolve(text.replace("()", "").replace("[]", ""))

    def _add_local(self, name: str) -> None:
        fn = self._function
        if fn is not None and self._scope()[0] == "function":
            fn.local_names.add(name)

    # ------------------------------------------------------------------ module, suites

    def visit_Module(self, node: cst.Module) -> None:
        self._enter_suite(node, node.body)

    def leave_Module(self, original_node: cst.Module) -> None:
        self._suites.pop()
        self.model.finalize()
        classify_functions(self.model, self._extra_handlers)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter_suite(node, node.body)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._suites.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._enter_statement(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._leave_statement()

    # ------------------------------------------------------------------ imports

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
                self.model.imports[local] = full
            else:
                local = full.split(".")[0]
                self.model.imports.setdefault(local, local)
            self._add_local(local)
            self._note_import(full)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if type(node.names) is cst.ImportStar:
            self.model.star_import = True
            return
        aliases = cast(Sequence[cst.ImportAlias], node.names)
        module = _module_name(node.module)
        if node.relative:
            module = self._relative_module(len(node.relative), module or "")
        if module is None:  # a relative import the index cannot place: the names are bound all the same
            for alias in aliases:
                bound = alias.asname.name if alias.asname else alias.name
                if type(bound) is cst.Name:
                    self.model.unplaced_imports.add(bound.value)
            return
        for alias in aliases:
            name = _module_name(alias.name)
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname and type(alias.asname.name) is cst.Name else name
            self.model.imports[local] = f"{module}.{name}"
            self._add_local(local)
        self._note_import(module)

    def _relative_module(self, level: int, module: str) -> str | None:
        """``from .agent import x`` → "app.api.agent" when the project index says this file is in
        package ``app.api`` (the same resolution as the index's, so facts match); else None."""
        project = self.model.project
        if project is None or not project.package:
            return None
        from ..project import absolute_module

        return absolute_module(project.package, level, module)

    def _note_import(self, module: str) -> None:
        top = module.split(".")[0]
        if top == "streamlit":
            self.model.is_streamlit = True
        elif top == "django":
            self.model.imports_django = True

    # ------------------------------------------------------------------ classes and functions

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._enter_statement(node)
        self.model.classes[node.name.value] = [
            self._resolve(dotted(base.value)) or (dotted(base.value) or "") for base in node.bases
        ]
        self._add_local(node.name.value)

    def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
        self._scopes.append(("class", node.name.value))

    def leave_ClassDef_body(self, node: cst.ClassDef) -> None:
        self._scopes.pop()

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._leave_statement()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter_statement(node)
        self._add_local(node.name.value)
        kind, owner = self._scope()
        class_name = owner if kind == "class" else None
        parent = self._function
        qual = node.name.value
        if class_name:
            qual = f"{class_name}.{qual}"
        elif parent is not None:
            qual = f"{parent.qualname}.<locals>.{qual}"
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        for extra in (params.star_arg, params.star_kwarg):
            if type(extra) is cst.Param:
                all_params.append(extra)
        names = tuple(p.name.value for p in all_params)
        decorators = []
        for d in node.decorators:
            text = dotted(d.decorator.func if type(d.decorator) is cst.Call else d.decorator)
            decorators.append(Decorator(dotted=text, callee=self._resolve(text), call=None, node=d.decorator))
        fn = Function(
            node=node,
            name=node.name.value,
            qualname=qual,
            class_name=class_name,
            parent=parent,
            is_async=node.asynchronous is not None,
            params=names,
            param_defaults={p.name.value: p.default for p in all_params if p.default is not None},
            param_annotations={p.name.value: p.annotation.annotation for p in all_params if p.annotation is not None},
            decorators=tuple(decorators),
        )
        fn.local_names.update(names)
        self.model.functions.append(fn)

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        fn = next(f for f in reversed(self.model.functions) if f.node is node)
        self._functions.append(fn)
        self._scopes.append(("function", None))
        # the body runs when the function is called, not inside the ``with`` around its ``def``
        # (``with gr.Blocks() as demo: def respond(...)``, ``with lock: def later(...)``)
        self._outer_withs.append(self._withs)
        self._withs = []

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self._functions.pop()
        self._scopes.pop()
        self._withs = self._outer_withs.pop()

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave_statement()

    def visit_Global(self, node: cst.Global) -> None:
        if self._function is not None:
            self._function.global_names.update(n.name.value for n in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        if self._function is not None and node.value is not None:
            self._function.returns.append(node.value)

    # ------------------------------------------------------------------ control flow

    def visit_If(self, node: cst.If) -> None:
        self._enter_statement(node)
        if not self._functions and _is_main_test(node.test):
            self._main_ifs.append(node)
        if self._loops and type(node.test) is cst.Comparison and _exits(node.body):
            self._loops[-1].capped = True
        if self._loops and self._loops[-1].function is self._function and _exits(node.body):
            self._loops[-1].exit_tests.append(node.test)
        if self._function is not None and _exits(node.body, _EXITS_OR_CONTINUE):
            self._function.exit_tests.append(node.test)

    def visit_If_body(self, node: cst.If) -> None:
        self._conds.append(node.test)

    def leave_If_body(self, node: cst.If) -> None:
        self._conds.pop()

    def leave_If(self, original_node: cst.If) -> None:
        self._leave_statement()
        if self._main_ifs and self._main_ifs[-1] is original_node:
            self._main_ifs.pop()

    def _push_loop(self, node: cst.CSTNode, kind: str, **info: Any) -> None:
        loop = Loop(node=node, kind=kind, function=self._function, **info)
        self._loops.append(loop)
        self.model.loops.append(loop)

    def visit_For(self, node: cst.For) -> None:
        self._enter_statement(node)
        for name in _target_names(node.target):
            self._add_local(name)
        iter_callee = None
        capped = False
        if type(node.iter) is cst.Call:
            iter_callee = self._resolve(dotted(node.iter.func)) or dotted(node.iter.func)
            capped = iter_callee in ("range", "builtins.range")
        self._push_loop(node, "for", iter_callee=iter_callee, capped=capped)

    def leave_For(self, original_node: cst.For) -> None:
        self._loops.pop()
        self._leave_statement()

    def visit_While(self, node: cst.While) -> None:
        self._enter_statement(node)
        test = node.test
        while_true = (type(test) is cst.Name and test.value == "True") or (
            type(test) is cst.Integer and test.value != "0"
        )
        self._push_loop(node, "while", while_true=while_true, capped=type(test) is cst.Comparison)

    def leave_While(self, original_node: cst.While) -> None:
        self._loops.pop()
        self._leave_statement()

    def visit_Break(self, node: cst.Break) -> None:
        if self._loops:
            self._loops[-1].has_break = True

    def _visit_comprehension(self, node: cst.CSTNode) -> None:
        self._push_loop(node, "comprehension")

    def _leave_comprehension(self, node: cst.CSTNode) -> None:
        self._loops.pop()

    visit_GeneratorExp = visit_ListComp = visit_SetComp = visit_DictComp = _visit_comprehension
    leave_GeneratorExp = leave_ListComp = leave_SetComp = leave_DictComp = _leave_comprehension

    def visit_Try(self, node: cst.Try) -> None:
        self._enter_statement(node)
        if self._loops and self._loops[-1].function is self._function:
            self._loops[-1].has_try = True

    def leave_Try(self, original_node: cst.Try) -> None:
        self._leave_statement()

    visit_TryStar = visit_Try
    leave_TryStar = leave_Try

    def visit_Try_body(self, node: cst.Try) -> None:
        self._trys.append(TryFrame(node, "body"))

    def leave_Try_body(self, node: cst.Try) -> None:
        self._trys.pop()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._trys.append(TryFrame(node, "except"))

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._trys.pop()

    def visit_Try_finalbody(self, node: cst.Try) -> None:
        self._trys.append(TryFrame(node, "finally"))

    def leave_Try_finalbody(self, node: cst.Try) -> None:
        self._trys.pop()

    def visit_With(self, node: cst.With) -> None:
        self._enter_statement(node)
        for item in node.items:
            if item.asname is not None:
                for name in _target_names(item.asname.name):
                    self._add_local(name)

    def visit_With_body(self, node: cst.With) -> None:
        self._withs.extend(dotted(item.item) or "?" for item in node.items)

    def leave_With_body(self, node: cst.With) -> None:
        del self._withs[len(self._withs) - len(node.items) :]

    def leave_With(self, original_node: cst.With) -> None:
        self._leave_statement()

    def visit_Match(self, node: cst.CSTNode) -> None:
        self._enter_statement(node)

    def leave_Match(self, original_node: cst.CSTNode) -> None:
        self._leave_statement()

    # ------------------------------------------------------------------ expressions

    def visit_Await(self, node: cst.Await) -> None:
        self._awaited.add(id(node.expression))

    def visit_Call(self, node: cst.Call) -> None:
        func = dotted(node.func)
        receiver = method = None
        if type(node.func) is cst.Attribute:
            receiver = dotted(node.func.value)
            method = node.func.attr.value
        args = tuple(
            Arg(
                keyword=a.keyword.value if a.keyword is not None else None,
                dotted=dotted(a.value),
                node=a.value,
                star=a.star,
            )
            for a in node.args
        )
        call = Call(
            node=node,
            func=func,
            callee=self._resolve(func),
            receiver=receiver,
            method=method,
            args=args,
            function=self._function,
            loops=tuple(self._loops),
            withs=tuple(self._withs),
            trys=tuple(self._trys),
            outer=tuple(self._calls),
            statement=self._statements[-1] if self._statements else node,
            block=self._block(),
            branch=self._branch(),
            in_main=bool(self._main_ifs),
            awaited=id(node) in self._awaited,
            conditions=tuple(self._conds),
            path=tuple((frame[0], frame[2]) for frame in self._suites),
        )
        self._calls.append(call)
        self._call_index[id(node)] = call
        self.model.calls.append(call)
        if call.function is not None:
            call.function.calls.append(call)

    def leave_Call(self, original_node: cst.Call) -> None:
        self._calls.pop()

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """``tools += [extra]``: recorded like ``tools.__iadd__([extra])`` (DUP303)."""
        target = dotted(node.target)
        if type(node.operator) is not cst.AddAssign or target is None or "(" in target:
            return
        self.model.augmented.append(
            Call(
                node=node,
                func=f"{target}.__iadd__",
                callee=None,
                receiver=target,
                method="__iadd__",
                args=(Arg(keyword=None, dotted=dotted(node.value), node=node.value),),
                function=self._function,
                loops=tuple(self._loops),
                withs=tuple(self._withs),
                trys=tuple(self._trys),
                outer=tuple(self._calls),
                statement=self._statements[-1] if self._statements else node,
                block=self._block(),
                branch=self._branch(),
                in_main=bool(self._main_ifs),
                conditions=tuple(self._conds),
                path=tuple((frame[0], frame[2]) for frame in self._suites),
            )
        )

    def _constant_key(self, key: str, value: cst.BaseExpression) -> None:
        if key not in SESSION_KEYS:
            return
        literal = is_literal(value)
        if not literal and type(value) not in _NAMED_KEYS:
            return
        (self.model.constant_keys if literal else self.model.key_values).append(
            ConstantKey(
                key=key,
                value=value,
                function=self._function,
                statement=self._statements[-1] if self._statements else value,
                call=self._calls[-1] if self._calls else None,
                in_main=bool(self._main_ifs),
            )
        )

    def visit_Dict(self, node: cst.Dict) -> None:
        for element in node.elements:
            if (
                type(element) is cst.DictElement
                and type(element.key) is cst.SimpleString
                and type(element.value) is cst.SimpleString
                and string_value(element.key) == "role"
            ):
                self.model.dict_roles[id(node)] = str(string_value(element.value))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if type(node.key) is cst.SimpleString:
            self._constant_key(str(string_value(node.key)), node.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._constant_key(node.keyword.value, node.value)

    def visit_List(self, node: cst.List) -> None:
        self.model.lists[id(node)] = ListLiteral(
            node=node,
            elements=tuple((dotted(e.value), e.value) for e in node.elements if type(e) is cst.Element),
        )

    # ------------------------------------------------------------------ bindings

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression, statement: cst.CSTNode) -> None:
        text = dotted(target)
        if text is None or "()" in text:
            return
        kind, class_name = self._scope()
        fn = self._function
        scope = kind
        if kind == "function" and fn is not None and type(target) is cst.Name:
            if text in fn.global_names:
                scope = "module"
            else:
                fn.local_names.add(text)
        self.model.bindings.append(
            Binding(
                target=text,
                value=value,
                value_call=self._call_index.get(id(value)),
                value_dotted=dotted(value) if type(value) is cst.Name or type(value) is cst.Attribute else None,
                statement=statement,
                scope=scope,
                function=fn,
                class_name=class_name if kind == "class" else (fn.class_name if fn else None),
                block=self._block(),
                branch=self._branch(),
                in_main=bool(self._main_ifs),
                seq=len(self.model.calls),
                withs=tuple(self._withs),
            )
        )

    def leave_Assign(self, original_node: cst.Assign) -> None:
        statement = self._statements[-1] if self._statements else original_node
        for t in original_node.targets:
            if type(t.target) is cst.Tuple or type(t.target) is cst.List:
                for element in t.target.elements:
                    for name in _target_names(element.value):
                        self._add_local(name)
            else:
                self._bind(t.target, original_node.value, statement)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        if original_node.value is not None:
            self._bind(
                original_node.target, original_node.value, self._statements[-1] if self._statements else original_node
            )
        elif type(original_node.target) is cst.Name:
            self._add_local(original_node.target.value)


def _target_names(node: cst.CSTNode) -> list[str]:
    if type(node) is cst.Name:
        return [node.value]
    if type(node) is cst.Tuple or type(node) is cst.List:
        return [n for e in node.elements for n in _target_names(e.value)]
    return []


# key values that may still be constants: a name, an attribute, an f-string, strings concatenated
# with an f-string among them (DUP103 resolves them; ``is_literal`` says which keys are literals)
_NAMED_KEYS: frozenset[type[cst.CSTNode]] = frozenset(
    {cst.Name, cst.Attribute, cst.FormattedString, cst.ConcatenatedString}
)
_EXITS_OR_CONTINUE: frozenset[type[cst.CSTNode]] = LEAVING | {cst.Continue}


def _exits(body: cst.BaseSuite, kinds: frozenset[type[cst.CSTNode]] = LEAVING) -> bool:
    """Does an ``if`` body leave the loop (``kinds``: break / return / raise) in its own statements?"""
    for stmt in body.body:
        smalls = stmt.body if type(stmt) is cst.SimpleStatementLine else (stmt,)
        if any(type(s) in kinds for s in smalls):
            return True
    return False


def build_model(
    module: cst.Module, catalog: Catalog, settings: Settings | None = None, project: ProjectFacts | None = None
) -> Model:
    """The model of one file. ``project``: what the project index knows about the names the
    file imports from the project's other modules (data only: the model reads no other file)."""
    extra = frozenset(settings.extend_handler_decorators) if settings is not None else frozenset()
    builder = ModelBuilder(catalog, extra)
    builder.model.project = project
    if settings is not None:
        builder.model.idempotency_guards = frozenset(settings.extend_idempotency_guards)
    builder.walk(module)
    return builder.model
