"""Framework knowledge as data.

The rules never name a framework class. They ask the catalog what a callable builds (a
stateful agent, a memory, a stateless client, a tool…) and which methods run it. Every
entry records the framework version and the source file that justifies it, because the same
syntax is a bug with one framework version and fine with another (legacy LlamaIndex
``ReActAgent.from_tools(...).achat()`` keeps chat state; the workflow ``ReActAgent`` does not).
Users extend the catalog from ``[tool.dupguard]`` (``extend-stateful-agents`` and friends).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum


class Kind(str, Enum):
    """What a constructor or factory call produces, as far as duplicate tool calls go."""

    AGENT = "agent"  # keeps conversation / tool-call state between runs: unsafe to share
    MEMORY = "memory"  # chat memory, message history, session, workflow Context
    STATELESS = "stateless"  # safe to share by design (LLM clients, config-only agents, graphs)
    TOOL = "tool"  # a tool object (its name matters for DUP301/DUP302)
    CALLBACKS = "callbacks"  # a callback manager / hook registry (DUP401/DUP402)


@dataclass(frozen=True)
class Entry:
    """One framework callable and what calling it produces.

    ``names`` lists every public dotted path the callable is importable as (re-exports
    included), so that import resolution finds it whatever path the user wrote. A name may
    end in a factory classmethod, e.g. ``llama_index.core.agent.ReActAgent.from_tools``.
    """

    names: tuple[str, ...]
    kind: Kind
    framework: str
    version: str  # the version whose source was read, e.g. "llama-index-core 0.14.8"
    source: str  # the file (path inside the installed package) that justifies the entry
    why: str  # one sentence: what state it keeps, or why it is safe to share
    # methods that run one agent turn / mutate the memory (e.g. ("chat", "achat"));
    # "__call__" means calling the object itself (Strands ``agent("...")``)
    run_methods: tuple[str, ...] = ()
    # a STATELESS entry becomes AGENT when constructed with any of these keyword arguments
    # (LangChain ``AgentExecutor(memory=...)``)
    stateful_if_kwargs: tuple[str, ...] = ()
    # keyword arguments of a run method that carry state between runs; passing a shared
    # object there makes the use stateful (LlamaIndex workflow agents' ``ctx=``, ``memory=``)
    state_kwargs: tuple[str, ...] = ()
    # for tools: the keyword (or positional index as a string) that sets the tool's name
    name_kwargs: tuple[str, ...] = ()
    # keyword arguments of an agent constructor that take the tool list
    tools_kwargs: tuple[str, ...] = ()
    # keyword arguments that key a conversation (DUP103): thread_id, session_id, chat_store_key…
    session_kwargs: tuple[str, ...] = ()
    # containers (qualified constructor names) that, built with this object among their arguments
    # (a list element included), run it and keep each run's state on it: a module-level object
    # handed to such a container built per request is shared run state even when the object is
    # stateless on its own (CrewAI: a crew's run re-targets each member agent's one executor)
    member_of: tuple[str, ...] = ()
    # keyword arguments of the run methods that are named like a session key (model.SESSION_KEYS)
    # but key no conversation: the run passes them on as per-call data (Strands
    # ``agent(prompt, session_id=...)`` puts unknown keywords into that call's invocation_state),
    # so a constant there shares nothing (DUP103 stays quiet)
    unkeyed_run_kwargs: tuple[str, ...] = ()
    # for a memory keyed by ``session_kwargs``: the arguments that give it a store other objects
    # can share (LlamaIndex ``chat_store=``, OpenAI Agents ``SQLiteSession``'s ``db_path``).
    # Constructed without any of them, the memory's store is its own (a fresh in-memory one), so
    # a constant key names nothing another request can reach (DUP103 stays quiet)
    store_kwargs: tuple[str, ...] = ()
    # the argument (keyword, or positional index) that looks a conversation's history up by
    # session id (LangChain ``get_session_history``): a getter that ignores the id and returns
    # one module-level memory makes every session share that memory (DUP102)
    history_getters: tuple[str, ...] = ()
    # for toolkits (kind TOOL): the instance caches one user's credentials, client or data the
    # first time a tool runs, so one module-level instance serves every user with the first
    # user's account (DUP105). ("*",) always; otherwise the constructor keywords that pin it
    # to one user (agno ``Mem0Tools(user_id=...)``)
    user_state_kwargs: tuple[str, ...] = ()
    # for agents whose run method starts by clearing the state the object keeps (smolagents
    # ``run(task, stream=False, reset=True)``: ``self.memory.reset()`` first): the run keywords
    # as ("reset", "stream"): the keyword that keeps the old state when False, and the one that
    # makes the run return a generator instead of running to the end. A complete, resetting run
    # called synchronously inside an ``async def`` holds the event loop until it returns, so no
    # other run of the object overlaps it and none inherits its state (DUP101 stays quiet)
    resetting_run: tuple[str, ...] = ()


@dataclass(frozen=True)
class Registration:
    """A method that registers a callback/handler/tool on a long-lived target (DUP401/402)."""

    method: str  # attribute name, e.g. "add_handler"
    framework: str
    version: str
    source: str
    why: str
    # dotted receiver hints; empty means "any receiver" (the method name is distinctive)
    receivers: tuple[str, ...] = ()
    # frameworks whose implementation skips a handler object it already holds, so only a
    # *new* instance per call accumulates there (DUP402 is then harmless for the same object)
    dedupes_same_object_in: tuple[str, ...] = ()


@dataclass(frozen=True)
class RetrySetting:
    """A framework's own retry setting, and what one retry repeats (DUP507).

    Frameworks retry at very different depths under similar names: CrewAI's
    ``Agent(max_retry_limit=...)`` re-enters the whole task, tools included, while pydantic-ai's
    ``Agent(retries=...)`` only lets the model correct a tool's arguments and an OpenAI client's
    ``max_retries`` repeats one HTTP request. Only the first kind runs a tool's side effect
    again, so each setting records what it repeats, read in the framework's source.
    """

    names: tuple[str, ...]  # the callables that take the setting (or, with ``method``, define it)
    keywords: tuple[str, ...]  # the keyword(s) that set it; empty: constructing the object opts in
    reruns: str  # what one retry repeats: "tools" | "runnable" | "model" | "validation" | "http"
    default: int  # the framework's default number of retries
    framework: str
    version: str
    source: str
    why: str
    # what one retry does, as a clause for messages ("re-runs the whole task, tools included")
    summary: str
    # a method called on any object of the framework (``Runnable.with_retry``) rather than a
    # constructor keyword; the retried object is the method's receiver
    method: str = ""
    # keywords without which the setting does nothing (CrewAI's task retries need a guardrail)
    requires: tuple[str, ...] = ()
    # the retries happen at the default when the keyword is not written (CrewAI agents retry
    # twice unless told otherwise; building a ``ToolRetryMiddleware`` is itself the setting)
    by_default: bool = False
    # keywords that hold the tools the retry re-runs (besides the object's own ``tools``)
    tools_kwargs: tuple[str, ...] = ("tools",)


RERUNS_TOOLS = ("tools", "runnable")


# Methods assumed to run a user-declared agent or mutate a user-declared memory.
USER_RUN_METHODS = (
    "__call__",
    "chat",
    "achat",
    "stream_chat",
    "astream_chat",
    "run",
    "arun",
    "run_sync",
    "invoke",
    "ainvoke",
    "stream",
    "astream",
    "invoke_async",
    "stream_async",
    "initiate_chat",
    "a_initiate_chat",
    "generate_reply",
    "a_generate_reply",
    "kickoff",
    "kickoff_async",
    "query",
    "aquery",
    "put",
    "aput",
    "add_message",
    "add_messages",
    "aadd_messages",
)


@dataclass
class Catalog:
    """Lookup tables built once from the entries (and the user's config extensions)."""

    by_name: dict[str, Entry] = field(default_factory=dict)
    registrations: dict[str, Registration] = field(default_factory=dict)

    @classmethod
    def build(cls, entries: Iterable[Entry], registrations: Iterable[Registration] = ()) -> Catalog:
        cat = cls()
        for entry in entries:
            for name in entry.names:
                cat.by_name[name] = entry
        for reg in registrations:
            cat.registrations[reg.method] = reg
        return cat

    def extended(
        self, *, stateful: Iterable[str] = (), stateless: Iterable[str] = (), memory: Iterable[str] = ()
    ) -> Catalog:
        """A copy with the user's ``extend-*`` entries; user entries win over built-in ones."""
        cat = Catalog(dict(self.by_name), dict(self.registrations))
        for kind, names in ((Kind.AGENT, stateful), (Kind.STATELESS, stateless), (Kind.MEMORY, memory)):
            for name in names:
                cat.by_name[name] = Entry(
                    names=(name,),
                    kind=kind,
                    framework="user configuration",
                    version="",
                    source="[tool.dupguard]",
                    why="declared in the project's configuration",
                    run_methods=USER_RUN_METHODS if kind is not Kind.STATELESS else (),
                )
        return cat

    def lookup(self, qualname: str) -> Entry | None:
        return self.by_name.get(qualname)
