"""DUP204 stop-at-tools-with-parallel-calls: an OpenAI Agents SDK agent that stops at a tool
(``tool_use_behavior="stop_on_first_tool"`` or ``StopAtTools``) while the model may ask for
several tools in one response.

The SDK executes every function tool of a response first and only then picks the result that
ends the run (openai-agents 0.24: ``execute_function_tool_calls``, then
``check_for_final_output_from_tools`` takes ``tool_results[0]`` or the first listed stop tool's
result). Parallel tool calls are on unless the agent's ``ModelSettings(parallel_tool_calls=False)``
says otherwise (the default ``None`` leaves the request field out, so the provider's default
applies). So a second ``refund`` or a ``send_email`` next to the stop tool runs, its result is
dropped from the final output, and the user, who is never told, asks again. The facts are in
``semantic.catalog_data`` (``SDK_AGENTS``, ``STOP_AT_TOOLS``, ``MODEL_SETTINGS``).

Reported only when a tool of the agent makes something new on every run (``semantic.effects``:
``refund_order``, ``send_email``) and is not idempotent: a read or a state set again
(``get_weather``, ``update_address``) run unseen costs a call, not a second refund, and tools the
module cannot name (an MCP server's, a list built elsewhere) show nothing, except the stop tools
``StopAtTools`` names with literals, which are the agent's tools by construction. Quiet too when
parallel calls are off and when the settings cannot be read (a parameter, another module).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ...semantic.effects import ToolRef, is_test_module, tool_label, tools_of, writes_without_guard
from ...semantic.model import Call, Function, Model, string_value
from ..registry import Finding, RuleContext, rule

if TYPE_CHECKING:
    import libcst as cst


def _value(model: Model, node: cst.CSTNode, scope: Function | None) -> cst.CSTNode:
    """A name's bound value (module or function), else the node itself."""
    import libcst as cst

    if type(node) is cst.Name:
        binding = model.local_binding(node.value, scope)
        if binding is not None:
            return binding.value
    return node


def _stop_behaviour(model: Model, node: cst.CSTNode, scope: Function | None) -> str | None:
    """``"stop_on_first_tool"`` or ``"StopAtTools"`` when the value stops at a tool."""
    import libcst as cst

    from ...semantic.catalog_data import STOP_AT_TOOLS

    node = _value(model, node, scope)
    if string_value(node) == "stop_on_first_tool":
        return '"stop_on_first_tool"'
    call = model.call_for_node(node) if type(node) is cst.Call else None
    if call is not None and call.callee in STOP_AT_TOOLS:
        return "StopAtTools(...)"
    if type(node) is cst.Dict and any(
        string_value(getattr(e, "key", None)) == "stop_at_tool_names" for e in node.elements
    ):
        return '{"stop_at_tool_names": ...}'
    return None


def _named_stop_tools(model: Model, node: cst.CSTNode, scope: Function | None) -> list[ToolRef]:
    """The tools a ``StopAtTools(stop_at_tool_names=[...])`` (or the dict form) names with string
    literals: tools of the agent by construction (the SDK matches them against the calls it ran),
    so their names are evidence even when the agent's tool list is built in another module.
    Taught by h4ks-com/CloudBot plugins/agent.py (openai-agents IRC bot: tools from
    ``build_custom_tools``, ``StopAtTools(stop_at_tool_names=["create_video", "create_voice"])``,
    each call dispatching a render; the index holds that version without its commit)."""
    import libcst as cst

    node = _value(model, node, scope)
    names_node: cst.CSTNode | None = None
    call = model.call_for_node(node) if type(node) is cst.Call else None
    if call is not None:
        arg = call.kw("stop_at_tool_names") or call.arg("0")
        names_node = arg.node if arg is not None else None
    elif type(node) is cst.Dict:
        names_node = next(
            (e.value for e in node.elements if string_value(getattr(e, "key", None)) == "stop_at_tool_names"), None
        )
    if names_node is None:
        return []
    names_node = _value(model, names_node, scope)
    if type(names_node) not in (cst.List, cst.Tuple):
        return []
    refs = []
    for element in names_node.elements:  # type: ignore[attr-defined]
        value = string_value(element.value)
        if isinstance(value, str) and value:
            refs.append(ToolRef(value, None, element.value))
    return refs


def _parallel(model: Model, agent: Call, depth: int = 0) -> bool | None:
    """Are parallel tool calls on for this agent: True (the default, or said so), False (turned
    off), None (the settings cannot be read here)."""
    import libcst as cst

    from ...semantic.catalog_data import MODEL_SETTINGS

    arg = agent.kw("model_settings")
    if arg is None:
        original = _cloned_from(model, agent)
        if original is not None and depth < 3:
            return _parallel(model, original, depth + 1)
        return True
    node = _value(model, arg.node, agent.function)
    settings = model.call_for_node(node) if type(node) is cst.Call else None
    if settings is None or settings.callee not in MODEL_SETTINGS:
        return None
    flag = settings.kw("parallel_tool_calls")
    if flag is None:
        return True
    text = getattr(flag.node, "value", None)
    return {"True": True, "False": False}.get(text) if isinstance(text, str) else None


def _cloned_from(model: Model, call: Call) -> Call | None:
    """``agent.clone(...)``: the constructor call of the agent it copies."""
    if call.method != "clone" or not call.receiver or "." in call.receiver:
        return None
    binding = model.local_binding(call.receiver, call.function)
    return binding.value_call if binding is not None else None


def _agents(model: Model) -> Iterator[tuple[Call, Call]]:
    """(the call that sets ``tool_use_behavior``, the agent constructor whose tools run)."""
    from ...semantic.catalog_data import SDK_AGENTS

    for call in model.calls:
        if call.kw("tool_use_behavior") is None:
            continue
        if call.callee in SDK_AGENTS:
            yield call, call
            continue
        original = _cloned_from(model, call)
        if original is not None and original.callee in SDK_AGENTS:
            yield call, original


@rule("DUP204", name="stop-at-tools-with-parallel-calls")
def stop_at_tools_with_parallel_calls(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    if is_test_module(model):
        return
    for call, agent in _agents(model):
        arg = call.kw("tool_use_behavior")
        behaviour = _stop_behaviour(model, arg.node, call.function) if arg is not None else None
        if behaviour is None or _parallel(model, call) is not True:
            continue
        tools = tools_of(model, call) if call.kw("tools") is not None else tools_of(model, agent)
        if tools is None:  # a list built elsewhere: the stop tools it names are still its tools
            tools = _named_stop_tools(model, arg.node, call.function)  # type: ignore[union-attr]
        writes = writes_without_guard(model, tools or [])
        if not writes:
            continue  # reads, states set again, or tools this module cannot name: no duplicate shown
        named = ", ".join(tool_label(t) for t in writes[:3])
        yield Finding(
            arg.node,  # type: ignore[union-attr]
            f"`tool_use_behavior={behaviour}` with parallel tool calls on (the default; "
            "`ModelSettings(parallel_tool_calls=...)` is not False): the SDK runs every tool the model "
            f"asked for in the response ({named} among them) before it keeps one result as the final output, so the "
            "other calls run unseen and the user asks again; set `model_settings=ModelSettings("
            "parallel_tool_calls=False)` on this agent, or give the stop tool an agent of its own",
        )
