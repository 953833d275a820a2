"""What executes tools: agent runs, tool executions and model calls.

The retries family (DUP501/502/504/505) asks the same two questions of every call: does it
make tools run (so that running it again runs the tools again), and has the code already
made a second run harmless (an idempotency key, a seen-id set, a ``dupguard.runtime``
helper)? This module answers the first from the model, ``guards.idempotent`` the second; the
rule-specific shapes (retry loops, replays, queue consumers, tool loops) live in
``retries.py``, ``toolcalls.py`` and
``dupguard.rules.retries.queue_without_lease``. The handler rules (DUP303/401) ask the
first question too, to know whether code runs once per agent turn: ``agent_run`` is the one
definition of an agent run for both.

**An agent run** is a call that runs one agent turn, tools included:

- a method in the catalog entry's ``run_methods`` on a receiver that resolves to a catalog
  agent or stateless-but-tool-running object (``agent.achat``, ``user_proxy.initiate_chat``,
  ``crew.kickoff``, ``graph.invoke`` when the file builds a ``ToolNode``,
  ``create_react_agent(...).invoke``), whether the receiver is a local, a module binding,
  ``self.x``, a parameter annotated with the class, a ``Depends(factory)`` parameter or a
  factory call ``get_agent().run(...)``;
- a class-level run: ``Runner.run(agent, ...)`` / ``Runner.run_sync`` (openai-agents), where the
  agent is configuration and the runner executes its tools;
- calling the agent object itself when the entry lists ``__call__`` (Strands ``agent("...")``);
- an unresolved receiver whose name says it is an agent (``agent``, ``assistant``, ``crew``)
  called with a distinctive run method (``achat``, ``initiate_chat``, ``kickoff``…).

LLM clients (``ChatOpenAI``, ``OpenAIChatCompletionClient``) and tool-less chains
(``LLMChain``) are catalogued with run methods but run no tools: they are not agent runs.

**A tool execution** is a call that runs one tool (or a batch of them):

- a function named like one (``execute_tool``, ``run_tool``, ``process_tool_calls``,
  ``handle_tool_call``, ``dispatch_tool``…);
- a dispatch through a name-keyed table: ``TOOLS[name](**args)``, or
  ``fn = available_functions[name]; fn(**args)`` (the raw OpenAI loop), or
  ``getattr(tools, name)(**args)``;
- a tool object invoked: ``tool.invoke(args)``, ``tools_by_name[call["name"]].invoke(...)``;
- a call fed the name and the arguments of a tool call: ``execute(call.function.name,
  json.loads(call.function.arguments))``.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .catalog import Entry, Kind
from .catalog_data import DEPENDS, GRAPH_ENTRIES, LLM_ONLY, MODEL_CALLEES, TOOL_NODE_CALLEES
from .guards import idempotent, idempotent_in, once_context, runtime_name
from .model import Call, Function, Model, analysis, recursive_analysis
from .nodes import dotted, loop_parts, token_text
from .vocabulary import (
    AGENT_HELPER_RE,
    AGENT_NAME_RE,
    DISPATCH_WORDS,
    DISTINCTIVE_RUN_METHODS,
    GENERIC_EXEC_RE,
    NON_AGENT_ROOTS,
    NOT_EXECUTION_RE,
    NOT_EXECUTIONS,
    TOOL_CALLS_ITERABLE_RE,
    TOOL_EXEC_RE,
    TOOL_OBJECT_METHODS,
)

# queues.py (DUP504's detection) imports these under their former names from here
call_guarded = idempotent
ADAPTER_RUNS = frozenset({"adapter.run", "adapter.run_sync", "adapter.stream"})
guarded_in = idempotent_in
__all__ = ["Run", "agent_run", "call_guarded", "call_index", "direct_run", "guarded_in", "helper_runs"]
__all__ += ["is_model_call", "once_context", "receiver_entry", "run_at", "tool_execution"]


@dataclass(eq=False)
class Run:
    """A call that makes tools run, seen from the call site that starts it."""

    call: Call  # the call in the code being examined (may be a helper call)
    what: str  # "agent run `agent.achat(...)`", "tool execution `execute_tool_call(...)`"
    kind: str  # "agent" | "tool"
    inner: Call  # the call that actually runs the agent or tool (== call unless via a helper)
    node: cst.CSTNode | None = None  # where to point at it, when not ``inner`` (a decorated executor)


# ----------------------------------------------------------------------------- receivers


def _function_entry(model: Model, fn: Function | None) -> Entry | None:
    """The catalog entry a module-local factory returns."""
    if fn is None:
        return None
    for ret in fn.returns:
        call = model.returned_call(ret, fn)
        if call is not None:
            _, entry = model.kind_of_expr_call(call)
            if entry is not None:
                return entry
    return None


def _param_entry(model: Model, name: str, fn: Function) -> Entry | None:
    annotation = fn.param_annotations.get(name)
    if annotation is not None:
        text = dotted(annotation)
        resolved = model.resolve(text) if text else None
        entry = model.catalog.lookup(resolved) if resolved else None
        if entry is not None:
            return entry
    default = fn.param_defaults.get(name)
    call = model.call_for_node(default) if default is not None else None
    if call is not None and call.callee in DEPENDS and call.args:
        factory = model.function_named(call.args[0].dotted or "")
        return _function_entry(model, factory)
    return None


def receiver_entry(model: Model, text: str | None, fn: Function | None) -> tuple[Entry | None, bool]:
    """(catalog entry of the object ``text`` names, whether ``text`` resolved to anything).

    The second value is True when the name is bound to something we can see (a catalog
    object or not), so an unresolved-name heuristic does not override real knowledge.
    """
    if not text:
        return None, False
    if text.endswith("()") and "(" not in text[:-2] and "[" not in text:
        factory = model.function_named(text[:-2]) if "." not in text else None
        if factory is not None:
            return _function_entry(model, factory), True
        resolved = model.resolve(text[:-2])
        return (model.catalog.lookup(resolved) if resolved else None), resolved is not None
    if fn is not None and "." not in text and text in fn.params:
        return _param_entry(model, text, fn), fn.param_annotations.get(text) is not None
    binding = model.binding_of(text, fn)
    if binding is not None:
        if binding.value_call is None:
            return None, True
        _, entry = model.kind_of_expr_call(binding.value_call)
        if entry is None and binding.value_call.method == "bind_tools":
            return None, True
        return entry, True
    resolved = model.resolve(text)
    if resolved is not None:
        return model.catalog.lookup(resolved), True
    return None, False


def _runs_tools(model: Model, entry: Entry) -> bool:
    if entry.kind not in (Kind.AGENT, Kind.STATELESS) or not entry.run_methods:
        return False
    if entry.names[0] in LLM_ONLY:
        return False
    if entry.names[0] in GRAPH_ENTRIES:
        return _file_has_tool_node(model)
    return True


@analysis
def _file_has_tool_node(model: Model) -> bool:
    return any(c.callee in TOOL_NODE_CALLEES or c.method == "bind_tools" for c in model.calls)


@analysis
def agent_run(model: Model, call: Call) -> str | None:
    """``"agent.achat"`` when ``call`` runs an agent turn (tools included), else None.

    This is the one definition of "runs an agent" (DUP303/401 ask it whether code runs once per
    turn, DUP501-505 whether a repeated call repeats tool calls):

    - a catalog agent (or tool-running stateless object) reached through its receiver or a
      factory, called with one of its entry's run methods;
    - an unresolved receiver named like an agent, called with a distinctive run method, unless
      its binding shows another kind of object (an HTTP client, an LLM SDK client);
    - a project function named like an agent helper (``run_support_agent``) defined elsewhere;
    - a callable agent (``__call__`` in its run methods) called directly;
    - a run entry point of a ``dupguard.runtime.adapters`` guard (``guard.run(agent, ...)``),
      which runs the agent and its tools (once per ``turn_id`` when it gets one).
    """
    fn = call.function
    if runtime_name(model, call) in ADAPTER_RUNS:
        return f"{call.receiver}.{call.method}"
    if call.method and call.receiver:
        entry, known = receiver_entry(model, call.receiver, fn)
        if entry is not None:
            if call.method in entry.run_methods and _runs_tools(model, entry):
                return f"{call.receiver}.{call.method}".replace("[]", "[...]")
            return None
        last = call.receiver.rsplit(".", 1)[-1]
        if call.method in DISTINCTIVE_RUN_METHODS and AGENT_NAME_RE.search(last) and not _llm_like(model, call, known):
            return f"{call.receiver}.{call.method}".replace("[]", "[...]")
        return None
    if (
        call.func
        and "." not in call.func
        and "[" not in call.func
        and AGENT_HELPER_RE.match(call.func)
        and model.called_function(call) is None
    ):
        return call.func  # ``run_support_agent(ticket)`` imported from the project's agent module
    if call.func and "." not in call.func and "[" not in call.func:
        if call.callee is not None:
            return None  # ``Agent(...)``: constructing the class, not calling an instance
        entry, _ = receiver_entry(model, call.func, fn)
        if entry is not None and "__call__" in entry.run_methods and _runs_tools(model, entry):
            return call.func
    return None


def _llm_like(model: Model, call: Call, known: bool) -> bool:
    """A name that says agent but is bound to something that is not one (an HTTP client, a
    ``dupguard.runtime`` wrapper whose runs are guarded, …)."""
    if not known:
        return False
    binding = model.binding_of(call.receiver or "", call.function)
    if binding is None or binding.value_call is None:
        return False
    root = (binding.value_call.callee or "").split(".")[0]
    return root in NON_AGENT_ROOTS


# ----------------------------------------------------------------------------- tool executions


def _last(text: str | None) -> str:
    return (text or "").replace("[]", "").replace("()", "").rsplit(".", 1)[-1]


def _is_dispatch_table(text: str | None) -> bool:
    lowered = (text or "").lower()
    return any(word in lowered for word in DISPATCH_WORDS)


def _subscript_base(node: cst.CSTNode) -> str | None:
    """``TOOLS`` for ``TOOLS[name]``, ``registry`` for ``registry.get(name)``."""
    if type(node) is cst.Subscript:
        return dotted(node.value) or ""
    return None


def _mentions_name_key(node: cst.CSTNode) -> bool:
    """Is a subscript keyed by something that mentions a name (``call.function.name``)?"""
    return "name" in token_text(node).lower()


@analysis
def tool_execution(model: Model, call: Call) -> str | None:
    """``"execute_tool_call"`` / ``"TOOLS[...]"`` when ``call`` executes a tool, else None."""
    if (call.callee or "").startswith("dupguard."):
        return None
    name = _last(call.method or call.func)
    if name and TOOL_EXEC_RE.match(name):
        return (call.func or name).replace("[]", "[...]")
    func = call.func or ""
    # TOOLS[name](**args)
    if func.endswith("[]") and _is_dispatch_table(func[:-2].rsplit(".", 1)[-1]):
        return func[:-2] + "[...]"
    # fn = TOOL_MAP[call["function"]["name"]]; fn(**args)   /   fn = registry.get(name)
    if (
        func
        and "." not in func
        and "(" not in func
        and "[" not in func
        and call.callee is None
        and call.function is not None
        and func in call.function.local_names
    ):
        binding = model.local_binding(func, call.function)
        if binding is not None and binding.function is call.function:
            base = _subscript_base(binding.value)
            if base is not None and (_is_dispatch_table(base) or _mentions_name_key(binding.value)):
                return f"{func}|{base}[...]"
            vc = binding.value_call
            if vc is not None and vc.method == "get" and _is_dispatch_table(vc.receiver) and vc.args:
                return f"{func}|{vc.receiver}.get(...)"
    # getattr(tools, name)(**args)
    if func == "getattr()" and type(call.node) is cst.Call:
        inner = model.call_for_node(call.node.func)
        if inner is not None and inner.args and _is_dispatch_table(inner.args[0].dotted):
            return f"getattr({inner.args[0].dotted}, ...)"
    # tool.invoke(args), tools_by_name[name].invoke(args)
    if call.method in TOOL_OBJECT_METHODS and call.receiver:
        last = call.receiver.rsplit(".", 1)[-1].lower()
        if "tool" in last and not any(w in last for w in ("llm", "model", "client", "chat", "schema", "spec")):
            entry, _ = receiver_entry(model, call.receiver, call.function)
            if entry is None or entry.kind is Kind.TOOL:
                return f"{call.receiver}.{call.method}".replace("[]", "[...]")
    # execute(call) for call in msg.tool_calls
    if name and GENERIC_EXEC_RE.match(name) and _fed_a_tool_call_object(call):
        return (call.func or name).replace("[]", "[...]")
    # execute(call.function.name, json.loads(call.function.arguments))
    if (
        name
        and name not in NOT_EXECUTIONS
        and not NOT_EXECUTION_RE.match(name)
        and len(call.args) >= 2
        and _fed_a_tool_call(call)
    ):
        return (call.func or name).replace("[]", "[...]")
    return None


def _fed_a_tool_call_object(call: Call) -> bool:
    """A positional argument is the variable of a loop over a response's tool calls."""
    names = {a.dotted for a in call.args if a.keyword is None and a.dotted and "." not in a.dotted}
    if not names:
        return False
    for loop in call.loops:
        parts = loop_parts(loop.node)
        if parts is None:
            continue
        target, iterable = parts
        if (dotted(target) or "") in names and TOOL_CALLS_ITERABLE_RE.search(token_text(iterable)):
            return True
    return False


def _fed_a_tool_call(call: Call) -> bool:
    """The call receives a tool call's name and its arguments: ``call.function.name`` with
    ``json.loads(call.function.arguments)``, ``block.name`` with ``block.input``."""
    name_heads: set[str] = set()
    arg_heads: set[str] = set()
    for arg in call.args:
        text = arg.dotted or ""
        kind = type(arg.node)
        node_text = token_text(arg.node)
        if text.endswith((".function.name", ".tool_name")) or (
            kind is cst.Subscript and "function" in node_text and "name" in node_text
        ):
            name_heads.add("*")
        elif text.endswith(".name"):
            name_heads.add(text[:-5])
        if text.endswith((".function.arguments", ".tool_input")) or (
            (kind is cst.Call or kind is cst.Subscript) and "arguments" in node_text
        ):
            arg_heads.add("*")
        elif text.endswith(".input"):
            arg_heads.add(text[:-6])
    if "*" in name_heads and "*" in arg_heads:
        return True
    return bool(name_heads & arg_heads - {"*"})


def call_index(model: Model, call: Call) -> int:
    """Source order of a call among all calls of the file."""
    return model.order(call)


# ----------------------------------------------------------------------------- runs through helpers


def direct_run(model: Model, call: Call) -> Run | None:
    what = agent_run(model, call)
    if what is not None:
        return Run(call, f"agent run `{what}(...)`", "agent", call)
    what = tool_execution(model, call)
    if what is not None:
        name, _, source = what.partition("|")
        label = f"tool execution `{name}(...)`" + (f" (picked from `{source}`)" if source else "")
        return Run(call, label, "tool", call)
    return None


@recursive_analysis(on_cycle=list)
def helper_runs(model: Model, fn: Function) -> list[Run]:
    """Unguarded agent runs / tool executions inside a module-local function, and inside the
    module-local functions it calls (memoised per function; a call cycle contributes nothing)."""
    out: list[Run] = []
    for call in fn.calls:
        if call.function is not fn:
            continue
        run = run_at(model, call)
        if run is not None and not idempotent(model, run.call):
            out.append(run)
    return out


def run_at(model: Model, call: Call) -> Run | None:
    """The run a call starts: itself, or the first unguarded run inside the helper it calls."""
    run = direct_run(model, call)
    if run is not None:
        return run
    helper = model.called_function(call)
    if helper is None or helper is call.function:
        return None
    inner = helper_runs(model, helper)
    if inner:
        first = inner[0]
        return Run(call, f"{first.what} inside `{helper.name}()`", first.kind, first.inner, first.node)
    return None


def is_model_call(model: Model, call: Call) -> bool:
    """A chat-model request that can answer with tool calls."""
    receiver = call.receiver or ""
    last = receiver.rsplit(".", 1)[-1]
    if call.method in ("create", "acreate", "parse", "stream") and last in ("completions", "messages", "responses"):
        return True
    if call.callee in MODEL_CALLEES or call.method in ("generate_content", "generate_content_async"):
        return True
    if call.method in ("complete", "complete_async") and last == "chat":
        return True
    if call.kw("tools") is not None and call.kw("messages") is not None:
        return True
    if call.method in ("invoke", "ainvoke") and receiver:
        entry, _ = receiver_entry(model, receiver, call.function)
        if entry is not None and entry.names[0] == "langchain_openai.ChatOpenAI":
            return True
        binding = model.binding_of(receiver, call.function)
        if binding is not None and binding.value_call is not None and binding.value_call.method == "bind_tools":
            return True
    return False
