"""The project index: what the project's own modules share with each other (issue 14, classes 1 and 3).

dupguard analyses one file at a time, but real applications build the agent in one module and
serve it from another: ``app/core/agent.py`` builds ``agent = initialize_agent(..., memory=memory)``,
``app/routes.py`` imports it (and no agent framework) and runs it per request. This module is
the first pass that lets the second see that: it records, for each module of the project, the
names another module can import that matter for shared state, and hands every file the facts
about the names *it* imports (:class:`ProjectFacts`, consumed by ``semantic.builder``).

What a name can be (:class:`Fact` ``role``):

* ``object``: one stateful agent or memory (or a session-keyed store or graph: ``kind`` "keyed")
  that outlives a request: bound at module level, stored on ``app.state`` by a startup hook, or
  assigned to another module's attribute at startup (``routes.agent = Coordinator()``);
* ``factory``: calling it builds a *new* stateful object (a project function returning one, or a
  class whose instances hold one: ``self.memory = Memory(...)``); bound once at module level by
  the importer, that object is shared again;
* ``shared-factory``: calling it returns the *same* object every time (``@lru_cache``, or
  ``return agent`` of a module-level agent): what FastAPI ``Depends(get_agent)`` hands every request;
* ``runner``: calling it runs or mutates a shared object (``def get_response(q): return agent(q)``),
  followed across modules;
* ``key``: a constant (a module-level literal, or a literal attribute of a config class or of its
  module-level instance): a session key that comes from one is the same for every request (DUP103).

The facts also run the other way (``per-request``): a module learns which of its own functions
per-request code of *another* module calls (``@called.<name>``: a route in ``routes.py`` calls
``agent.get_response``, ``main.py`` registers ``app.respond`` as a Gradio listener), so the model
treats them as handlers and the report lands at the shared object's binding, where it is fixed;
and which of its module-level objects a function so reached runs (``@runs.<name>``), when that
function lives in a third module (:meth:`ProjectIndex.per_request`).

How it stays cheap (bench/RESULTS.md: irrelevant trees ≤ 2× ruff, agent code ≤ 1.3× the libcst
parse + walk floor):

* it is built only when a linted file needs it: a file that imports none of the project's
  modules and does not touch ``app.state`` gets no facts, so the one-irrelevant-file run
  (pre-commit) never walks the tree;
* every file of the tree gets a *text* scan only: the prefilter's framework-import test, then
  (only when some file is agent code) a regex for its imports. A tree without agent code stops
  after the first test, and nothing here imports libcst;
* ``ast`` (never libcst) parses only the modules a resolution reaches: the ones a linted file
  imports from, what they re-export, and the files that assign ``app.state``; a module that
  cannot reach agent code through its imports is never asked for objects;
* with a cache directory, each file's scan and summary are kept by size and mtime (then by
  content hash): a warm run stats the tree and parses nothing.

The flake8 plugin sees one file: it builds the same index for the file's project root (once per
process, from the same cache), so it knows what the CLI knows about imported names; it cannot
know about a file that flake8 was not given and that is not under the project root.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .prefilter import might_matter

if TYPE_CHECKING:
    from .cache import Cache

OBJECT = "object"
FACTORY = "factory"
SHARED_FACTORY = "shared-factory"
RUNNER = "runner"
KEY = "key"
# one of the file's own functions that per-request code of another module calls: ``where`` is
# the call's place, ``built`` how it is reached ("called per request by `chat`"); filed under
# "@called.<name>"
PER_REQUEST = "per-request"
CALLED = "@called."
RUNS = "@runs."  # one of the file's module-level agents or memories, run per request from another module
MAX_CALL_DEPTH = 6  # project functions followed from a per-request entry point
SUMMARY_FORMAT = 3  # bump when ``summarise``'s data or the facts change: kept summaries and answers are rebuilt
# a name imported from a project module that reaches agent code but is none of the objects the
# index knows (a CrewAI ``@CrewBase`` class whose ``crew()`` builds the agents per call, a helper
# that starts a run): the importing file serves agent code all the same, so it is linted (what
# its handlers write to process state, DUP106), though no object fact applies. Filed under
# "@uses.<qualified>". Taught by Inventora-Digital/crewai-gmail-automation@e79fe56c77
# src/gmail_crew_ai/server.py (imports only FastAPI and ``gmail_crew_ai.crew.GmailCrewAi``; a
# thread per run writes the user's Gmail password to ``os.environ``).
USES_AGENT_CODE = "uses-agent-code"
USES = "@uses."
# an imported ``async def`` whose body never awaits (``async def create_chatbot(sid): return
# Chatbot(sid)``): awaiting it runs it to its return without yielding the event loop, so a
# check-then-create around it is atomic (DUP205). Filed under the name, like an object's fact.
# Taught by krinya/gen_ai_demo_rag_bot@06ddfa104b app/server.py:168 and
# packages/chatbot/main.py:673 (bench/real-apps/labels-e.toml, near-miss).
NEVER_SUSPENDS = "never-suspends"

AGENT = "agent"
MEMORY = "memory"
KEYED = "keyed"  # a store or graph keyed by a session id (checkpointer, compiled graph with one)
# stateless alone, shared run state inside a container built per request (the catalog's
# ``member_of``: a CrewAI agent in per-request crews); its facts' ``run_methods`` name the containers
MEMBER = "member"
STATEFUL = (AGENT, MEMORY)

STATE = "@state."
MAX_NESTING = 40  # questions in progress at once (re-export, alias and call chains): see ``_memoised``  # facts about ``app.state.<attr>`` are filed under "@state.<attr>"

# functions that run once when the application starts: an assignment there to ``app.state.x``
# or to another module's attribute holds for the whole process (FastAPI/Starlette ``lifespan``
# and ``on_event("startup")``, Quart ``before_serving``, Flask ``before_first_request``, Sanic
# ``listener``; the names are the usual spellings of the same hooks)
STARTUP_NAMES = frozenset(
    {"lifespan", "app_lifespan", "startup", "on_startup", "startup_event", "init_app", "create_app", "setup"}
)
STARTUP_DECORATORS = frozenset(
    {"asynccontextmanager", "on_event", "on_startup", "before_serving", "before_first_request", "listener"}
)
# decorators that make a function return one object for the whole process
CACHE_DECORATORS = frozenset(
    {
        "functools.lru_cache",
        "functools.cache",
        "streamlit.cache_resource",
        "streamlit.experimental_singleton",
        "cachetools.cached",
        "async_lru.alru_cache",
    }
)
CACHE_DECORATOR_NAMES = frozenset({"lru_cache", "cache", "cache_resource", "experimental_singleton", "alru_cache"})
# catalog entries that are session-keyed only when compiled with a checkpointer (a compiled
# graph without one keeps nothing between runs: a constant thread id there selects nothing)
NEEDS_CHECKPOINTER = ("compile", "create_react_agent", "create_agent")


class Fact(NamedTuple):
    """What an importable name of the project is, for shared state (see the module docstring)."""

    role: str  # OBJECT | FACTORY | SHARED_FACTORY | RUNNER | KEY | PER_REQUEST | USES_AGENT_CODE | NEVER_SUSPENDS
    kind: str  # AGENT | MEMORY | KEYED ("" for KEY)
    where: str  # "app/core/agent.py:8": where it is built or bound
    built: str  # what builds it, for messages: "initialize_agent(...)", "ChatAgent(...)"
    framework: str = ""
    run_methods: tuple[str, ...] = ()  # methods that run it or mutate it
    via: str = ""  # RUNNER: the object it runs, "`agent` (app/agent.py:12)"
    value: str = ""  # KEY: the literal, as written
    how: str = ""  # OBJECT: "module" | "state" | "attribute" | "cached": how it outlives a request
    holds: str = ""  # an agent built with a shared memory: "`memory` (app/memory.py:3)"


class ProjectFacts(NamedTuple):
    """The facts one file consumes: the project names it imports (by the qualified name the
    model gives them), the ``app.state`` attributes the project sets, and its own module-level
    names that another module assigns at startup. ``package`` resolves relative imports."""

    package: str
    module: str
    facts: dict[str, Fact]

    def get(self, qualified: str | None) -> Fact | None:
        return self.facts.get(qualified) if qualified else None

    def state(self, attr: str) -> Fact | None:
        return self.facts.get(STATE + attr)

    def has_objects(self) -> bool:
        """Anything that can make the file's code share state (constants alone cannot)."""
        return any(fact.role not in (KEY, PER_REQUEST) for fact in self.facts.values())

    def called(self, name: str) -> Fact | None:
        """How per-request code of another module reaches the file's top-level function ``name``."""
        return self.facts.get(CALLED + name)

    def runs(self, name: str) -> Fact | None:
        """How a project function of another module, reached per request, runs the file's
        module-level object ``name`` (or the agent holding it)."""
        return self.facts.get(RUNS + name)

    def digest(self) -> str:
        """What the file's results depend on besides its own bytes (the results cache key)."""
        import hashlib
        import json

        data = json.dumps(sorted((k, list(v)) for k, v in self.facts.items()), separators=(",", ":"))
        return hashlib.blake2b(f"{self.package}|{self.module}|{data}".encode(), digest_size=16).hexdigest()


def absolute_module(package: str, level: int, module: str) -> str | None:
    """``from ..x import y`` in package ``a.b.c`` → "a.b.x"; None past the top of the tree."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    if module:
        base.append(module)
    return ".".join(base) if base else None


# ----------------------------------------------------------------------------- the text scan

# ``from .x import (a, b as c)`` / ``import a.b as c, d``: the project's import graph without a
# parse. Lines inside strings can match too; they only make the graph larger. Like the
# prefilter's pattern, each starts with a literal newline (the text gets one in front), which
# the regex engine finds with a fast scan instead of trying the pattern at every character.
_IMPORTS = re.compile(
    r"\n[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]*))"
)
# an assignment to ``x.y`` (not ``self.``/``cls.``): where ``app.state.agent = ...`` and
# ``routes.agent = ...`` come from
_SETS_ATTR = re.compile(r"\n[ \t]*(?!self\.|cls\.)[A-Za-z_]\w*(?:\.\w+)+[ \t]*(?::[^=\n]*)?=(?!=)")


class Imported(NamedTuple):
    """One imported name: ``local`` as the file binds it, ``qualified`` as the model resolves it."""

    local: str
    qualified: str


def _statements(text: str) -> list[tuple[int, str, list[tuple[str, str]]]]:
    """(level, module, [(name, local)]) per import statement; ``import a.b as c`` is (0, "a.b",
    [("", "c")]) and ``import a.b`` is (0, "a.b", [("", "a")])."""
    out: list[tuple[int, str, list[tuple[str, str]]]] = []
    if "import" not in text:
        return out
    for match in _IMPORTS.finditer("\n" + text):
        dots, module, names, plain = match.groups()
        if plain is None:
            items = []
            for item in names.strip("()").replace("\\\n", " ").split(","):
                words = item.split()
                if words and words[0] != "*":
                    items.append((words[0], words[2] if len(words) >= 3 and words[1] == "as" else words[0]))
            out.append((len(dots), module, items))
            continue
        for item in plain.replace("\\\n", " ").split(","):
            words = item.split()
            if words and all(part.isidentifier() for part in words[0].split(".")):
                local = words[2] if len(words) >= 3 and words[1] == "as" else words[0].split(".")[0]
                out.append((0, words[0], [("", local)]))
    return out


def scan_imports(text: str, package: str) -> list[Imported]:
    """The names a text imports, resolved the way ``semantic.builder`` resolves them (relative
    imports against ``package``). ``import a.b`` binds ``a`` but names the module ``a.b``."""
    out: list[Imported] = []
    for level, module, items in _statements(text):
        base = absolute_module(package, level, module)
        if base is None:
            continue
        for name, local in items:
            if not name:
                out.append(Imported(local, base))
            elif name.isidentifier() and local.isidentifier():
                out.append(Imported(local, f"{base}.{name}"))
    return out


class Scan(NamedTuple):
    """A file's text facts: is it agent code (the prefilter), and, read only when some file of
    the tree is (None until then), what it imports and whether it assigns attributes."""

    framework: bool
    imports: Sequence[Sequence[Any]] | None = None  # (level, module, names) per statement
    sets_attr: bool = False


def scan_details(scan: Scan, text: str) -> Scan:
    imports = tuple((level, module, tuple(n for n, _ in items if n)) for level, module, items in _statements(text))
    return scan._replace(imports=imports, sets_attr=_SETS_ATTR.search("\n" + text) is not None)


# ----------------------------------------------------------------------------- the ast summary

Expr = list  # ["call", callee, kwargs, args, line] | ["name", dotted] | ["lit", repr] | ["fstr", names] | ["other"]


def _dotted(node: Any) -> str | None:
    import ast

    parts = []
    while True:
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):  # ``StateGraph(S).compile`` → "StateGraph().compile"
            inner = _dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        else:
            return None


def _args(call: Any) -> list[str]:
    import ast

    out = []
    for value in [*call.args, *(k.value for k in call.keywords)]:
        if isinstance(value, ast.Starred):
            value = value.value
        elements = value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else [value]
        for element in elements:
            text = _dotted(element)
            if text:
                out.append(text)
    return out


def _expr(node: Any) -> Expr:
    import ast

    if isinstance(node, ast.Await):
        node = node.value
    if isinstance(node, ast.Call):
        callee = _dotted(node.func)
        if callee is None:
            return ["other"]
        return ["call", callee, [k.arg for k in node.keywords if k.arg], _args(node), node.lineno]
    if isinstance(node, (ast.Name, ast.Attribute)):
        text = _dotted(node)
        return ["name", text] if text else ["other"]
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return ["lit", f'"{node.value}"' if isinstance(node.value, str) else str(node.value)]
    if isinstance(node, ast.JoinedStr):
        names = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                names.append(_dotted(value.value) or "?")
        return ["fstr", names]
    return ["other"]


def _is_main_test(test: Any) -> bool:
    import ast

    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _module_statements(body: list) -> list:
    """Statements that run at import: the module body and the bodies of its ``if``/``try``/
    ``with`` blocks, but not ``if __name__ == "__main__":``."""
    import ast

    out = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            if not _is_main_test(stmt.test):
                out.extend(_module_statements(stmt.body) + _module_statements(stmt.orelse))
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                out.extend(_module_statements(block))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            out.extend(_module_statements(stmt.body))
    return out


def _function(fn: Any) -> dict:
    """A function's uses (dotted texts it calls, calls methods on, or passes), its locals,
    returns, decorators and ``self.x()`` calls."""
    import ast

    uses: dict[str, int] = {}
    self_calls: set[str] = set()
    local: set[str] = set()
    declared_global: set[str] = set()
    returns: list[Expr] = []
    assigned: dict[str, Expr] = {}  # ``agent = Agent(...)`` in the body: what ``return agent`` returns
    args = fn.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if a is not None:
            local.add(a.arg)
    stack = [(node, False) for node in fn.body]
    suspends = False
    while stack:
        node, nested = stack.pop()
        if not nested and isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            suspends = True
        if isinstance(node, ast.Call):
            callee = _dotted(node.func)
            if callee:
                uses.setdefault(callee, node.lineno)
                if isinstance(node.func, ast.Attribute):
                    receiver = _dotted(node.func.value)
                    if receiver:
                        uses.setdefault(receiver, node.lineno)
                        if receiver == "self":
                            self_calls.add(node.func.attr)
            for text in _args(node):
                uses.setdefault(text, node.lineno)
        elif isinstance(node, ast.Return) and node.value is not None and not nested:
            returns.append(_expr(node.value))
        elif isinstance(node, ast.Global):
            declared_global.update(node.names)
        elif (
            isinstance(node, ast.Assign)
            and not nested
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            assigned[node.targets[0].id] = _expr(node.value)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)
        # a nested function runs when the outer one does (or is handed out by it): its uses
        # count, its returns are its own
        inner = nested or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node) if not isinstance(child, ast.arguments))
    decorators = []
    paths = []  # each decorator's first positional literal string (a route's path), or None
    for d in fn.decorator_list:
        name = _dotted(d.func if isinstance(d, ast.Call) else d)
        if name:
            decorators.append(name)
            first = d.args[0] if isinstance(d, ast.Call) and d.args else None
            paths.append(first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None)
    return {
        "line": fn.lineno,
        "deco": decorators,
        "deco_path": paths,
        "ret": [assigned.get(r[1], r) if r[0] == "name" else r for r in returns],
        "uses": dict(sorted(uses.items())),
        "self_calls": sorted(self_calls),
        "locals": sorted(local - declared_global),
        # an ``async def`` whose own body never awaits: awaiting it never yields the event loop
        "never_suspends": isinstance(fn, ast.AsyncFunctionDef) and not suspends,
    }


def summarise(source: bytes | str) -> dict | None:
    """What a module defines and imports, as plain JSON data (kept in the cache); None when the
    file does not parse (pass 2 reports that; here it just exports nothing)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    imports: dict[str, list] = {}
    binds: dict[str, list] = {}
    defs: dict[str, dict] = {}
    classes: dict[str, dict] = {}
    setattrs: list[list] = []

    def note_setattr(stmt: Any, fn: str | None, decorators: list[str]) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            text = _dotted(target) if isinstance(target, ast.Attribute) else None
            if text and "()" not in text and text.split(".")[0] not in ("self", "cls") and stmt.value is not None:
                setattrs.append([text, stmt.lineno, _expr(stmt.value), fn, decorators])

    for stmt in _module_statements(tree.body):
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = [stmt.level, stmt.module or "", alias.name]
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    imports[alias.asname] = [0, alias.name, None]
                else:
                    imports.setdefault(alias.name.split(".")[0], [0, alias.name.split(".")[0], None])
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    binds[target.id] = [stmt.lineno, _expr(stmt.value)]
                    imports.pop(target.id, None)
            note_setattr(stmt, None, [])
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[stmt.name] = _function(stmt)
            for inner in ast.walk(stmt):
                if isinstance(inner, (ast.Assign, ast.AnnAssign)):
                    note_setattr(inner, stmt.name, defs[stmt.name]["deco"])
        elif isinstance(stmt, ast.ClassDef):
            classes[stmt.name] = _class(stmt)
    return {
        "imports": imports,
        "binds": binds,
        "defs": defs,
        "classes": classes,
        "setattrs": setattrs,
        "regs": _registrations(tree),
        "page": _page(tree, imports),
    }


def _registration_names() -> tuple[frozenset[str], frozenset[str]]:
    """The method names and the last parts of the qualified callees that hand a function to a
    host by reference (``semantic.entrypoints``: route tables, Gradio/Panel event listeners,
    ``gr.ChatInterface(fn=...)``, ``websockets.serve(handler)``...)."""
    from .semantic import entrypoints as ep

    methods = {name for name in ep.HANDLER_REGISTRATIONS if "." not in name}
    for table in (*ep.HOST_EVENT_REGISTRATIONS.values(), *ep.HOST_METHOD_REGISTRATIONS.values()):
        methods.update(table)
    callees = {name.rpartition(".")[2] for name in (*ep.HANDLER_REGISTRATIONS, *ep.HOST_REGISTRATIONS) if "." in name}
    return frozenset(methods), frozenset(callees)


_REGISTRATION_KEYWORDS = ("fn", "view_func", "endpoint", "handler", "callback", "func", "coroutine")


def _registrations(tree: Any) -> list[list]:
    """Calls anywhere in the module that may register a function by reference:
    ``[callee, [positional dotted or None, ...], {keyword: dotted}, line]``. Which of them do
    (a Gradio listener only in a file importing gradio...) the index decides with the tables of
    ``semantic.entrypoints``; here only the shape is kept, so the summary stays plain data."""
    import ast

    methods, callees = _registration_names()
    out: list[list] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if last is None or (last not in methods and last not in callees):
            continue
        callee = _dotted(func)
        if callee is None:
            continue
        positional = [_dotted(a) if isinstance(a, (ast.Name, ast.Attribute)) else None for a in node.args[:2]]
        keywords = {
            k.arg: text
            for k in node.keywords
            if k.arg in _REGISTRATION_KEYWORDS and (text := _dotted(k.value)) is not None
        }
        if any(positional) or keywords:
            out.append([callee, positional, keywords, node.lineno])
    return out


def _page(tree: Any, imports: dict[str, list]) -> dict | None:
    """A Streamlit page script's session code (hosts.py, "Streamlit": the page's module level,
    ``if __name__ == "__main__":`` included, re-runs on every session's every interaction):
    ``{"uses": {dotted: line}}`` of the calls and function references at its module level;
    None for a module that does not import streamlit or renders nothing at module level (a
    helper module the page imports, which runs once per process)."""
    import ast

    aliases = {local for local, spec in imports.items() if spec[2] is None and spec[1] == "streamlit"}
    if not aliases:
        return None
    quiet = {"cache_resource", "cache_data", "cache", "experimental_singleton", "experimental_memo", "secrets"}
    uses: dict[str, int] = {}
    renders = False
    defined = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    stack = [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and _is_main_test(node.test):
            renders = True
        if isinstance(node, ast.Call):
            callee = _dotted(node.func)
            if callee:
                uses.setdefault(callee, node.lineno)
                parts = callee.split(".")
                if (parts[0] in aliases and (len(parts) < 2 or parts[1] not in quiet)) or callee in defined:
                    renders = True
            for text in _args(node):
                uses.setdefault(text, node.lineno)
        stack.extend(ast.iter_child_nodes(node))
    return {"uses": dict(sorted(uses.items()))} if renders else None


def _class(node: Any) -> dict:
    import ast

    attrs: dict[str, list] = {}
    members: dict[str, list] = {}
    methods: dict[str, dict] = {}
    for stmt in node.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    attrs[target.id] = [stmt.lineno, _expr(stmt.value)]
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[stmt.name] = _function(stmt)
            for inner in ast.walk(stmt):
                if isinstance(inner, (ast.Assign, ast.AnnAssign)) and inner.value is not None:
                    for target in inner.targets if isinstance(inner, ast.Assign) else [inner.target]:
                        text = _dotted(target) if isinstance(target, ast.Attribute) else None
                        # ``__init__`` first: the object the instance starts with
                        if (
                            text
                            and text.count(".") == 1
                            and text.startswith("self.")
                            and (text[5:] not in members or stmt.name == "__init__")
                        ):
                            members[text[5:]] = [inner.lineno, _expr(inner.value)]
    bases = [b for b in (_dotted(base) for base in node.bases) if b]
    return {"line": node.lineno, "bases": bases, "attrs": attrs, "members": members, "methods": methods}


# ----------------------------------------------------------------------------- the index


class _Produce(NamedTuple):
    """What calling something builds: a stateful (or keyed) object, and whether every call
    returns the same one (a cached factory, an accessor of a module-level object)."""

    kind: str
    framework: str
    built: str
    run_methods: tuple[str, ...]
    where: str
    same: bool = False


class _File:
    """One file of the tree: where it is, its module names, its scan and summary (cached)."""

    __slots__ = ("hash", "module", "mtime", "package", "path", "rel", "scan", "size", "summary")

    def __init__(self, path: Path, rel: str) -> None:
        self.path = path
        self.rel = rel
        self.module = ""
        self.package = ""
        self.size = self.mtime = -1
        self.hash = ""
        self.scan: Scan | None = None
        self.summary: dict | None | bool = False  # False: not summarised yet


class ProjectIndex:
    """The index of one project tree: built once (:meth:`build`), then asked per file
    (:meth:`facts_for`). Construction does no I/O."""

    def __init__(self, root: Path, roots: tuple[str, ...], extra: tuple[str, ...], catalog_settings: Any) -> None:
        self.root = root
        self.roots = [Path(os.path.abspath(root / d)) for d in roots if (root / d).is_dir()]
        self.extra = extra
        self._settings = catalog_settings
        self.files: dict[str, _File] = {}  # by absolute path
        self.modules: dict[str, _File] = {}
        self.framework_files = 0
        self._tainted: set[str] | None = None
        self._importers: dict[str, set[str]] | None = None
        self._top: frozenset[str] | None = None
        self._top_re: re.Pattern[str] | None = None
        self._components: dict[str, str] | None = None
        self._catalog: Any = None
        self._memo: dict[Any, Any] = {}
        self._busy: set[Any] = set()
        self._state: dict[str, list[tuple[str, Fact]]] = {}  # attr → (the module setting it, fact)
        self._attrs: dict[tuple[str, str], Fact] = {}  # (module, name) → fact set from another module
        self._store: _Store | None = None
        # directory → the module names a script there imports from it (its .py files and packages)
        self._local_names: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ building

    def build(self, tree: list[Path], store: _Store | None = None) -> None:
        """Scan every file of the tree (text only); when some file is agent code, find the
        startup assignments (``app.state.x = ...``) that other modules rely on."""
        self._store = store
        prefix = str(self.root) + os.sep
        for path in tree:
            # absolute, not resolved: a module is named by the path Python imports it from
            absolute = os.path.abspath(path)
            if not absolute.startswith(prefix) or absolute.endswith(".ipynb"):
                continue  # outside the project, or a notebook: nothing imports one (it imports)
            record = _File(Path(absolute), absolute[len(prefix) :].replace(os.sep, "/"))
            self.files[absolute] = record
            names = self._names(absolute) or self._script_names(absolute)
            if names:
                record.module, is_package = names[0]
                record.package = record.module if is_package else record.module.rpartition(".")[0]
                for name, _ in names:
                    self.modules.setdefault(name, record)
            stem = os.path.basename(absolute).rpartition(".")[0]
            if stem.isidentifier() and stem != "__init__":
                self._local_names.setdefault(os.path.dirname(absolute), set()).add(stem)
            elif stem == "__init__":  # a package: its parent directory's scripts import it by name
                package_dir = os.path.dirname(absolute)
                name = os.path.basename(package_dir)
                if name.isidentifier():
                    self._local_names.setdefault(os.path.dirname(package_dir), set()).add(name)
        for record in self.files.values():
            self._scan(record)
            if record.scan is not None and record.scan.framework:
                self.framework_files += 1
        if not self.framework_files:
            return  # no agent code anywhere: nothing can be shared
        for record in self.files.values():
            scan = self._details(record)
            if scan is not None and scan.sets_attr and (scan.framework or self._reaches_agent_code(record)):
                self._startup_facts(record)

    def _names(self, path: str) -> list[tuple[str, bool]]:
        """The module names ``path`` (absolute) is importable as, one per import root that holds it."""
        out = []
        for root in self.roots:
            prefix = str(root) + os.sep
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix) :].split(os.sep)
            parts[-1] = parts[-1].rpartition(".")[0] or parts[-1]
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            if parts and all(p.isidentifier() for p in parts):
                out.append((".".join(parts), is_package))
        return out

    def _script_names(self, path: str) -> list[tuple[str, bool]]:
        """Names for a file no import root reaches (a directory on its path is not an identifier:
        ``crew-ai/agent-example-002/src/agentflow.py``, ``hugging-face/openai-assistants/app.py``).
        Such a file runs as a script, ``python src/app.py``: Python puts the script's directory
        first on ``sys.path`` (docs.python.org, "The initialization of the sys.path module search
        path"), so ``from agentflow import perform`` there names its sibling. Each directory gets a
        name of its own that no source can write (:meth:`_prefix`): the same module name in two
        sub-projects of one tree (an examples monorepo) stays two modules. The file is also named
        under its parent directory's name (``tools.search`` for ``src/tools/search.py``), for a
        script that imports a package of its own directory."""
        directory, _, filename = path.rpartition(os.sep)
        stem = filename.rpartition(".")[0] or filename
        parent, _, name = directory.rpartition(os.sep)
        under_parent = name.isidentifier() and parent.startswith(str(self.root))
        if stem == "__init__":
            return [(self._tag(directory), True), *([(f"{self._tag(parent)}.{name}", True)] if under_parent else [])]
        if not stem.isidentifier():
            return []
        out = [(f"{self._tag(directory)}.{stem}", False)]
        if under_parent:
            out.append((f"{self._tag(parent)}.{name}.{stem}", False))
        return out

    def _tag(self, directory: str) -> str:
        import hashlib

        rel = directory[len(str(self.root)) :]
        return "_dir" + hashlib.blake2b(rel.encode(), digest_size=6).hexdigest()  # _DIR_TAG

    def _prefix(self, directory: str) -> str:
        """The module-name prefix of the modules in ``directory``: its dotted path under the project
        root when every part is an identifier (``app.core``; "" for the root itself), else its tag."""
        key = ("prefix", directory)
        if key not in self._memo:
            rel = directory[len(str(self.root)) + 1 :] if directory != str(self.root) else ""
            parts = rel.split(os.sep) if rel else []
            identifiers = all(part.isidentifier() for part in parts)
            self._memo[key] = ".".join(parts) if identifiers else self._tag(directory)
        return self._memo[key]

    def scoped(self, directory: str | None, qualified: str) -> str:
        """``qualified``, an absolute import written in a file of ``directory``, as the index names
        it. A top-level name the import roots hold is theirs; another is looked up in the file's
        own directory (a script's directory is first on ``sys.path``, see :meth:`_script_names`),
        then in each directory above it, nearest first: a sub-project run from its own root or
        with its own ``src/`` on the path (``modules/agent/src/agent/orchestrator.py`` imports
        ``agent.workers``, which is ``modules/agent/src/agent/workers/``). Unresolved: unchanged."""
        head = qualified.partition(".")[0]
        if directory is None or head in self._top_names():
            return qualified
        key = ("scope", directory, head)
        if key not in self._memo:
            found = None
            root = str(self.root)
            current = directory
            while current.startswith(root) and found is None:
                prefix = self._prefix(current)
                if prefix and f"{prefix}.{head}" in self.modules:
                    found = prefix
                if current == root:
                    break
                current = os.path.dirname(current)
            self._memo[key] = found
        prefix = self._memo[key]
        return f"{prefix}.{qualified}" if prefix else qualified

    def _read(self, record: _File) -> str | None:
        """The file's text, or None: a FIFO, socket or device in the tree is never opened for
        reading (it would block the run; pass 2 reports it as not processed), and the open is
        non-blocking in case the path was swapped for one since it was listed."""
        try:
            if not stat.S_ISREG(os.stat(record.path).st_mode):
                return None
            fd = os.open(record.path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            with open(fd, "rb", buffering=0) as handle:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                data = handle.read()
        except OSError:
            return None
        if self._store is not None:  # the content hash keys the cache only
            import hashlib

            record.hash = hashlib.blake2b(data, digest_size=16).hexdigest()
        return data.decode("utf-8", "replace")

    def _scan(self, record: _File) -> None:
        """The text test of every file: the prefilter, and nothing else until some file passes."""
        if self._store is not None:  # size and mtime key the cache only
            try:
                st = record.path.stat()
            except OSError:
                return
            record.size, record.mtime = st.st_size, st.st_mtime_ns
            cached = self._store.lookup(record)
            if cached is not None:
                record.scan, record.summary = cached
                return
        text = self._read(record)
        if text is None:
            return
        cached = self._store.by_hash(record.hash) if self._store is not None else None
        if cached is not None:
            record.scan, record.summary = cached
        else:
            record.scan = Scan(might_matter(text, self.extra))
            if record.scan.framework:  # some file is agent code: its imports will be asked for
                record.scan = scan_details(record.scan, text)
        if self._store is not None:
            self._store.note(record)

    def _details(self, record: _File) -> Scan | None:
        """The file's imports and attribute assignments (read again unless kept)."""
        scan = record.scan
        if scan is None or scan.imports is not None:
            return scan
        text = self._read(record)
        if text is None:
            return scan
        record.scan = scan_details(scan, text)
        if self._store is not None:
            self._store.note(record)
        return record.scan

    def _summary(self, record: _File) -> dict | None:
        if record.summary is False:
            text = self._read(record)
            record.summary = summarise(text) if text is not None else None
            if self._store is not None:
                self._store.note(record)
        return record.summary  # type: ignore[return-value]

    # ------------------------------------------------------------------ the import graph

    def _split(self, qualified: str) -> tuple[_File, list[str]] | None:
        """The longest prefix of ``qualified`` that is a project module, and the names after it."""
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            record = self.modules.get(".".join(parts[:cut]))
            if record is not None:
                return record, parts[cut:]
        return None

    def _graph(self) -> tuple[dict[str, set[str]], dict[str, str]]:
        """The project's import graph from the text scan: module → the modules importing it,
        and module → its component (modules linked by imports in either direction)."""
        if self._importers is None:
            importers: dict[str, set[str]] = {}
            parent: dict[str, str] = {}

            def find(module: str) -> str:
                while parent.setdefault(module, module) != module:
                    parent[module] = parent[parent[module]]
                    module = parent[module]
                return module

            for other in self.files.values():
                scan = self._details(other)
                if scan is None or scan.imports is None or not other.module:
                    continue
                for statement in scan.imports:
                    try:
                        level, module, names = statement
                        base = absolute_module(other.package, int(level), str(module))
                    except (TypeError, ValueError):  # a damaged cache entry
                        continue
                    if base is not None and not level:
                        base = self.scoped(os.path.dirname(other.path), base)
                    if base is None or base.split(".")[0] not in self._top_names():
                        continue
                    for target in (base, *(f"{base}.{n}" for n in names if isinstance(n, str))):
                        found = self._split(target)
                        if found is not None and found[0].module != other.module:
                            importers.setdefault(found[0].module, set()).add(other.module)
                            parent[find(found[0].module)] = find(other.module)
            self._importers = importers
            self._components = {module: find(module) for module in parent}
        assert self._components is not None
        return self._importers, self._components

    def _connected(self, a: str, b: str) -> bool:
        """Are two modules parts of one application (linked by imports)? A tree may hold several
        (examples, copies): ``app.state`` set by one is not the other's."""
        components = self._graph()[1]
        return bool(a) and bool(b) and components.get(a, a) == components.get(b, b)

    def _reaches_agent_code(self, record: _File) -> bool:
        """Can this module hand out agent state: is it agent code, or does it import (directly
        or through other project modules) a module that is? Text only: the regex scan."""
        if self._tainted is None:
            importers = self._graph()[0]
            work = [r.module for r in self.files.values() if r.scan is not None and r.scan.framework and r.module]
            tainted = set(work)
            while work:
                for importer in importers.get(work.pop(), ()):
                    if importer not in tainted:
                        tainted.add(importer)
                        work.append(importer)
            self._tainted = tainted
        return record.module in self._tainted

    def state(self, attr: str, module: str) -> Fact | None:
        """``app.state.<attr>`` as another module of ``module``'s application sets it at startup
        (the module's own assignments are the per-file model's to see)."""
        for setter, fact in self._state.get(attr, ()):
            if setter != module and self._connected(setter, module):
                return fact
        return None

    # ------------------------------------------------------------------ facts for a file

    def facts_for(self, path: Path | None, text: str) -> ProjectFacts | None:
        """The facts ``text`` (the file at ``path``, or stdin given that name) consumes, or None
        when it consumes none."""
        if not self.framework_files:
            return None
        record = self._record(path)
        package = record.package if record is not None else ""
        module = record.module if record is not None else ""
        directory = os.path.dirname(os.path.abspath(path)) if path is not None else None
        facts: dict[str, Fact] = {}
        constants: list[tuple[str, str, _File, list[str]]] = []
        for imported in scan_imports(text, package) if self._may_import_project(text, directory) else ():
            qualified = self.scoped(directory, imported.qualified)
            found = self._split(qualified)
            if found is None:
                continue
            if not self._reaches_agent_code(found[0]):
                # a module that cannot reach agent code exports constants at most: read it only
                # if the file turns out to be agent code (below)
                constants.append((imported.qualified, qualified, *found))
                continue
            before = set(facts)
            self._add(facts, imported.qualified, qualified, found[0], found[1])
            coroutine = self._never_suspends(qualified)
            if coroutine is not None and imported.qualified not in facts:
                facts[imported.qualified] = coroutine
            if all(fact.role == KEY for key, fact in facts.items() if key not in before):
                facts[USES + imported.qualified] = Fact(USES_AGENT_CODE, "", self._where(found[0], 1), qualified)
        if constants and (facts or might_matter(text, self.extra)):
            for key, qualified, record, rest in constants:
                self._add(facts, key, qualified, record, rest)
        if module:
            for (owner, name), fact in self._attrs.items():
                if owner == module:
                    facts[f"{module}.{name}"] = fact
        if self._state and ".state." in text:
            for attr in self._state:
                stored = self.state(attr, module)
                if stored is not None:
                    facts[STATE + attr] = stored
        if module and module in self._graph()[0]:  # imported by another module: maybe called per request
            for name, fact in self.per_request().get(module, {}).items():
                facts[name if name.startswith(RUNS) else CALLED + name] = fact
        if not facts:
            return None
        return ProjectFacts(package, module, facts)

    # ------------------------------------------------------------------ per-request callers

    def per_request(self) -> dict[str, dict[str, Fact]]:
        """module → its top-level functions that per-request code of *another* module calls
        (directly, or through project functions, up to ``MAX_CALL_DEPTH`` calls deep), with the
        first such call. Per-request code is what ``semantic.entrypoints`` and ``semantic.hosts``
        say runs per request, session or job: route-decorated functions, Chainlit hooks, worker
        tasks, functions registered by reference (Gradio listeners, ``gr.ChatInterface(fn=...)``,
        ``add_api_route``), a Streamlit page script's module level. Import-time calls and
        ``if __name__ == "__main__":`` of other modules are not. Only modules that import another
        project module can call one, so only they are parsed (once per run; kept in the cache)."""
        if "per-request" not in self._memo:
            self._memo["per-request"] = self._per_request()
        return self._memo["per-request"]

    def _per_request(self) -> dict[str, dict[str, Fact]]:
        importers = self._graph()[0]
        # only an importer of a module that reaches agent code can reach a shared object: a module
        # that imports none (a script importing its plain helpers) is never parsed for this
        callers: set[str] = set()
        for module, who in importers.items():
            record = self.modules.get(module)
            if record is not None and self._reaches_agent_code(record):
                callers |= who
        reached: dict[str, dict[str, Fact]] = {}
        seen: set[tuple[str, str, bool]] = set()
        # (module, function, calls from the entry point, reached across a module boundary)
        work: list[tuple[_File, str, int, bool]] = []

        def reach(caller: _File, how: str, line: int, target: tuple | None, depth: int, crossed: bool) -> None:
            if target is None or target[0] != "def" or target[3] or depth > MAX_CALL_DEPTH:
                return
            record, name = target[1], target[2]
            if record is not caller:
                fact = Fact(PER_REQUEST, "", self._where(caller, line), how)
                reached.setdefault(record.module, {}).setdefault(name, fact)
            key = (record.module, name, crossed or record is not caller)
            if key not in seen:
                seen.add(key)
                work.append((record, name, depth, key[2]))

        for module in sorted(callers):
            record = self.modules.get(module)
            summary = self._summary(record) if record is not None else None
            if record is None or summary is None or record.module != module:
                continue
            for name, fn in summary["defs"].items():
                if self._entry(record, summary, fn):
                    reach(record, "", fn["line"], ("def", record, name, ""), 0, False)
            for registered, callee, line in self._registered(record, summary):
                reach(
                    record,
                    f"registered as a per-request handler with `{callee}(...)`",
                    line,
                    self._target(record, registered),
                    1,
                    False,
                )
            page = summary.get("page")
            if page is not None:
                for use, line in page["uses"].items():
                    reach(record, "called per request by the Streamlit page", line, self._target(record, use), 1, False)
        while work:
            record, name, depth, crossed = work.pop()
            summary = self._summary(record)
            assert summary is not None
            fn = summary["defs"][name]
            local = set(fn["locals"])
            for use, line in fn["uses"].items():
                if use.split(".")[0].removesuffix("()") in local:
                    continue
                target = self._target(record, use)
                reach(record, f"called per request by `{name}`", line, target, depth + 1, crossed)
                if target is not None and target[0] == "bind" and target[1] is not record:
                    self._object_run(reached, record, name, line, target, crossed)
        return reached

    def _object_run(
        self, reached: dict[str, dict[str, Fact]], record: _File, name: str, line: int, target: tuple, crossed: bool
    ) -> None:
        """A module-level agent or memory of another module that a project function reached per
        request (not an entry point itself: a route using an imported agent is reported where it
        uses it) runs: the object's module gets a fact too, so the report lands where the object
        is built (NeoFacturing/backend: app/core/chat.py's ``get_response`` runs the agent of
        app/core/agent.py, built with the memory of app/core/memory.py). Filed under "@runs.<name>".
        A member object (``MEMBER``: a CrewAI agent) counts when the function, entry point or not,
        also builds one of the containers that run it (``Crew(agents=[planner])``): the using
        module's model cannot see it as shared, so the report is always where it is built."""
        fact = self._fact_of(target)
        if fact is None or fact.role != OBJECT or fact.how != "module":
            return
        if fact.kind == MEMBER:
            if not self._builds_container(record, name, fact.run_methods):
                return
        elif fact.kind not in STATEFUL or not crossed:
            return
        how = f"run per request by `{name}` at {self._where(record, line)}"
        owner, bound = target[1], target[2]
        reached.setdefault(owner.module, {}).setdefault(RUNS + bound, Fact(PER_REQUEST, fact.kind, fact.where, how))
        held = self._held_target(owner, bound)
        if held is not None:
            memory = Fact(PER_REQUEST, MEMORY, fact.holds, f"held by `{bound}` ({fact.where}), {how}")
            reached.setdefault(held[0].module, {}).setdefault(RUNS + held[1], memory)

    def _builds_container(self, record: _File, name: str, containers: Sequence[str]) -> bool:
        """Does the function ``name`` of ``record`` call one of ``containers`` (qualified names)?"""
        fn = self._summary(record)["defs"][name]  # type: ignore[index]
        for use in fn["uses"]:
            target = self._target(record, use)
            if target is not None and target[0] == "ext" and target[1] in containers:
                return True
        return False

    def _held_target(self, record: _File, name: str) -> tuple[_File, str] | None:
        """The module-level memory (its module and name) the agent bound as ``name`` is built with."""
        expr = self._summary(record)["binds"][name][1]  # type: ignore[index]
        if expr[0] != "call":
            return None
        for arg in expr[3]:
            target = self._target(record, arg)
            if target is not None and target[0] == "bind" and not target[3]:
                fact = self._fact_of(target)
                if fact is not None and fact.role == OBJECT and fact.kind == MEMORY and fact.how == "module":
                    return target[1], target[2]
        return None

    def _registered(self, record: _File, summary: dict) -> list[tuple[str, str, int]]:
        """(the registered function's dotted name, the registering call, its line) for each call
        of ``record`` that hands a function to a host by reference, by the tables of
        ``semantic.entrypoints``: a qualified callee (``gr.ChatInterface(fn=...)``,
        ``starlette.routing.Route(path, f)``), or a method name (``add_api_route``; a Gradio or
        Panel listener such as ``btn.click(fn=...)`` only in a file importing that host)."""
        from .semantic import entrypoints as ep

        hosts = {
            (absolute_module(record.package, spec[0], spec[1]) or "").split(".")[0]
            for spec in summary["imports"].values()
            if isinstance(spec, list) and len(spec) == 3
        }
        methods: dict[str, Any] = {k: v for k, v in ep.HANDLER_REGISTRATIONS.items() if "." not in k}
        for host, table in (*ep.HOST_EVENT_REGISTRATIONS.items(), *ep.HOST_METHOD_REGISTRATIONS.items()):
            if host in hosts:
                methods.update(table)
        out = []
        for entry in summary.get("regs", ()):
            try:
                callee, positional, keywords, line = entry
                positional, keywords = list(positional), dict(keywords)
            except (TypeError, ValueError):
                continue
            target = self._target(record, callee)
            qualified = target[1] if target is not None and target[0] == "ext" else ""
            if qualified in ep.HANDLER_REGISTRATIONS:
                where = ep.HANDLER_REGISTRATIONS[qualified]
            elif qualified in ep.HOST_REGISTRATIONS and ep.HOST_REGISTRATIONS[qualified][1] == ep.HANDLER:
                where = ep.HOST_REGISTRATIONS[qualified][0]
            elif "." in callee and callee.rpartition(".")[2] in methods:
                where = methods[callee.rpartition(".")[2]]
            else:
                continue
            arg = None
            if isinstance(where, int) and where < len(positional):
                arg = positional[where]
            elif isinstance(where, str):
                arg = keywords.get(where)
            arg = arg or next((keywords[k] for k in _REGISTRATION_KEYWORDS if keywords.get(k)), None)
            if isinstance(arg, str) and arg:
                out.append((arg, callee, int(line)))
        return out

    def _entry(self, record: _File, summary: dict, fn: dict) -> bool:
        """Is this top-level function run per request or job by its host: a route, a Chainlit
        hook, a worker task (``semantic.entrypoints``'s decorators)? Bedrock AgentCore's
        entrypoint is not: its whole process belongs to one session (hosts.py)."""
        from .semantic import entrypoints as ep

        named = ep.HANDLER_DECORATORS | ep.WORKER_DECORATORS | ep.HOST_HANDLER_DECORATORS
        paths = fn.get("deco_path") or [None] * len(fn["deco"])
        for dotted, path in zip(fn["deco"], paths):
            target = self._target(record, dotted)
            if target is not None and target[0] == "ext" and target[1] in named:
                return True
            receiver, _, method = dotted.rpartition(".")
            if not receiver:
                continue
            cls = ""
            if target is not None and target[0] == "bind" and target[1] is record:
                expr = summary["binds"][target[2]][1]
                owner = self._target(record, expr[1]) if expr[0] == "call" else None
                cls = owner[1] if owner is not None and owner[0] == "ext" else ""
            table = ep.HOST_APP_DECORATORS.get(cls)
            if table is not None:
                if cls in ep.AGENTCORE_APPS:
                    continue
                if table.get(method) in (ep.HANDLER, ep.WORKER):
                    return True
                continue
            if method in ep.ROUTE_METHODS and (
                cls in ep.APP_CLASSES
                or cls.rpartition(".")[0] in ep.APP_CLASSES
                or (isinstance(path, str) and path.startswith("/"))
            ):
                return True
            if method in ep.WORKER_METHODS and (cls in ep.WORKER_APP_CLASSES or "celery" in receiver.lower()):
                return True
        return False

    def _top_names(self) -> frozenset[str]:
        if self._top is None:
            self._top = frozenset(name.split(".")[0] for name in self.modules)
            # a directory's own name (``_dir<hash>``) is in no source: not worth a search
            self._top_re = _words(frozenset(name for name in self._top if not _DIR_TAG.match(name)))
        return self._top

    def _may_import_project(self, text: str, directory: str | None = None) -> bool:
        """A relative import, the name of one of the project's top-level modules, or of a module
        in the file's directory or one above it (:meth:`scoped`) in the text: substring tests
        that spare most files of a tree of unrelated scripts the import scan."""
        if "from" in text and _RELATIVE.search("\n" + text) is not None:
            return True
        self._top_names()
        if self._top_re is not None and self._top_re.search(text) is not None:
            return True
        # a module beside the file or above it: the import scan itself tells (no per-name search)
        return directory is not None and bool(self._visible(directory))

    def _visible(self, directory: str) -> frozenset[str]:
        """The module names of ``directory`` and of every directory above it in the project."""
        key = ("visible", directory)
        if key not in self._memo:  # a loop, not recursion: a path may be thousands of directories deep
            names: set[str] = set()
            root, current = str(self.root), directory
            while True:
                names.update(self._local_names.get(current, ()))
                parent = os.path.dirname(current)
                if current == root or parent == current or not parent.startswith(root):
                    break
                current = parent
            self._memo[key] = frozenset(names)
        return self._memo[key]

    def _add(self, facts: dict[str, Fact], key: str, qualified: str, record: _File, rest: list[str]) -> None:
        """The facts about ``qualified`` (as the index names it), filed under ``key`` (the name
        the file's model resolves: the two differ for a script's sibling module)."""
        fact = self.fact(qualified)
        if fact is not None:
            facts[key] = fact
        elif not rest:  # a module: its members, by the names the model will resolve
            for name, member in self._members(record).items():
                facts[f"{key}.{name}"] = member
        else:  # a config class or its instance: its literal attributes (``settings.THREAD_ID``)
            for attr, member in self._literal_attributes(qualified).items():
                facts[f"{key}.{attr}"] = member

    def _never_suspends(self, qualified: str) -> Fact | None:
        """A fact for ``qualified`` when it names a module-level ``async def`` that never awaits."""
        target = self._lookup(qualified)
        if target is None or target[0] != "def" or target[3]:
            return None
        record, name = target[1], target[2]
        fn = self._summary(record)["defs"][name]  # type: ignore[index]
        if not fn.get("never_suspends"):
            return None
        return Fact(NEVER_SUSPENDS, "", self._where(record, fn["line"]), f"{name}(...)")

    def _literal_attributes(self, qualified: str) -> dict[str, Fact]:
        target = self._lookup(qualified)
        if target is None or target[0] not in ("bind", "class") or target[3]:
            return {}
        record, name = target[1], target[2]
        if target[0] == "bind":
            expr = self._summary(record)["binds"][name][1]  # type: ignore[index]
            owner = self._target(record, expr[1]) if expr[0] == "call" else None
            if owner is None or owner[0] != "class" or owner[3]:
                return {}
            record, name = owner[1], owner[2]
        attrs = self._summary(record)["classes"][name]["attrs"]  # type: ignore[index]
        return {
            attr: Fact(KEY, "", self._where(record, line), f"{name}.{attr}", value=expr[1])
            for attr, (line, expr) in attrs.items()
            if expr[0] == "lit"
        }

    def _record(self, path: Path | None) -> _File | None:
        if path is None or str(path).endswith(".ipynb"):  # a notebook is no module of the project
            return None
        absolute = os.path.abspath(path)
        record = self.files.get(absolute)
        if record is None:  # named on the command line but excluded from the tree: still a module
            names = self._names(absolute) or self._script_names(absolute)
            if names:
                record = _File(Path(absolute), Path(absolute).name)
                record.module, is_package = names[0]
                record.package = record.module if is_package else record.module.rpartition(".")[0]
        return record

    def _members(self, record: _File) -> dict[str, Fact]:
        key = ("members", record.module)
        if key not in self._memo:
            self._memo[key] = {}
            out = {}
            summary = self._summary(record)
            if summary is not None:
                names = {*summary["binds"], *summary["defs"], *summary["classes"]}
                names |= {n for n, spec in summary["imports"].items() if spec[2] is not None}
                for name in sorted(names):
                    fact = self.fact(f"{record.module}.{name}")
                    if fact is not None:
                        out[name] = fact
            self._memo[key] = out
        return self._memo[key]

    # ------------------------------------------------------------------ resolution

    @property
    def catalog(self) -> Any:
        if self._catalog is None:
            from .semantic.catalog_loader import catalog_for

            self._catalog = catalog_for(self._settings)
        return self._catalog

    def _where(self, record: _File, line: int) -> str:
        return f"{record.rel}:{line}"

    def _target(self, record: _File, dotted: str, depth: int = 0) -> tuple | None:
        """What ``dotted`` names in ``record``'s module: ("ext", qualified), ("module", file),
        ("bind" | "def" | "class", file, name, rest), or None."""
        if depth > 12:
            return None
        summary = self._summary(record)
        if summary is None:
            return None
        head, _, rest = dotted.replace("()", "").partition(".")
        if head in summary["binds"]:
            return ("bind", record, head, rest)
        if head in summary["defs"]:
            return ("def", record, head, rest)
        if head in summary["classes"]:
            return ("class", record, head, rest)
        spec = summary["imports"].get(head)
        if spec is None:
            return None
        level, module, name = spec
        base = absolute_module(record.package, level, module)
        if base is None:
            return None
        if not level:
            base = self.scoped(os.path.dirname(record.path), base)
        qualified = f"{base}.{name}" if name else base
        return self._lookup(f"{qualified}.{rest}" if rest else qualified, depth + 1)

    def _lookup(self, qualified: str, depth: int = 0) -> tuple | None:
        found = self._split(qualified)
        if found is None:
            return ("ext", qualified)
        record, rest = found
        if not rest:
            return ("module", record)
        key = ("lookup", record.module, ".".join(rest))
        if key in self._busy or len(self._busy) > MAX_NESTING:
            return None  # an import cycle, or a chain too long to follow
        self._busy.add(key)
        try:
            return self._target(record, ".".join(rest), depth)
        finally:
            self._busy.discard(key)

    def _memoised(self, key: tuple, compute: Any) -> Any:
        """``compute()`` once per key. A key asked for while it is being computed (an import or
        call cycle) is None, and so is everything past ``MAX_NESTING`` questions deep: a chain
        of a thousand re-exports cannot exhaust Python's stack."""
        if key in self._memo:
            return self._memo[key]
        if key in self._busy or len(self._busy) > MAX_NESTING:
            return None
        self._busy.add(key)
        try:
            value = compute()
        finally:
            self._busy.discard(key)
        self._memo[key] = value
        return value

    def fact(self, qualified: str) -> Fact | None:
        """The fact about a qualified name of the project, or None."""

        def compute() -> Fact | None:
            target = self._lookup(qualified)
            return self._fact_of(target) if target is not None else None

        return self._memoised(("fact", qualified), compute)

    def _fact_of(self, target: tuple) -> Fact | None:
        kind = target[0]
        if kind in ("ext", "module"):
            return None
        _, record, name, rest = target
        summary = self._summary(record)
        assert summary is not None
        if kind == "bind":
            line, expr = summary["binds"][name]
            if rest:
                return self._config_attr(record, expr, rest)
            attr = self._attrs.get((record.module, name))
            if attr is not None:
                return attr
            if expr[0] == "lit":
                return Fact(KEY, "", self._where(record, line), name, value=expr[1])
            return self._object(record, name, line, expr)
        if kind == "def":
            if rest:
                return None
            return self._function_fact(record, name)
        if rest:  # Config.SESSION_ID
            attr_spec = summary["classes"][name]["attrs"].get(rest)
            if attr_spec and attr_spec[1][0] == "lit":
                return Fact(KEY, "", self._where(record, attr_spec[0]), f"{name}.{rest}", value=attr_spec[1][1])
            return None
        produce = self._class_produce(record, name)
        if produce is not None and produce.kind in STATEFUL:
            return Fact(FACTORY, produce.kind, produce.where, produce.built, produce.framework, produce.run_methods)
        return None

    def _config_attr(self, record: _File, expr: Expr, attr: str) -> Fact | None:
        """``settings.SESSION_ID`` where ``settings = Settings()`` of a project class whose
        ``SESSION_ID`` is a literal: a key that is the same for every request."""
        if expr[0] != "call" or "." in attr:
            return None
        target = self._target(record, expr[1])
        if target is None or target[0] != "class" or target[3]:
            return None
        owner = self._summary(target[1])
        assert owner is not None
        spec = owner["classes"][target[2]]["attrs"].get(attr)
        if spec is None or spec[1][0] != "lit":
            return None
        return Fact(KEY, "", self._where(target[1], spec[0]), f"{target[2]}.{attr}", value=spec[1][1])

    def _object(self, record: _File, name: str, line: int, expr: Expr, how: str = "module") -> Fact | None:
        if expr[0] == "name":  # ``agent = other_agent``
            target = self._target(record, expr[1])
            if target is None or target[0] != "bind" or (target[1], target[2]) == (record, name):
                return None
            fact = self._fact_of(target)
            return fact if fact is not None and fact.role == OBJECT else None
        if expr[0] != "call":
            return None
        produce = self.produce(record, expr)
        if produce is None:
            return None
        where = self._where(record, line)
        if produce.same:  # ``agent = get_agent()`` of a cached factory: that factory's object
            how, where = "cached", produce.where
        holds = self._held_memory(record, expr) if produce.kind == AGENT else ""
        return Fact(
            OBJECT, produce.kind, where, produce.built, produce.framework, produce.run_methods, how=how, holds=holds
        )

    def _held_memory(self, record: _File, expr: Expr) -> str:
        """A module-level memory the agent is built with (``memory=memory``): shared with it."""
        for arg in expr[3]:
            target = self._target(record, arg)
            if target is not None and target[0] == "bind" and not target[3]:
                fact = self._fact_of(target)
                if fact is not None and fact.role == OBJECT and fact.kind == MEMORY:
                    return f"`{arg}` ({fact.where})"
        return ""

    def _function_fact(self, record: _File, name: str) -> Fact | None:
        produce = self._function_produce(record, name)
        if produce is not None and produce.kind in STATEFUL:
            if produce.same:  # the one object: named by the factory that hands it out
                where = self._where(record, self._summary(record)["defs"][name]["line"])  # type: ignore[index]
                return Fact(SHARED_FACTORY, produce.kind, where, produce.built, produce.framework, produce.run_methods)
            return Fact(FACTORY, produce.kind, produce.where, produce.built, produce.framework, produce.run_methods)
        runs = self._runs(record, name)
        if runs is not None:
            obj, via = runs
            return Fact(
                RUNNER,
                obj.kind,
                obj.where,
                obj.built,
                obj.framework,
                obj.run_methods,
                via,
                how=obj.how,
                holds=obj.holds,
            )
        return None

    # ------------------------------------------------------------------ what calls build

    def produce(self, record: _File, expr: Expr, depth: int = 0) -> _Produce | None:
        """What the call ``expr`` (in ``record``'s module) builds, when it is stateful or keyed."""
        if expr[0] != "call" or depth > 6:
            return None
        callee, kwargs = expr[1], expr[2]
        target = self._target(record, callee)
        if target is None:
            return None
        if target[0] == "ext":
            return self._catalog_produce(record, target[1], kwargs, expr[4], callee)
        if target[0] == "def" and not target[3]:
            return self._function_produce(target[1], target[2], depth + 1)
        if target[0] == "class" and not target[3]:
            return self._class_produce(target[1], target[2])
        if target[0] == "bind" and target[3]:
            # ``builder.compile(...)`` where ``builder = StateGraph(...)``: the method of the class
            summary = self._summary(target[1])
            assert summary is not None
            _, bound = summary["binds"][target[2]]
            if bound[0] == "call":
                base = self._target(target[1], bound[1])
                if base is not None and base[0] == "ext":
                    return self._catalog_produce(record, f"{base[1]}.{target[3]}", kwargs, expr[4], callee)
        return None

    def _catalog_produce(self, record: _File, qualified: str, kwargs: list, line: int, text: str) -> _Produce | None:
        from .semantic.catalog import Kind

        entry = self.catalog.lookup(qualified)
        if entry is None:
            return None
        kind = entry.kind
        if kind is Kind.STATELESS and set(entry.stateful_if_kwargs) & set(kwargs):
            kind = Kind.AGENT
        where = self._where(record, line)
        built = f"{text}(...)"
        if kind in (Kind.AGENT, Kind.MEMORY):
            return _Produce(kind.value, entry.framework, built, entry.run_methods, where)
        if kind is Kind.STATELESS and entry.member_of:
            return _Produce(MEMBER, entry.framework, built, entry.member_of, where)
        if kind is Kind.STATELESS and entry.session_kwargs:
            if any(part in qualified for part in NEEDS_CHECKPOINTER) and "checkpointer" not in kwargs:
                return None
            return _Produce(KEYED, entry.framework, built, entry.run_methods, where)
        return None

    def _function_produce(self, record: _File, name: str, depth: int = 0) -> _Produce | None:
        return self._memoised(
            ("produce", record.module, name), lambda: self._function_produce_uncached(record, name, depth)
        )

    def _function_produce_uncached(self, record: _File, name: str, depth: int) -> _Produce | None:
        summary = self._summary(record)
        assert summary is not None
        fn = summary["defs"][name]
        cached = any(self._is_cache(record, d) for d in fn["deco"])
        for ret in fn["ret"]:
            if ret[0] == "call":
                produce = self.produce(record, ret, depth + 1)
                if produce is not None:
                    return produce._replace(same=cached or produce.same)
            elif ret[0] == "name" and ret[1] not in fn["locals"]:
                target = self._target(record, ret[1])
                if target is not None and target[0] == "bind" and not target[3]:
                    fact = self._fact_of(target)
                    if fact is not None and fact.role == OBJECT:
                        # an accessor: ``def get_agent(): return agent`` hands out the one object
                        return _Produce(fact.kind, fact.framework, fact.built, fact.run_methods, fact.where, True)
        return None

    def _is_cache(self, record: _File, decorator: str) -> bool:
        target = self._target(record, decorator)
        if target is not None and target[0] == "ext":
            return target[1] in CACHE_DECORATORS
        return decorator.rpartition(".")[2] in CACHE_DECORATOR_NAMES and target is None

    def _class_produce(self, record: _File, name: str) -> _Produce | None:
        """A project class whose instances hold a stateful object (``self.memory = Memory(...)``,
        or a catalog agent as a base class): its instances are stateful, and the methods that
        touch what it holds are its run methods."""
        return self._memoised(("class", record.module, name), lambda: self._class_produce_uncached(record, name))

    def _class_produce_uncached(self, record: _File, name: str) -> _Produce | None:
        summary = self._summary(record)
        assert summary is not None
        cls = summary["classes"][name]
        held: dict[str, _Produce] = {}
        for attr, (_, expr) in {**cls["attrs"], **cls["members"]}.items():
            produce = self.produce(record, expr)
            if produce is not None and produce.kind in STATEFUL:
                held[attr] = produce
        inherited: tuple[str, ...] = ()
        base_produce = None
        for base in cls["bases"]:
            target = self._target(record, base)
            if target is None:
                continue
            if target[0] == "ext":
                base_produce = self._catalog_produce(record, target[1], [], cls["line"], base)
            elif target[0] == "class" and not target[3]:
                base_produce = self._class_produce(target[1], target[2])
            if base_produce is not None and base_produce.kind in STATEFUL:
                inherited = base_produce.run_methods
                break
            base_produce = None
        if not held and base_produce is None:
            return None
        methods = cls["methods"]
        touching = {
            m
            for m, spec in methods.items()
            if m != "__init__"
            and any(u == f"self.{a}" or u.startswith(f"self.{a}.") for u in spec["uses"] for a in held)
        }
        if base_produce is not None:
            touching |= {m for m in methods if m in inherited}
        grew = True
        while grew:  # ``self.reply()`` → a method that touches the held object
            grew = False
            for m, spec in methods.items():
                if m not in touching and m != "__init__" and set(spec["self_calls"]) & touching:
                    touching.add(m)
                    grew = True
        agents = [p for p in held.values() if p.kind == AGENT]
        chosen = agents[0] if agents else (next(iter(held.values())) if held else base_produce)
        assert chosen is not None
        what = next((f"self.{a}" for a, p in held.items() if p is chosen), "")
        return _Produce(
            chosen.kind,
            chosen.framework,
            f"{name}(...) (holds {chosen.built} as `{what}`)" if held else f"{name}(...)",
            tuple(sorted(touching | set(inherited))),
            self._where(record, cls["line"]),
        )

    # ------------------------------------------------------------------ runners

    def _runs(self, record: _File, name: str) -> tuple[Fact, str] | None:
        """(the shared object a project function runs or mutates, where: "`agent`
        (app/chat.py:5)"), when it uses one: a module-level stateful object, a cached factory's object, app state set
        at startup, or through another project function that does."""
        return self._memoised(("runs", record.module, name), lambda: self._runs_uncached(record, name))

    def _runs_uncached(self, record: _File, name: str) -> tuple[Fact, str] | None:
        summary = self._summary(record)
        assert summary is not None
        fn = summary["defs"][name]
        local = set(fn["locals"])
        found: dict[str, tuple[Fact, str]] = {}  # by where the object is built: each object once
        for use, line in fn["uses"].items():
            here = f"`{use}` ({self._where(record, line)})"
            if ".state." in f".{use}":
                attr = use.rpartition("state.")[2].split(".")[0]
                fact = self.state(attr, record.module)
                if fact is not None and fact.kind in STATEFUL:
                    found.setdefault(fact.where, (fact, here))
                continue
            head = use.split(".")[0].removesuffix("()")
            if head in local or head == "self":
                continue
            target = self._target(record, use)
            if target is None or target[0] in ("ext", "module"):
                continue
            if target[0] == "bind" and not target[3]:
                fact = self._fact_of(target)
                if fact is not None and fact.role == OBJECT and fact.kind in STATEFUL:
                    found.setdefault(fact.where, (fact, here))
            elif target[0] == "def" and not target[3]:
                produce = self._function_produce(target[1], target[2])
                if produce is not None and produce.same and produce.kind in STATEFUL:
                    fact = Fact(
                        OBJECT, produce.kind, produce.where, produce.built, produce.framework, produce.run_methods
                    )
                    call = f"`{use.removesuffix('()')}()` ({self._where(record, line)})"
                    found.setdefault(fact.where, (fact._replace(how="cached"), call))
                    continue
                inner = self._runs(target[1], target[2])
                if inner is not None:
                    found.setdefault(inner[0].where, inner)
        if not found:
            return None
        # the first agent (else the first memory), and how many more the function reaches
        ranked = sorted(found.values(), key=lambda pair: pair[0].kind != AGENT)
        fact, via = ranked[0]
        if len(ranked) > 1:
            via = f"{via.split(' and ')[0]} and {len(ranked) - 1} more shared object(s)"
        return fact, via

    # ------------------------------------------------------------------ startup assignments

    def _startup_facts(self, record: _File) -> None:
        """``app.state.agent = Agent()`` or ``routes.agent = Coordinator()`` in a startup hook
        (or at module level): an object every request of the process reaches."""
        summary = self._summary(record)
        if summary is None:
            return
        for target, line, expr, fn, decorators in summary["setattrs"]:
            if fn is not None and not (
                fn in STARTUP_NAMES or any(d.rpartition(".")[2] in STARTUP_DECORATORS for d in decorators)
            ):
                continue
            if expr[0] != "call":
                continue
            if ".state." in f".{target}":
                attr = target.rpartition("state.")[2]
                if "." in attr:
                    continue
                fact = self._object(record, attr, line, expr, how="state")
                if fact is not None:
                    self._state.setdefault(attr, []).append((record.module, fact))
                continue
            owner, _, attr = target.rpartition(".")
            if "." in owner:
                continue
            found = self._target(record, owner)
            if found is not None and found[0] == "module":
                fact = self._object(record, attr, line, expr, how="attribute")
                if fact is not None and fact.kind in STATEFUL:
                    self._attrs.setdefault((found[1].module, attr), fact)


# ----------------------------------------------------------------------------- the cache


class _Store:
    """Each file's scan and summary, kept between runs: by (path, size, mtime), then by content
    hash. A file of the results cache's directory, under its key and link rules (``cache.Cache``:
    a file this user's dupguard did not write is ignored); unreadable means empty."""

    def __init__(self, cache: Cache) -> None:
        self._cache = cache
        self._entries: dict[str, list] = {}
        self._by_hash: dict[str, list] = {}
        self._seen: dict[str, list] = {}
        self._dirty = False
        data = cache.entries()
        self._entries = {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 5 and isinstance(v[2], str)}
        for entry in self._entries.values():
            self._by_hash[entry[2]] = entry

    @staticmethod
    def _decode(entry: list) -> tuple[Scan, dict | None | bool] | None:
        try:
            framework, imports, sets_attr = entry[3]
            if imports is not None and not isinstance(imports, list):
                return None
            # the imports stay JSON lists ([level, module, names]): read as they are, and a
            # malformed one is skipped where it is read (``_graph``)
            scan = Scan(bool(framework), imports, bool(sets_attr))
        except (TypeError, ValueError):
            return None
        summary = entry[4]
        return scan, (summary if isinstance(summary, dict) or summary is None else False)

    def lookup(self, record: _File) -> tuple[Scan, dict | None | bool] | None:
        entry = self._entries.get(record.rel)
        if entry is None or entry[0] != record.size or entry[1] != record.mtime:
            return None
        decoded = self._decode(entry)
        if decoded is not None:
            record.hash = entry[2]
            self._seen[record.rel] = entry
        return decoded

    def by_hash(self, digest: str) -> tuple[Scan, dict | None | bool] | None:
        entry = self._by_hash.get(digest)
        return self._decode(entry) if entry is not None else None

    def note(self, record: _File) -> None:
        if record.scan is None:
            return
        scan = record.scan
        entry = [
            record.size,
            record.mtime,
            record.hash,
            [
                scan.framework,
                None if scan.imports is None else [[lv, m, list(n)] for lv, m, n in scan.imports],
                scan.sets_attr,
            ],
            record.summary,
        ]
        if self._seen.get(record.rel) != entry:
            self._seen[record.rel] = entry
            self._dirty = True

    def save(self) -> None:
        """Keep this tree's entries only (files gone since are dropped); atomic, never fatal."""
        if not self._dirty and len(self._seen) == len(self._entries):
            return
        self._cache.replace(dict(self._seen))
        self._cache.save()
        self._entries = dict(self._seen)
        self._dirty = False


# ----------------------------------------------------------------------------- one run's link

_RELATIVE = re.compile(r"\n[ \t]*from[ \t]+\.")  # on "\n" + text, as the prefilter's pattern
_DIR_TAG = re.compile(r"_dir[0-9a-f]{12}$")  # the name ``ProjectIndex._script_names`` gives a directory


class ProjectLink:
    """What a run (CLI ``check``/``fix``, one flake8 process) asks: the facts for a file. The
    index is built on the first file that may need it (one that imports a project module or
    touches ``app.state``), from the whole tree under the project root (``Settings.root``), not
    only from the files named on the command line: pre-commit names only the changed ones.

    With a cache directory, the answers of a run are kept with a fingerprint of the tree (every
    file's path, size and mtime, as ruff's cache does): a run on an unchanged tree answers from
    them after a ``stat`` of each file, without building the index (bench/RESULTS.md: a
    warm run costs ≤ 5 % of a cold one)."""

    def __init__(
        self,
        settings: Any,
        extra: tuple[str, ...],
        cache: Cache | None,
        version: str,
        tree: list[Path] | None = None,
    ) -> None:
        self.settings = settings
        self.extra = extra
        self.cache = cache  # the run's results cache: the index keeps its files beside it
        self.version = version
        self.tree = tree  # the root's files when the caller has discovered them already
        self.index: ProjectIndex | None = None
        self.root = os.path.abspath(settings.root)
        self._top: frozenset[str] | None = None
        self._top_re: re.Pattern[str] | None = None
        self._fingerprint: str | None = None
        self._snapshot: dict[str, Any] | None = None  # a previous run's answers for this tree
        self._answers: dict[str, Any] = {}  # this run's answers, by path under the root
        self._beside: dict[str, frozenset[str]] = {}  # directory → its module names (``_siblings``)

    def facts_for(self, path: Path | None, text: str, on_disk: bool = True) -> ProjectFacts | None:
        """The facts for ``text``; ``on_disk``: it is the file at ``path`` as it is on disk
        (so a previous run's answer for the same tree holds), not an editor's buffer or stdin."""
        if self.index is not None and not self.index.framework_files:
            return None  # a tree without agent code: no file has facts
        if not self._may_need(text, path):  # the same test before and after the build: no order effects
            return None
        rel = self._rel(path) if on_disk else None
        if self.index is None and rel is not None and self.cache is not None:
            snapshot = self._load_snapshot()
            if snapshot is not None and rel in snapshot:
                answer = snapshot[rel]
                facts = _facts_from_json(answer)
                if facts is not None or answer is None:
                    self._answers[rel] = answer
                    return facts
        if self.index is None:
            self.index = self._build()
        facts = self.index.facts_for(path, text)
        if rel is not None:
            self._answers[rel] = _facts_to_json(facts)
        return facts

    def save(self) -> None:
        if self.index is not None and self.index._store is not None:
            self.index._store.save()
        if self.cache is None or not self._answers:
            return
        if self._fingerprint is None:
            self._load_snapshot()
        previous = self._snapshot or {}
        answers = {**previous, **self._answers}
        if answers == previous:
            return
        store = self.cache.sibling(f"project-answers-{self._tag()}")
        store.replace({"": [self._fingerprint], **{rel: [answer] for rel, answer in answers.items()}})
        store.save()
        self._snapshot = answers

    # ------------------------------------------------------------------ the tree

    def _rel(self, path: Path | None) -> str | None:
        if path is None:
            return None
        absolute = os.path.abspath(path)
        prefix = self.root + os.sep
        return absolute[len(prefix) :].replace(os.sep, "/") if absolute.startswith(prefix) else None

    def _files(self) -> list[Path]:
        if self.tree is None:
            from .discovery import discover

            self.tree = discover([self.root], self.settings._replace(force_exclude=False)).files
        return self.tree

    def _tag(self) -> str:
        import hashlib

        s = self.settings
        # the root too: the projects of a monorepo share the run's cache directory (hierarchy.py),
        # and an entry is found by its path under the root
        what = (
            SUMMARY_FORMAT,
            self.root,
            self.extra,
            tuple(s.src),
            s.extend_stateful_agents,
            s.extend_stateless,
            s.extend_memory_classes,
        )
        return hashlib.blake2b(repr(what).encode(), digest_size=6).hexdigest()

    def _load_snapshot(self) -> dict[str, Any] | None:
        """A previous run's answers, when the tree has not changed since (same files, sizes, mtimes)."""
        if self._fingerprint is None:
            import hashlib

            digest = hashlib.blake2b(digest_size=16)
            for path in sorted(self._files()):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            self._fingerprint = digest.hexdigest()
            assert self.cache is not None
            entries = self.cache.sibling(f"project-answers-{self._tag()}").entries()
            if entries.get("") == [self._fingerprint]:
                self._snapshot = {
                    rel: kept[0] for rel, kept in entries.items() if rel and isinstance(kept, list) and kept
                }
        return self._snapshot

    def _roots(self) -> list[Path]:
        root = Path(self.settings.root)
        return [root / d for d in self.settings.src]

    def _may_need(self, text: str, path: Path | None = None) -> bool:
        """Does the text import a module of the project (or reach ``app.state``), or is it agent
        code (another module may call its functions or run its objects per request)? Text tests
        and a listing of the import roots: the one-file run of an unrelated file stops here."""
        if "import" not in text and ".state." not in text:
            return False
        if ".state." in text or ("from" in text and _RELATIVE.search("\n" + text) is not None):
            return True
        if might_matter(text, self.extra):
            return True  # agent code: another module may call its functions or run its objects per request
        if self._top is None:
            names = set()
            for directory in self._roots():
                try:
                    with os.scandir(directory) as entries:
                        for entry in entries:
                            stem = entry.name.removesuffix(".py")
                            if stem.isidentifier():
                                names.add(stem)
                except OSError:
                    continue
            self._top = frozenset(names)
            self._top_re = _words(self._top)
        heads = {imported.qualified.split(".")[0] for imported in scan_imports(text, "")}
        if self._top_re is not None and self._top_re.search(text) is not None and not heads.isdisjoint(self._top):
            return True
        return not heads.isdisjoint(self._siblings(path))

    def _siblings(self, path: Path | None) -> frozenset[str]:
        """The modules beside ``path`` that it can import by name when it runs as a script (its
        directory is first on ``sys.path``): one listing per directory."""
        if path is None:
            return frozenset()
        directory = os.path.dirname(os.path.abspath(path))
        kept = self._beside.get(directory)
        if kept is None:
            found = set()
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        stem = entry.name.removesuffix(".py")
                        if stem.isidentifier() and (entry.name.endswith(".py") or entry.is_dir()):
                            found.add(stem)
            except OSError:
                pass
            kept = self._beside[directory] = frozenset(found)
        return kept

    def _build(self) -> ProjectIndex:
        index = ProjectIndex(Path(self.root), tuple(self.settings.src), self.extra, self.settings)
        store = _Store(self.cache.sibling(f"project-{self._tag()}")) if self.cache is not None else None
        index.build(self._files(), store)
        return index


def _words(names: frozenset[str]) -> re.Pattern[str] | None:
    """One pattern for "any of these names as a word": one scan of a text instead of one per name."""
    if not names:
        return None
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b")


def _facts_to_json(facts: ProjectFacts | None) -> Any:
    if facts is None:
        return None
    return [facts.package, facts.module, {q: list(f) for q, f in facts.facts.items()}]


def _facts_from_json(data: Any) -> ProjectFacts | None:
    """A kept answer back; None for "no facts" and for anything malformed (then recomputed)."""
    try:
        package, module, raw = data
        facts = {}
        for qualified, fields in raw.items():
            fact = Fact(*fields)
            facts[str(qualified)] = fact._replace(run_methods=tuple(fact.run_methods))
        return ProjectFacts(str(package), str(module), facts)
    except (TypeError, ValueError, AttributeError):
        return None
