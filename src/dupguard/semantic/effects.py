"""Which tools change the world: the tools an agent is given, whether running one again
repeats a side effect, and whether that is already made safe (DUP507, DUP204).

A retry that re-runs ``search_web`` costs a model call; one that re-runs ``refund_order``
refunds twice; one that re-runs ``update_address`` writes the same address again. No import
says which is which, so the evidence is the tool's *name* (tools are named for the model, verb
first: ``send_email``, ``get_weather``, ``WebSearchTool``) and, when the name says nothing, the
calls in the tool's own body (``requests.post``, ``smtp.sendmail``). Three effects:

* ``write``: each run makes something new — a refund, an email, a post, an order, a row —
  so a second run is a duplicate;
* ``overwrite``: each run sets a state — update, save, delete, cancel, rename — so a second
  run with the same arguments leaves what the first left (idempotent by nature);
* ``read``: lookups, searches, computations.

The vocabulary (``semantic.vocabulary``, "tool effects") starts from the runtime's own list
of state-changing verbs (``dupguard.runtime.similarity.DANGEROUS_STEMS``), split into the two
kinds of writes, less the verbs that as often name reads or things. The first verb of a name decides
(``get_order_status`` reads, ``send_order`` writes); a name with no known verb is *unknown*,
and every rule treats unknown as "not shown to write" or "not shown to read", whichever keeps
it quiet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..runtime.similarity import _stem as stem
from .guards import idempotent_in
from .model import Call, Function, Model, string_value
from .vocabulary import (
    ADDED_THINGS,
    BODY_NOISE,
    BODY_WRITE_METHODS,
    IDEMPOTENCY_HEADER,
    IDEMPOTENCY_KEYWORDS,
    MODEL_CALL_SUFFIXES,
    NOISE,
    OVERWRITE_STEMS,
    READ_STEMS,
    STORING_STEMS,
    WRITE_STEMS,
)

if TYPE_CHECKING:
    import libcst as cst

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def words(name: str) -> list[str]:
    """``RefundOrderTool`` → ``["refund", "order", "tool"]``; ``send_email`` → ``["send", "email"]``."""
    return [w.lower() for w in _WORD.findall(name)]


def name_effect(name: str) -> str | None:
    """The effect of the first known verb of a tool's name: "write", "overwrite" or "read";
    None when it has none."""
    named = words(name)
    for at, word in enumerate(named):
        if word in NOISE:
            continue
        forms = {word, stem(word)}
        if word.endswith(("er", "or")) and len(word) > 5:  # ``FileWriterTool``, ``EmailSender``
            forms |= {word[:-2], stem(word[:-2])}
        if forms & WRITE_STEMS:
            return "write"
        if forms & OVERWRITE_STEMS:
            if forms & STORING_STEMS and any({w, stem(w)} & ADDED_THINGS for w in named[at + 1 :]):
                return "write"  # ``save_email_draft``: each run stores one more draft
            return "overwrite"
        if forms & READ_STEMS:
            return "read"
    return None


@dataclass(frozen=True, eq=False)
class ToolRef:
    """One tool an agent is given: the name the model sees (as far as the code says it) and
    the module-local function that implements it, when there is one."""

    name: str | None
    function: Function | None
    node: cst.CSTNode

    def effect(self, model: Model) -> str | None:
        """The tool's effect ("write", "overwrite", "read", or None when unknown): the name
        first, then the body's own calls."""
        if self.function is not None and echoes_its_input(self.function):
            return "read"  # ``def submit_plan(plan: Plan) -> Plan: return plan``: an output sink
        found = name_effect(self.name) if self.name else None
        if found is None and self.function is not None and self.function.name != self.name:
            found = name_effect(self.function.name)
        if found is None and self.function is not None:
            asks_model = any(_asks_model(call) for call in self.function.calls)
            for call in self.function.calls:
                if asks_model and _stages_model_input(call):
                    continue  # ``client.files.upload(file=path)`` before ``generate_content([file, ...])``
                last = call.method or (call.func or "").rsplit(".", 1)[-1]
                if last in BODY_WRITE_METHODS or (last not in BODY_NOISE and name_effect(last) == "write"):
                    return "write"  # ``requests.post(...)``, ``create_draft(service, ...)``
        return found

    def idempotent(self, model: Model) -> bool:
        """Is this tool safe to repeat by construction: ``@idempotent``/``@run_once`` on it, an
        idempotency check in its body (``already_processed(key)``, ``redis.set(k, nx=True)``, a
        ``dupguard.runtime`` helper), or an idempotency key sent with its write?"""
        fn = self.function
        if fn is None:
            return False
        for dec in fn.decorators:
            text = f"{dec.dotted or ''} {dec.callee or ''}".lower()
            if "idempot" in text or "once" in text:
                return True
        if idempotent_in(model, fn):
            return True
        return any(_sends_idempotency_key(call) for call in fn.calls)


def echoes_its_input(fn: Function) -> bool:
    """A tool whose body only hands back one of its parameters (after a docstring): the
    structured-output sink an agent is told to call with its answer (``submit_sql_queries(plan)``
    returning ``plan``, with ``tool_use_behavior="stop_on_first_tool"``). It makes nothing,
    whatever its name says, so running it twice is two answers, not two submissions. Taught by
    Open-Earth-Foundation/Query_mechanism_urbind@3a310cc053045bd901b0e0d6e9bdd16fc8cfc024
    backend/modules/orchestrator/agent.py:41-52 (bench/real-apps/labels-e.toml)."""
    import libcst as cst

    if fn.calls or fn.global_names or len(fn.returns) != 1:
        return False
    value = fn.returns[0]
    if type(value) is not cst.Name or value.value not in fn.params:
        return False
    body = fn.node.body
    statements = body.body if type(body) is cst.IndentedBlock else (body,)
    for statement in statements:
        if type(statement) is not cst.SimpleStatementLine:
            return False
        for small in statement.body:
            if type(small) is cst.Return:
                continue
            if type(small) is cst.Expr and type(small.value) in (cst.SimpleString, cst.ConcatenatedString):
                continue  # the docstring
            return False
    return True


def _asks_model(call: Call) -> bool:
    """A model call (``client.models.generate_content``, ``client.chat.completions.create``,
    ``client.responses.create``, ``client.messages.create``)."""
    func = call.func or ""
    return func.endswith(MODEL_CALL_SUFFIXES)


def _stages_model_input(call: Call) -> bool:
    """An upload to a model provider's file store (``client.files.upload``, ``client.files.create``):
    in a tool that then asks the model about the file, the upload is the question's input, not an
    effect anyone sees; a retry stages a second temporary copy and asks again. Taught by
    bstraehle/ai-ml-dl@9f0a595f21484a67ee63be557d30fd4820e5b667 hugging-face/gaia/crew.py:256-286
    ("Code Execution Tool": upload the script, ask Gemini to run it in its sandbox)."""
    head, _, last = (call.func or "").rpartition(".")
    return last in ("upload", "create") and head.rsplit(".", 1)[-1] == "files"


def _sends_idempotency_key(call: Call) -> bool:
    import libcst as cst

    for arg in call.args:
        if (arg.keyword or "").lower() in IDEMPOTENCY_KEYWORDS:
            return True
        if arg.keyword in ("headers", "extra_headers") and type(arg.node) is cst.Dict:
            for element in arg.node.elements:
                key = string_value(getattr(element, "key", None))
                if isinstance(key, str) and IDEMPOTENCY_HEADER.search(key):
                    return True
    return False


# ----------------------------------------------------------------------------- tool lists


def tools_of(
    model: Model, call: Call, kwargs: tuple[str, ...] = ("tools",), position: int | None = None, depth: int = 0
) -> list[ToolRef] | None:
    """The tools ``call`` (an agent constructor or factory) is given, or None when the list
    cannot be followed (a parameter, a call into another module). An element that is itself
    an agent (Agno ``members=[researcher]``) contributes that agent's tools."""
    found: list[ToolRef] = []
    given = False
    args = [call.kw(k) for k in kwargs]
    if position is not None and not any(args):
        positional = [a for a in call.args if a.keyword is None and not a.star]
        args.append(positional[position] if len(positional) > position else None)
    for arg in args:
        if arg is None:
            continue
        given = True
        elements = _elements(model, arg.node, call.function, depth)
        if elements is None:
            return None
        for element in elements:
            refs = _refs(model, element, call.function, depth)
            if refs is None:
                return None
            found += refs
    return found if given else []


def _elements(model: Model, node: cst.CSTNode, scope: Function | None, depth: int) -> list[cst.CSTNode] | None:
    import libcst as cst

    if depth > 4:
        return None
    kind = type(node)
    if kind is cst.List or kind is cst.Tuple:
        out: list[cst.CSTNode] = []
        for element in node.elements:  # type: ignore[attr-defined]
            if type(element) is cst.StarredElement:
                inner = _elements(model, element.value, scope, depth + 1)
                if inner is None:
                    return None
                out += inner
            else:
                out.append(element.value)
        return out
    if kind is cst.BinaryOperation and type(node.operator) is cst.Add:  # type: ignore[attr-defined]
        left = _elements(model, node.left, scope, depth + 1)  # type: ignore[attr-defined]
        right = _elements(model, node.right, scope, depth + 1)  # type: ignore[attr-defined]
        return None if left is None or right is None else left + right
    if kind is cst.Name:
        binding = model.local_binding(node.value, scope)  # type: ignore[attr-defined]
        if binding is None:
            return None
        return _elements(model, binding.value, binding.function, depth + 1)
    call = model.call_for_node(node) if kind is cst.Call else None
    if call is not None:
        if call.func in ("list", "tuple") and len(call.args) == 1:
            return _elements(model, call.args[0].node, scope, depth + 1)
        fn = model.called_function(call)
        if fn is not None and len(fn.returns) == 1:  # a module-local ``get_tools()``
            return _elements(model, fn.returns[0], fn, depth + 1)
    return None


def _refs(model: Model, node: cst.CSTNode, scope: Function | None, depth: int) -> list[ToolRef] | None:
    import libcst as cst

    from .toolnames import FUNCTION_KWARGS, tool_name

    kind = type(node)
    if kind is cst.SimpleString:  # ``ToolRetryMiddleware(tools=["send_email"])``
        value = string_value(node)
        return [ToolRef(value if isinstance(value, str) else None, None, node)]
    if kind is cst.Attribute:
        return [ToolRef(node.attr.value, None, node)]  # type: ignore[attr-defined]
    if kind is cst.Name:
        name = node.value  # type: ignore[attr-defined]
        binding = model.local_binding(name, scope)
        if binding is not None and binding.value_call is not None:
            return _call_refs(model, binding.value_call, binding.value, depth) or [ToolRef(name, None, node)]
        fn = model.function_named(name, within=scope)
        if fn is not None:
            return [ToolRef(tool_name(model, node, scope) or fn.name, fn, node)]
        return [ToolRef(name, None, node)]
    call = model.call_for_node(node) if kind is cst.Call else None
    if call is None:
        return None
    refs = _call_refs(model, call, node, depth)
    if refs is not None:
        return refs
    if call.func in model.classes:  # ``GmailTool()``: a tool class of this module
        return [_class_ref(model, call.func, node)]
    explicit = tool_name(model, node, scope)
    fn = None
    wrapped = None  # ``function_tool(self.search_database)``: the wrapped callable's name
    for key in (*FUNCTION_KWARGS, "0"):
        arg = call.arg(key)
        if arg is None or not arg.dotted or "(" in arg.dotted or "[" in arg.dotted:
            continue
        head, _, last = arg.dotted.rpartition(".")
        wrapped = wrapped or last
        if not head:
            fn = model.function_named(last, within=scope)
        elif head in ("self", "cls") and scope is not None and scope.class_name:
            fn = model.function_named(last, scope.class_name)
        if fn is not None:
            break
    if explicit is None:
        name_arg = call.kw("name")
        value = string_value(name_arg.node) if name_arg is not None else None
        explicit = value if isinstance(value, str) else None
    if explicit is None and fn is None:
        explicit = wrapped or (call.func or "").replace("()", "").rsplit(".", 1)[-1] or None  # ``SerperDevTool()``
    return [ToolRef(explicit or (fn.name if fn else None), fn, node)]


# Methods that run a tool class (CrewAI/LangChain ``BaseTool._run``, smolagents ``forward``).
TOOL_RUN_METHODS = ("_run", "_arun", "run", "forward", "__call__")


def _class_ref(model: Model, cls: str, node: cst.CSTNode) -> ToolRef:
    """A tool class defined here: the ``name`` it declares (else the class name) and the method
    that runs it."""
    name = cls
    for binding in model.member_bindings(cls, "name"):
        value = string_value(binding.value)
        if isinstance(value, str) and value:
            name = value
    run = next((f for m in TOOL_RUN_METHODS if (f := model.function_named(m, cls)) is not None), None)
    return ToolRef(name, run, node)


def _call_refs(model: Model, call: Call, node: cst.CSTNode, depth: int) -> list[ToolRef] | None:
    """The tools of an agent given where a tool is expected (a team member, a handoff)."""
    if depth >= 2 or call.kw("tools") is None:
        return None
    return tools_of(model, call, depth=depth + 1)


def writes_without_guard(model: Model, tools: list[ToolRef]) -> list[ToolRef]:
    """The tools whose second run is a duplicate (``write``) and that are not made idempotent."""
    return [t for t in tools if t.effect(model) == "write" and not t.idempotent(model)]


def tool_label(tool: ToolRef) -> str:
    return f"`{tool.name}`" if tool.name else "a tool"


# ----------------------------------------------------------------------------- served code


def is_test_module(model: Model) -> bool:
    """A test module (it imports pytest or unittest, or defines ``test_*`` functions at the top
    level): where deliberate duplicates and example retry settings live, never served code."""
    if any(q.split(".")[0] in ("pytest", "unittest") for q in model.imports.values()):
        return True
    return any(fn.parent is None and fn.class_name is None and fn.name.startswith("test_") for fn in model.functions)
