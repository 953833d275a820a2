"""DUP507 framework-retry-reruns-tools: a framework's own retry setting that re-runs an
agent's tools, on an agent with a tool that writes and is not idempotent.

DUP501 sees the retries the application writes (loops, decorators). Frameworks retry too,
at very different depths under similar names (``semantic.catalog.RetrySetting``): CrewAI's
``Agent(max_retry_limit=...)`` and guardrail retries, Agno's ``Agent(retries=...)``,
LangChain's ``ToolRetryMiddleware`` and ``.with_retry()`` on an agent re-run tools; pydantic-ai's
``retries``, an OpenAI client's ``max_retries`` and the SDKs' model-call retries do not, and
are never reported. A setting is reported where it is written, and only when the retried
agent has a tool whose name or body says it writes (``semantic.effects``) and that is not
made idempotent. A setting left at its default is not reported (CrewAI's default of 2 retries
is in the rule's docs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...semantic.catalog import RetrySetting
from ...semantic.effects import ToolRef, is_test_module, tool_label, tools_of, writes_without_guard
from ...semantic.model import Arg, Call, Model
from ...semantic.nodes import code_of, names_in
from ..registry import Finding, RuleContext, rule


def _settings() -> tuple[dict[str, RetrySetting], dict[str, RetrySetting]]:
    from ...semantic.catalog_data import RETRY_SETTINGS

    by_name = {n: s for s in RETRY_SETTINGS if s.reruns == "tools" and not s.method for n in s.names}
    by_method = {s.method: s for s in RETRY_SETTINGS if s.method and s.reruns in ("tools", "runnable")}
    return by_name, by_method


def _int_value(model: Model, node, call: Call) -> int | None:
    """The value of an integer literal, or of a name bound to one; None when not known."""
    import libcst as cst

    if type(node) is cst.Name:
        binding = model.local_binding(node.value, call.function)
        node = binding.value if binding is not None else node
    if type(node) is cst.Integer:
        return int(node.value, 0)
    return None


def _setting_arg(setting: RetrySetting, call: Call) -> Arg | None:
    return next((a for a in (call.kw(k) for k in setting.keywords) if a is not None), None)


def _agent_call(model: Model, arg: Arg | None, call: Call) -> Call | None:
    """The constructor call of the agent an argument names (``Task(agent=support)``)."""
    if arg is None:
        return None
    found = model.call_for_node(arg.node)
    if found is None and arg.dotted and "." not in arg.dotted and "(" not in arg.dotted:
        binding = model.local_binding(arg.dotted, call.function)
        found = binding.value_call if binding is not None else None
    return found


def _tools_position(call: Call) -> int | None:
    from ...semantic.catalog_data import TOOLS_POSITION

    return TOOLS_POSITION.get(call.callee or "")


def _middleware_consumer(model: Model, call: Call) -> Call | None:
    """The ``create_agent(..., middleware=[...])`` that a tool-retry middleware is given to:
    the call it is written in, or the one whose ``middleware=`` names the variable holding it."""
    for outer in reversed(call.outer):
        if outer.kw("middleware") is not None:
            return outer
    target = next((b.target for b in model.bindings if b.value_call is call), None)
    if target is None:
        return None
    for other in model.calls:
        arg = other.kw("middleware")
        if arg is not None and target in names_in(arg.node):
            return other
    return None


def _is_middleware(setting: RetrySetting) -> bool:
    """A middleware object given to an agent factory (``create_agent(middleware=[...])``)."""
    return setting.names[0].rsplit(".", 1)[-1].endswith("Middleware")


def _retried_tools(model: Model, setting: RetrySetting, call: Call) -> list[ToolRef] | None:
    """The tools a retry of ``call``'s setting runs again."""
    if _is_middleware(setting) and call.kw("tools") is None:
        consumer = _middleware_consumer(model, call)
        if consumer is None:
            return None
        return tools_of(model, consumer, position=_tools_position(consumer))
    tools = tools_of(model, call, setting.tools_kwargs)
    if not tools:
        agent = _agent_call(model, call.kw("agent"), call)  # a CrewAI task run by its agent
        if agent is not None:
            return tools_of(model, agent)
    return tools


def _constructor_findings(model: Model, ctx: RuleContext, call: Call, setting: RetrySetting) -> Iterator[Finding]:
    if setting.requires and not any(call.kw(k) is not None for k in setting.requires):
        return
    arg = _setting_arg(setting, call)
    if arg is None and not (setting.by_default and setting.default > 0):
        return
    if arg is not None and _int_value(model, arg.node, call) == 0:
        return
    tools = _retried_tools(model, setting, call)
    writes = writes_without_guard(model, tools or [])
    if not writes:
        return
    if arg is not None:
        written = f"`{arg.keyword}={_code(arg.node)}`"
    elif _is_middleware(setting):
        written = f"`{_code(call.node)}`"
    else:
        written = f"`{call.func}(...)` (`{setting.keywords[0]}` defaults to {setting.default})"
    yield Finding(arg.node if arg is not None else call.node, _message(written, setting, writes))


def _with_retry_findings(model: Model, ctx: RuleContext, call: Call, setting: RetrySetting) -> Iterator[Finding]:
    """``agent_executor.with_retry(...)``: the receiver is an agent or a graph that runs tools."""
    import libcst as cst

    func = call.node.func if type(call.node) is cst.Call else None
    receiver = func.value if type(func) is cst.Attribute else None
    if receiver is None:
        return
    built = model.call_for_node(receiver)
    if built is None and type(receiver) is cst.Name:
        binding = model.local_binding(receiver.value, call.function)
        built = binding.value_call if binding is not None else None
    if built is None:
        return
    tools = _runnable_tools(model, built)
    writes = writes_without_guard(model, tools or [])
    if writes:
        yield Finding(call.node, _message(f"`{built.func}(...).with_retry(...)`", setting, writes))


def _runnable_tools(model: Model, built: Call) -> list[ToolRef] | None:
    """The tools a runnable runs: an agent constructor's ``tools``, or, for a compiled graph,
    the tools of the tool nodes built in this module. A chat model or a chain runs none."""
    from ...semantic.catalog import Kind
    from ...semantic.catalog_data import LLM_ONLY, TOOL_NODE_CALLEES

    if built.method == "compile":
        nodes = [c for c in model.calls if c.callee in TOOL_NODE_CALLEES and c.callee.endswith("ToolNode")]
        found: list[ToolRef] = []
        for node in nodes:
            found += tools_of(model, node, position=_tools_position(node)) or []
        return found
    entry = model.entry_for_call(built)
    if entry is None or entry.kind not in (Kind.AGENT, Kind.STATELESS) or not entry.run_methods:
        return None
    if entry.names[0] in LLM_ONLY or not entry.tools_kwargs:
        return None
    return tools_of(model, built, entry.tools_kwargs, _tools_position(built))


def _code(node) -> str:
    text = code_of(node)
    return text if len(text) <= 40 and "\n" not in text else text[:37].split("\n")[0] + "..."


def _message(written: str, setting: RetrySetting, writes: list[ToolRef]) -> str:
    tools = ", ".join(tool_label(t) for t in writes[:3])
    return (
        f"{written} {setting.summary} ({setting.version}: {setting.source.split('; ')[0]}), and {tools} "
        f"{'writes' if len(writes) == 1 else 'write'} with no idempotency key: an attempt that fails after "
        "the write (refund issued, email sent) does it again; turn the retry off for agents with write tools, "
        "or make the write idempotent (`@idempotent(key=...)` from `dupguard.runtime` keyed by the user's "
        "action, or an `Idempotency-Key` on the request)"
    )


@rule("DUP507", name="framework-retry-reruns-tools")
def framework_retry_reruns_tools(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    if is_test_module(model):
        return
    by_name, by_method = _settings()
    for call in model.calls:
        setting = by_name.get(call.callee or "")
        if setting is not None:
            yield from _constructor_findings(model, ctx, call, setting)
        elif call.method in by_method and call.receiver is not None:
            yield from _with_retry_findings(model, ctx, call, by_method[call.method])
