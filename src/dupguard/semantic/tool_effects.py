"""Can running this agent again do anything twice? Agents whose tools only read.

DUP501 reports a retry around an agent run because a failed attempt may already have run a
tool with a side effect (a refund, an email) that the next attempt runs again. When the agent
has no tools, or every tool it is given only reads (a web search, a calculator, the clock),
a second attempt repeats nothing but model calls and reads: the retry is the right thing to do
(bench/real-apps/labels-a.toml, hfhoffman1144/langchain_neo4j_rag_app near-miss: a retry
around a read-only run).

``read_only_run(model, run)`` answers it from what the file shows, and says no whenever it
cannot see the whole tool set: the agent is found through the run's receiver (a name bound to
a constructor, ``self.x``, a module-local factory), or the agent argument of
``Runner.run(agent, ...)``; its tools through the constructor's ``tools=`` (``toolsets``:
list literals, names, ``+`` and ``append``/``extend``). A tool reads only when it is

- a library tool that only searches or computes (``READ_ONLY_TOOLS``, each checked in the
  package source named next to it), or
- a function defined in this file whose body calls nothing but pure builtins, the read-only
  standard-library modules, HTTP ``GET``s and read methods, assigns nothing outside its own
  locals, and calls only module functions that are read-only themselves.

A constructor without a tools argument gives an agent with no tools, except for agents that
run code without one (smolagents ``CodeAgent``, AutoGen agents with ``code_execution_config``).
"""

from __future__ import annotations

import libcst as cst

from .model import Call, Function, Model, recursive_analysis
from .nodes import descendants
from .runs import Run
from .toolsets import _expand

# Library tools that only search or compute. langchain-community 0.4.2
# (langchain_community/tools/__init__.py: ddg_search, tavily_search, wikipedia, arxiv, pubmed,
# brave_search, youtube/search), langchain-tavily; smolagents 1.26.0 (smolagents/default_tools.py:
# DuckDuckGoSearchTool, GoogleSearchTool, WebSearchTool, VisitWebpageTool, WikipediaSearchTool,
# FinalAnswerTool); openai-agents 0.24.0 (agents/tool.py hosted WebSearchTool, FileSearchTool);
# strands-agents-tools 0.8.10 (strands_tools/calculator.py, current_time.py).
READ_ONLY_TOOLS = frozenset(
    {
        "langchain_community.tools.DuckDuckGoSearchRun",
        "langchain_community.tools.DuckDuckGoSearchResults",
        "langchain_community.tools.ddg_search.tool.DuckDuckGoSearchRun",
        "langchain_community.tools.ddg_search.tool.DuckDuckGoSearchResults",
        "langchain_community.tools.TavilySearchResults",
        "langchain_community.tools.tavily_search.TavilySearchResults",
        "langchain_tavily.TavilySearch",
        "langchain_community.tools.WikipediaQueryRun",
        "langchain_community.tools.wikipedia.tool.WikipediaQueryRun",
        "langchain_community.tools.ArxivQueryRun",
        "langchain_community.tools.PubmedQueryRun",
        "langchain_community.tools.BraveSearch",
        "langchain_community.tools.YouTubeSearchTool",
        "smolagents.DuckDuckGoSearchTool",
        "smolagents.GoogleSearchTool",
        "smolagents.WebSearchTool",
        "smolagents.VisitWebpageTool",
        "smolagents.WikipediaSearchTool",
        "smolagents.FinalAnswerTool",
        "smolagents.default_tools.DuckDuckGoSearchTool",
        "smolagents.default_tools.WebSearchTool",
        "smolagents.default_tools.VisitWebpageTool",
        "agents.WebSearchTool",
        "agents.FileSearchTool",
        "strands_tools.calculator",
        "strands_tools.current_time",
        "strands_tools.calculator.calculator",
        "strands_tools.current_time.current_time",
    }
)
# Agents that execute model-written code even with no tools given.
RUNS_CODE_WITHOUT_TOOLS = frozenset({"smolagents.CodeAgent", "smolagents.agents.CodeAgent"})
_CODE_EXECUTION_KWARGS = ("code_execution_config", "code_executor", "executor_type")

# Calls a read-only tool body may make.
_PURE_BUILTINS = frozenset(
    {
        "abs",
        "all",
        "any",
        "bool",
        "dict",
        "divmod",
        "enumerate",
        "eval",  # a calculator's arithmetic; a retry does not make injected code likelier
        "float",
        "format",
        "int",
        "isinstance",
        "len",
        "list",
        "map",
        "max",
        "min",
        "pow",
        "print",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "sorted",
        "str",
        "sum",
        "tuple",
        "zip",
    }
)
_READ_ONLY_MODULES = ("math.", "cmath.", "statistics.", "json.", "re.", "datetime.", "decimal.", "fractions.")
_READ_ONLY_CALLEES = frozenset(
    {
        "requests.get",
        "httpx.get",
        "urllib.request.urlopen",
        "time.time",
        "time.monotonic",
        "numexpr.evaluate",
        "sympy.sympify",
        "wikipedia.summary",
        "wikipedia.search",
    }
)
_READ_METHODS = frozenset(
    {
        "get",
        "items",
        "keys",
        "values",
        "lower",
        "upper",
        "strip",
        "split",
        "join",
        "format",
        "replace",
        "startswith",
        "endswith",
        "find",
        "count",
        "json",
        "text",
        "raise_for_status",
        "search",
        "similarity_search",
        "isoformat",
        "strftime",
        "now",
        "today",
        "evaluate",
        "sympify",
    }
)


def read_only_run(model: Model, run: Run) -> bool:
    """Does ``run`` (an agent run) start an agent with no tools or only read-only ones?"""
    if run.kind != "agent":
        return False
    constructor = _agent_constructor(model, run.inner)
    if constructor is None:
        return False
    entry = model.entry_for_call(constructor)
    if entry is None:
        return False
    if constructor.callee in RUNS_CODE_WITHOUT_TOOLS or any(constructor.kw(k) for k in _CODE_EXECUTION_KWARGS):
        return False
    if not entry.tools_kwargs:
        return False  # teams, crews, workflows: the tools are their members', out of sight here
    kwargs = entry.tools_kwargs
    tools = next((arg for key in kwargs if (arg := constructor.arg(key)) is not None), None)
    if tools is None:
        return not any(a.star for a in constructor.args)  # ``**config`` may hold tools
    elements = _expand(model, tools.node, constructor, depth=0)
    if not elements and not (type(tools.node) is cst.List and not tools.node.elements):
        return False  # a tools expression we cannot see through
    return all(_tool_reads_only(model, text, node) for text, node in elements)


def _agent_constructor(model: Model, call: Call) -> Call | None:
    """The call that built the agent ``call`` runs."""
    fn = call.function
    text = call.receiver if call.method else call.func
    if call.callee is not None and call.args and (call.callee.endswith((".run", ".run_sync", ".run_streamed"))):
        text = call.args[0].dotted  # ``Runner.run(agent, ...)``: the agent is the argument
    if not text:
        return None
    if text.endswith("()") and "(" not in text[:-2]:
        factory = model.function_named(text[:-2]) if "." not in text else None
        return _returned_constructor(model, factory)
    binding = model.binding_of(text, fn)
    if binding is None or binding.value_call is None:
        return None
    constructor = binding.value_call
    if model.entry_for_call(constructor) is None:
        return _returned_constructor(model, model.called_function(constructor))
    return constructor


def _returned_constructor(model: Model, factory: Function | None) -> Call | None:
    if factory is None or len(factory.returns) != 1:
        return None
    call = model.returned_call(factory.returns[0], factory)
    return call if call is not None and model.entry_for_call(call) is not None else None


def _tool_reads_only(model: Model, text: str | None, node: cst.CSTNode) -> bool:
    call = model.call_for_node(node) if type(node) is cst.Call else None
    if call is not None:
        return (call.callee or "") in READ_ONLY_TOOLS
    if not text:
        return False
    resolved = model.resolve(text)
    if resolved is not None:
        return resolved in READ_ONLY_TOOLS
    fn = model.function_named(text) if "." not in text else None
    return fn is not None and _reads_only(model, fn)


@recursive_analysis(on_cycle=lambda: False)
def _reads_only(model: Model, fn: Function) -> bool:
    """A module function that changes nothing outside its own locals (see the module docs)."""
    if fn.global_names or fn.class_name is not None:
        return False
    for node in descendants(fn.node.body):
        kind = type(node)
        if kind is cst.Nonlocal or kind is cst.Global or kind is cst.Del:
            return False
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and not isinstance(
            node.target, (cst.Name, cst.Tuple)
        ):
            return False  # ``self.x = ...``, ``cache[key] = ...``: writes outside the locals
    for call in fn.calls:
        if call.function is not fn:
            return False  # a nested function or lambda: not worth following
        if not _read_only_call(model, fn, call):
            return False
    return True


def _read_only_call(model: Model, fn: Function, call: Call) -> bool:
    callee = call.callee or ""
    if callee in _READ_ONLY_CALLEES or callee.startswith(_READ_ONLY_MODULES):
        return True
    func = call.func or ""
    if not callee and func in _PURE_BUILTINS and func not in fn.local_names and model.function_named(func) is None:
        return True
    if call.method in _READ_METHODS:
        return True
    helper = model.called_function(call)
    if helper is not None and helper is not fn and helper.class_name is None:
        return _reads_only(model, helper)
    return False
