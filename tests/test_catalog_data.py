"""Consistency of the framework facts in ``dupguard.semantic.catalog_data``.

The rules trust the catalog blindly: a name listed twice silently keeps only the last entry
(``Catalog.build`` is a dict), a stateful agent without run methods is never reported, and a
name outside ``FRAMEWORK_MODULES`` is skipped by the prefilter before the rules ever see it.
These tests catch those mistakes with the project's venv alone (no framework installed), and
pin the researched facts that DESIGN.md's precision traps depend on, so that an edit which
turns a stateless-by-design object into a finding fails here first.

The same file checks the catalog against installed frameworks when run as a script from a
venv that holds them (this is how docs/catalog.md was produced)::

    /tmp/fw-llama/bin/python tests/test_catalog_data.py --verify [framework ...]

and ``python tests/test_catalog_data.py --write-docs`` regenerates the tables in
docs/catalog.md (a test fails while they differ from the data).

No pytest import at module level, so that script mode works in those venvs.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parents[1] / "src"
if str(_SRC) not in sys.path:  # script mode from a framework venv
    sys.path.insert(0, str(_SRC))

from dupguard.semantic import catalog as catalog_mod
from dupguard.semantic.catalog import RERUNS_TOOLS, Catalog, Entry, Kind, Registration, RetrySetting
from dupguard.semantic.framework_modules import HOST_MODULES


def _load_catalog_data():
    """Load catalog_data.py from the file beside catalog.py.

    Loaded by path rather than by ``import`` so that a placeholder module someone put in
    ``sys.modules`` (or a stale installed copy) cannot stand in for the real data.
    """
    path = Path(catalog_mod.__file__).with_name("catalog_data.py")
    spec = importlib.util.spec_from_file_location("_dupguard_catalog_data_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DATA = _load_catalog_data()

ENTRIES: tuple[Entry, ...] = DATA.ENTRIES
REGISTRATIONS: tuple[Registration, ...] = DATA.REGISTRATIONS
RETRY_SETTINGS: tuple[RetrySetting, ...] = DATA.RETRY_SETTINGS
FRAMEWORK_MODULES: tuple[str, ...] = DATA.FRAMEWORK_MODULES

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"^{_IDENT}(\.{_IDENT})+$")
_VERSION = re.compile(r"(\d+\.\d+)|^unverified: .+")
_INDEX = re.compile(r"^\d+$")


def _covered(name: str) -> bool:
    """Whether a dotted name lies under one of FRAMEWORK_MODULES (whole components only)."""
    return any(name == mod or name.startswith(mod + ".") for mod in FRAMEWORK_MODULES)


def _entry_label(entry: Entry) -> str:
    return f"{entry.framework}:{entry.names[0]}"


# ----------------------------------------------------------------------------- structure


def test_types_and_non_empty():
    assert ENTRIES and REGISTRATIONS and FRAMEWORK_MODULES
    assert all(isinstance(e, Entry) for e in ENTRIES)
    assert all(isinstance(r, Registration) for r in REGISTRATIONS)
    assert all(isinstance(e.kind, Kind) for e in ENTRIES)
    # every tuple field really is a tuple of strings (a bare string would iterate by character)
    for e in ENTRIES:
        for field in (
            "names",
            "run_methods",
            "stateful_if_kwargs",
            "state_kwargs",
            "name_kwargs",
            "tools_kwargs",
            "session_kwargs",
            "store_kwargs",
            "history_getters",
            "user_state_kwargs",
            "resetting_run",
        ):
            value = getattr(e, field)
            assert isinstance(value, tuple), (_entry_label(e), field)
            assert all(isinstance(v, str) and v for v in value), (_entry_label(e), field)


def test_no_name_in_two_entries():
    seen: dict[str, Entry] = {}
    clashes = []
    for e in ENTRIES:
        for n in e.names:
            if n in seen:
                clashes.append((n, seen[n].kind.value, e.kind.value))
            seen[n] = e
        assert len(set(e.names)) == len(e.names), f"duplicate name inside {_entry_label(e)}"
    assert not clashes, f"names listed twice (Catalog.build keeps only the last): {clashes}"


def test_catalog_build_finds_every_entry_by_every_name():
    cat = Catalog.build(ENTRIES, REGISTRATIONS)
    for e in ENTRIES:
        for n in e.names:
            assert cat.lookup(n) is e, n
    assert set(cat.registrations) == {r.method for r in REGISTRATIONS}


def test_names_are_dotted_paths():
    bad = [n for e in ENTRIES for n in e.names if not _DOTTED.match(n)]
    assert not bad, bad


def test_every_entry_cites_version_source_and_why():
    for item in (*ENTRIES, *REGISTRATIONS):
        label = getattr(item, "names", None) or item.method
        assert _VERSION.search(item.version), (label, item.version)
        for src in item.source.split("; "):
            assert src.endswith(".py") and not src.startswith("/"), (label, src)
        why = item.why.strip()
        assert len(why) >= 40 and "\n" not in why, (label, why)
        assert why.endswith((".", ")")), (label, why)


def test_source_lives_in_a_package_the_entry_names():
    """The cited file belongs to one of the distributions the entry's names come from."""
    for e in ENTRIES:
        tops = {n.split(".")[0] for n in e.names}
        for src in e.source.split("; "):
            assert src.split("/")[0] in tops, (_entry_label(e), src)


def test_agents_have_run_methods():
    missing = [_entry_label(e) for e in ENTRIES if e.kind is Kind.AGENT and not e.run_methods]
    assert not missing, missing


def test_run_methods_are_identifiers():
    for e in ENTRIES:
        for m in e.run_methods:
            assert re.fullmatch(_IDENT, m), (_entry_label(e), m)


def test_kwarg_fields_fit_their_kind():
    for e in ENTRIES:
        label = _entry_label(e)
        if e.stateful_if_kwargs:
            # the schema: "a STATELESS entry becomes AGENT when constructed with" these
            assert e.kind is Kind.STATELESS, label
            # and the promoted AGENT must have something to flag
            assert e.run_methods, label
        if e.state_kwargs:
            assert e.run_methods, f"{label}: state_kwargs belong to a run method"
        if e.name_kwargs:
            assert e.kind is Kind.TOOL, label
        for kw in (*e.stateful_if_kwargs, *e.state_kwargs, *e.tools_kwargs):
            assert re.fullmatch(_IDENT, kw), (label, kw)
        if e.history_getters:
            # the getter's history is used when the wrapper runs
            assert e.run_methods, f"{label}: history_getters belong to something that runs"
        for kw in (*e.name_kwargs, *e.session_kwargs, *e.store_kwargs, *e.history_getters):
            assert re.fullmatch(_IDENT, kw) or _INDEX.match(kw), (label, kw)
        if e.store_kwargs:
            # a store decides whether a constant key reaches other requests (DUP103)
            assert e.session_kwargs, f"{label}: store_kwargs belong to a memory keyed by session_kwargs"
        if e.user_state_kwargs:
            # only toolkits cache a user's account; "*" means always, alone
            assert e.kind is Kind.TOOL, label
            assert e.user_state_kwargs == ("*",) or all(re.fullmatch(_IDENT, kw) for kw in e.user_state_kwargs), label
        if e.resetting_run:
            # (the keyword that keeps the old state, the keyword that streams) of a stateful run
            assert e.kind is Kind.AGENT and e.run_methods, label
            assert len(e.resetting_run) == 2 and all(re.fullmatch(_IDENT, kw) for kw in e.resetting_run), label


def test_registration_methods_are_unique_and_covered():
    methods = [r.method for r in REGISTRATIONS]
    assert len(methods) == len(set(methods)), "Catalog.build keeps one Registration per method"
    for r in REGISTRATIONS:
        assert re.fullmatch(_IDENT, r.method), r.method
        for receiver in r.receivers:
            assert _DOTTED.match(receiver) or re.fullmatch(_IDENT, receiver), receiver
            # a host's object (a Discord bot) is let through by the prefilter as well
            hosted = any(receiver == h or receiver.startswith(h + ".") for h in HOST_MODULES)
            assert _covered(receiver) or hosted, receiver


def test_framework_modules_cover_every_entry():
    assert len(FRAMEWORK_MODULES) == len(set(FRAMEWORK_MODULES))
    for mod in FRAMEWORK_MODULES:
        assert re.fullmatch(rf"{_IDENT}(\.{_IDENT})*", mod), mod
    uncovered = [n for e in ENTRIES for n in e.names if not _covered(n)]
    assert not uncovered, uncovered


def test_every_framework_module_is_used():
    """A module in the prefilter list with no entry only costs speed, but is usually a typo."""
    used = {m for m in FRAMEWORK_MODULES if any(n == m or n.startswith(m + ".") for e in ENTRIES for n in e.names)}
    assert used == set(FRAMEWORK_MODULES), set(FRAMEWORK_MODULES) - used


def test_brief_frameworks_are_all_present():
    frameworks = {e.framework for e in ENTRIES}
    for fw in (
        "llama_index",
        "autogen",
        "autogen_agentchat",
        "strands",
        "langchain",
        "langgraph",
        "crewai",
        "openai_agents",
        "pydantic_ai",
        "smolagents",
        "google_adk",
        "agno",
        "semantic_kernel",
        "openai",
        "anthropic",
    ):
        assert fw in frameworks, fw


# ------------------------------------------------------- pinned facts (DESIGN §4 traps)

_CAT = Catalog.build(ENTRIES, REGISTRATIONS)


def _kind(name: str) -> Kind:
    entry = _CAT.lookup(name)
    assert entry is not None, f"{name} missing from the catalog"
    return entry.kind


def test_precision_traps_are_stateless():
    for name in (
        "agents.Agent",
        "agents.Runner",
        "pydantic_ai.Agent",
        "google.adk.agents.LlmAgent",
        "google.adk.Agent",
        "langgraph.prebuilt.create_react_agent",
        "langgraph.graph.StateGraph",
        "langgraph.checkpoint.memory.MemorySaver",
        "langchain.agents.AgentExecutor",
        "langchain_classic.agents.AgentExecutor",
        "llama_index.core.agent.workflow.FunctionAgent",
        "llama_index.core.agent.workflow.ReActAgent",
        "llama_index.core.agent.AgentWorkflow",
        "openai.OpenAI",
        "openai.AsyncOpenAI",
        "anthropic.Anthropic",
        "anthropic.AsyncAnthropic",
        "langchain_openai.ChatOpenAI",
        "langchain_core.runnables.history.RunnableWithMessageHistory",
        "autogen_ext.models.openai.OpenAIChatCompletionClient",
        "semantic_kernel.agents.ChatCompletionAgent",
    ):
        assert _kind(name) is Kind.STATELESS, name


def test_known_stateful_agents():
    for name in (
        "llama_index.core.agent.ReActAgent.from_tools",
        "llama_index.core.agent.AgentRunner",
        "llama_index.agent.openai.OpenAIAgent.from_tools",
        "llama_index.core.agent.FunctionCallingAgent.from_tools",
        "autogen.AssistantAgent",
        "autogen.UserProxyAgent",
        "autogen_agentchat.agents.AssistantAgent",
        "autogen_agentchat.teams.RoundRobinGroupChat",
        "strands.Agent",
        "smolagents.CodeAgent",
        "crewai.Crew",
    ):
        assert _kind(name) is Kind.AGENT, name


def test_known_memories():
    for name in (
        "llama_index.core.memory.ChatMemoryBuffer.from_defaults",
        "llama_index.core.memory.Memory.from_defaults",
        "llama_index.core.workflow.Context",
        "langchain.memory.ConversationBufferMemory",
        "langchain_core.chat_history.InMemoryChatMessageHistory",
        "agents.SQLiteSession",
        "semantic_kernel.contents.ChatHistory",
    ):
        assert _kind(name) is Kind.MEMORY, name


def test_agent_executor_becomes_stateful_only_with_memory():
    entry = _CAT.lookup("langchain.agents.AgentExecutor")
    assert entry.stateful_if_kwargs == ("memory",)


def test_workflow_agents_carry_state_only_through_ctx_or_memory():
    for name in (
        "llama_index.core.agent.workflow.FunctionAgent",
        "llama_index.core.agent.workflow.ReActAgent",
        "llama_index.core.agent.AgentWorkflow",
    ):
        entry = _CAT.lookup(name)
        assert set(entry.state_kwargs) == {"ctx", "memory"}, name
        assert entry.run_methods == ("run",), name


def test_bare_llamaindex_react_agent_is_flagged_only_on_legacy_methods():
    """``llama_index.core.agent.ReActAgent`` is the legacy AgentRunner up to 0.12 and the
    workflow agent from 0.13: AGENT, but ``run`` (the workflow agent's only run method) must
    not count, so ``.run()`` on a 0.14 agent stays clean while ``.achat()`` is reported."""
    entry = _CAT.lookup("llama_index.core.agent.ReActAgent")
    assert entry.kind is Kind.AGENT
    assert "run" not in entry.run_methods
    assert {"chat", "achat"} <= set(entry.run_methods)


def test_strands_agent_runs_when_called():
    assert "__call__" in _CAT.lookup("strands.Agent").run_methods


def test_tool_name_arguments():
    assert _CAT.lookup("agents.function_tool").name_kwargs == ("name_override",)
    assert "name" in _CAT.lookup("llama_index.core.tools.FunctionTool.from_defaults").name_kwargs
    assert "0" in _CAT.lookup("langchain_core.tools.Tool").name_kwargs


def test_session_keys():
    assert "thread_id" in _CAT.lookup("langgraph.checkpoint.memory.InMemorySaver").session_kwargs
    assert "chat_store_key" in _CAT.lookup("llama_index.core.memory.ChatMemoryBuffer.from_defaults").session_kwargs
    assert "session_id" in _CAT.lookup("langchain_core.runnables.RunnableWithMessageHistory").session_kwargs
    assert "session_id" in _CAT.lookup("google.adk.runners.Runner").session_kwargs


def test_registrations_from_the_brief():
    methods = {r.method for r in REGISTRATIONS}
    for m in (
        "add_handler",
        "set_global_handler",
        "register_reply",
        "register_function",
        "register_for_llm",
        "register_for_execution",
        "register_hook",
        "add_callback",
        "add_hook",
    ):
        assert m in methods, m


# ----------------------------------------------- callables the analyses name directly

# the sets of qualified names at the end of catalog_data.py (not entries: decorators, loops and
# calls recognised by name)
CALLABLE_SETS = (
    "LLM_ONLY",
    "GRAPH_ENTRIES",
    "TOOL_NODE_CALLEES",
    "MODEL_CALLEES",
    "PROCESS_CACHES",
    "RUN_ONCE_CACHES",
    "DEPENDS",
    "RETRY_DECORATORS",
    "RETRYING_ITERABLES",
    "COUNTED_ITERABLES",
    "INPUT_FUNCS",
    "ASYNC_FANOUT",
    "ASYNC_WAITS",
    "THREAD_CALLS",
    "COMPLETION_ORDER",
)
_BUILTIN = re.compile(rf"^{_IDENT}$")


def test_callable_sets_hold_dotted_names():
    for name in CALLABLE_SETS:
        values = getattr(DATA, name)
        assert isinstance(values, frozenset) and values, name
        bad = [v for v in values if not (_DOTTED.match(v) or (_BUILTIN.match(v) and hasattr(builtins, v)))]
        assert not bad, (name, bad)


def test_callable_sets_that_name_entries_name_real_entries():
    """``LLM_ONLY`` and ``GRAPH_ENTRIES`` single out catalog entries by their first name."""
    first_names = {e.names[0] for e in ENTRIES}
    assert DATA.LLM_ONLY <= first_names
    assert DATA.GRAPH_ENTRIES <= first_names
    assert DATA.ASYNC_WAITS <= DATA.ASYNC_FANOUT
    assert DATA.PROCESS_CACHES < DATA.RUN_ONCE_CACHES


def test_callables_resolve_where_their_package_is_installed():
    """Every name whose top-level package this venv has (the standard library, tenacity,
    anyio, openai, autogen_ext…) resolves to a real object: a typo or a moved name fails here."""
    checked = 0
    for name in CALLABLE_SETS:
        for value in sorted(getattr(DATA, name)):
            top = value.split(".")[0]
            if "." not in value or not _importable(top):
                continue
            try:
                _resolve(value)
            except (ImportError, AttributeError) as exc:
                raise AssertionError(f"{name}: {value} does not resolve ({exc})") from None
            checked += 1
    assert checked >= 20, checked


# ------------------------------------------------------- retry settings (DUP507)

_RERUNS = {"tools", "runnable", "model", "validation", "http"}


def test_retry_settings_cite_version_source_and_what_they_rerun():
    for s in RETRY_SETTINGS:
        assert isinstance(s, RetrySetting) and s.names, s
        assert all(_DOTTED.match(n) and _covered(n) for n in s.names), s.names
        assert s.reruns in _RERUNS, (s.names[0], s.reruns)
        assert _VERSION.search(s.version), (s.names[0], s.version)
        for src in s.source.split("; "):
            assert src.endswith(".py") and src.split("/")[0] in {n.split(".")[0] for n in s.names}, src
        assert len(s.why) >= 40 and s.why.endswith((".", ")")), s.names[0]
        assert s.summary and not s.summary.endswith("."), s.names[0]
        assert all(re.fullmatch(_IDENT, k) for k in (*s.keywords, *s.requires, *s.tools_kwargs)), s.names[0]
        # a method setting (``with_retry``) has no keyword; a constructor setting needs one or is
        # opted into by building the object (by_default)
        assert bool(s.method) != bool(s.keywords or s.by_default), s.names[0]
        assert not s.by_default or s.default > 0, s.names[0]


def test_retry_setting_names_are_unique():
    names = [n for s in RETRY_SETTINGS if not s.method for n in s.names]
    assert len(names) == len(set(names)), "one setting per constructor (the rule keys them by name)"


def test_retry_settings_pinned_from_the_sources():
    """What each framework's retry repeats, as read in its source (docs/rules/DUP507.md)."""
    by_name = {n: s for s in RETRY_SETTINGS for n in s.names}
    crew = by_name["crewai.Agent"]
    assert (crew.reruns, crew.keywords, crew.default, crew.by_default) == ("tools", ("max_retry_limit",), 2, True)
    assert by_name["crewai.Task"].requires == ("guardrail", "guardrails")
    assert by_name["agno.agent.Agent"].reruns == "tools" and by_name["agno.agent.Agent"].default == 0
    assert by_name["langchain.agents.middleware.ToolRetryMiddleware"].by_default
    assert by_name["pydantic_ai.Agent"].reruns == "validation"
    assert by_name["openai.OpenAI"].reruns == "http"
    assert {s.reruns for s in RETRY_SETTINGS if s.method == "with_retry"} == {"runnable"}
    assert {s.reruns for s in RETRY_SETTINGS} >= set(RERUNS_TOOLS)


def test_stop_at_tool_facts_name_the_sdk():
    assert {"agents.Agent", "agents.agent.Agent"} <= DATA.SDK_AGENTS
    assert all(n.startswith("agents.") for n in (*DATA.STOP_AT_TOOLS, *DATA.MODEL_SETTINGS))
    assert all(_covered(n) and isinstance(i, int) for n, i in DATA.TOOLS_POSITION.items())


# ------------------------------------------------------------- docs/catalog.md tables

DOCS = Path(__file__).resolve().parents[1] / "docs" / "catalog.md"
_START, _END = "<!-- catalog-tables:start -->", "<!-- catalog-tables:end -->"
_TITLES = {
    "llama_index": "LlamaIndex",
    "autogen": "AutoGen 0.2 API (`autogen`, AG2 ≤ 0.14)",
    "ag2": "AG2 1.x (`ag2`)",
    "autogen_agentchat": "AutoGen AgentChat 0.4+",
    "autogen_core": "AutoGen AgentChat 0.4+",
    "autogen_ext": "AutoGen AgentChat 0.4+",
    "strands": "Strands Agents",
    "langchain": "LangChain",
    "langchain_core": "LangChain",
    "langgraph": "LangGraph",
    "crewai": "CrewAI",
    "openai_agents": "OpenAI Agents SDK",
    "pydantic_ai": "pydantic-ai",
    "smolagents": "smolagents",
    "google_adk": "Google ADK",
    "agno": "Agno",
    "semantic_kernel": "Semantic Kernel",
    "openai": "Plain LLM clients",
    "anthropic": "Plain LLM clients",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_tables() -> str:
    """The per-framework tables of docs/catalog.md, rendered from the data."""
    sections: dict[str, list[Entry]] = {}
    for e in ENTRIES:
        sections.setdefault(_TITLES.get(e.framework, e.framework), []).append(e)
    out = []
    for title, entries in sections.items():
        out += [
            f"### {title}",
            "",
            "| names | kind | run methods | kwargs | version | source | why |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in entries:
            names = "<br>".join(f"`{n}`" for n in e.names)
            runs = ", ".join(f"`{m}`" for m in e.run_methods) or "—"
            kw = []
            for label, value in (
                ("stateful if", e.stateful_if_kwargs),
                ("state", e.state_kwargs),
                ("tools", e.tools_kwargs),
                ("name", e.name_kwargs),
                ("session", e.session_kwargs),
                ("shared store", e.store_kwargs),
                ("history getter", e.history_getters),
                ("user state", e.user_state_kwargs),
                ("resetting run", e.resetting_run),
            ):
                if value:
                    kw.append(f"{label}: " + ", ".join(f"`{v}`" for v in value))
            out.append(
                f"| {names} | {e.kind.value} | {runs} | {'<br>'.join(kw) or '—'} | "
                f"{_cell(e.version)} | `{e.source}` | {_cell(e.why)} |"
            )
        out.append("")
    out += [
        "### Registrations (DUP401 / DUP402)",
        "",
        "| method | framework | receivers | version | source | why |",
        "|---|---|---|---|---|---|",
    ]
    for r in REGISTRATIONS:
        receivers = ", ".join(f"`{x}`" for x in r.receivers) or "any"
        out.append(
            f"| `{r.method}` | {r.framework} | {receivers} | {_cell(r.version)} | `{r.source}` | {_cell(r.why)} |"
        )
    out += [
        "",
        "### Retry settings (DUP507)",
        "",
        (
            "What one retry repeats: `tools` re-runs the agent loop and every tool already called; "
            "`runnable` re-runs whatever the object runs; `model`, `validation` and `http` run no tool again."
        ),
        "",
        "| names | setting | repeats | default | version | source | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in RETRY_SETTINGS:
        names = "<br>".join(f"`{n}`" for n in s.names)
        setting = f"`.{s.method}(...)`" if s.method else ", ".join(f"`{k}=`" for k in s.keywords)
        if s.requires:
            setting += " with " + " or ".join(f"`{k}=`" for k in s.requires)
        default = f"{s.default}" + (" (applies unless set)" if s.by_default else "")
        out.append(
            f"| {names} | {setting} | {s.reruns} | {default} | {_cell(s.version)} | `{s.source}` | {_cell(s.why)} |"
        )
    out += [
        "",
        "FRAMEWORK_MODULES: " + ", ".join(f"`{m}`" for m in FRAMEWORK_MODULES),
        "",
        f"{sum(len(e.names) for e in ENTRIES)} names in {len(ENTRIES)} entries, {len(REGISTRATIONS)} registrations.",
        "",
    ]
    return "\n".join(out)


def _docs_tables(text: str) -> str:
    start, end = text.index(_START) + len(_START), text.index(_END)
    return text[start:end].strip("\n")


def test_docs_tables_match_the_data():
    """docs/catalog.md is regenerated (``--write-docs``) whenever catalog_data changes."""
    assert _docs_tables(DOCS.read_text(encoding="utf-8")) == render_tables().strip("\n")


def write_docs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.index(_START) + len(_START), text.index(_END)
    DOCS.write_text(text[:start] + "\n" + render_tables() + "\n" + text[end:], encoding="utf-8")


# ------------------------------------------------- script mode: check installed frameworks


def _resolve(name: str):
    """Resolve a dotted name the way ``from a.b import C`` would: attribute first."""
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
            return obj
        except AttributeError:
            continue
    return importlib.import_module(name)


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except Exception:  # a framework failing to import is "not installed here"
        return False
    return True


def _getter_params_match(cls, keys: tuple[str, ...]) -> bool:
    """Every keyword in ``keys`` is a parameter of the constructor, and every index names one of them."""
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    names = {k for k in keys if not k.isdigit()}
    indexes = [int(k) for k in keys if k.isdigit()]
    return names <= set(params) and all(i < len(params) and params[i] in names for i in indexes)


def verify_installed(frameworks: set[str]) -> int:
    """Resolve names, check run methods and source files for what this interpreter has.

    Returns the number of problems. Names of other versions (legacy paths) are expected to
    fail in a newest-release venv: docs/catalog.md lists which venv checks which names.
    """
    import warnings

    warnings.filterwarnings("ignore")
    problems = checked = skipped = 0
    for e in ENTRIES:
        if frameworks and e.framework not in frameworks:
            continue
        for n in e.names:
            top = next((m for m in FRAMEWORK_MODULES if n.startswith(m + ".")), n.split(".")[0])
            if not _importable(top):
                skipped += 1
                continue
            try:
                obj = _resolve(n)
            except Exception as exc:
                print(f"UNRESOLVED {n}: {type(exc).__name__}: {str(exc)[:100]}")
                problems += 1
                continue
            owner = obj if inspect.isclass(obj) else getattr(obj, "__self__", None)
            if inspect.isclass(owner):
                missing = [m for m in e.run_methods if not hasattr(owner, m)]
                if missing:
                    print(f"NO-METHOD {n}: {missing}")
                    problems += 1
                    continue
                if e.history_getters and not _getter_params_match(owner, e.history_getters):
                    print(f"NO-PARAM {n}: history_getters {e.history_getters}")
                    problems += 1
                    continue
            checked += 1
    for s in RETRY_SETTINGS:
        if frameworks and s.framework not in frameworks:
            continue
        for n in s.names:
            try:
                owner = _resolve(n)
            except Exception:
                continue  # another version's path, or not installed here
            if s.method:
                ok = hasattr(owner, s.method)
            else:
                fields = getattr(owner, "model_fields", None) or {}
                params = set(fields) | set(inspect.signature(owner).parameters)
                ok = set(s.keywords) | set(s.requires) <= params
            if not ok:
                print(f"NO-SETTING {n}: {s.method or s.keywords}")
                problems += 1
            checked += 1
    for item in (*ENTRIES, *REGISTRATIONS, *RETRY_SETTINGS):
        for src in item.source.split("; "):
            top = src.split("/")[0]
            if _importable("google.adk" if top == "google" else top) and not any(
                os.path.exists(os.path.join(p, src)) for p in sys.path if p
            ):
                print(f"NO-SOURCE {src}")
                problems += 1
    print(f"checked {checked}, problems {problems}, not installed here {skipped}")
    return problems


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write-docs"]:
        write_docs()
    elif sys.argv[1:2] == ["--verify"]:
        sys.exit(1 if verify_installed(set(sys.argv[2:])) else 0)
    else:
        sys.exit("usage: python tests/test_catalog_data.py --verify [framework ...] | --write-docs")
