"""The words the analyses read in names: how code that runs agents, executes tools, guards a
run or registers a handler is usually *named*, when no import says what an object is.

Why a vocabulary at all: most tool executors, idempotency checks and seen-id sets are the
project's own code (``execute_tool_call``, ``already_processed``, ``seen_call_ids``), which no
catalog can list. Names are the only evidence, so each list is kept here, once, with where it
comes from and which rules read it; a word added here changes every rule that reads the list.
Qualified names of framework callables (``functools.lru_cache``, ``asyncio.gather``) are not
words: they are framework facts and live in ``catalog_data.py``.

Where a list says "the corpus", it means the labelled files under ``tests/corpus/`` and the
rule fixtures under ``rules/*/`` (bench/precision.py measures the rules on them): the words were
collected from those files and from the frameworks' own docs, and every change is checked
against them.
"""

from __future__ import annotations

import re

from ..runtime.similarity import DANGEROUS_STEMS

# ----------------------------------------------------------------------------- agents


# Receiver names that say "agent" (``agent``, ``support_agents``, ``assistant``, ``crew``): an
# unresolved receiver counts as an agent only when its last name matches this and the method
# is one of DISTINCTIVE_RUN_METHODS (runs.agent_run; DUP501/502/504/505, DUP303/401).
AGENT_NAME_RE = re.compile(r"(agent|assistant|crew|swarm)s?$|^(agent|assistant|crew)", re.IGNORECASE)
# Run methods that only agent frameworks use (LlamaIndex chat/achat, AutoGen initiate_chat and
# generate_reply, CrewAI kickoff, LangChain invoke, Strands invoke_async, the SDKs' run /
# run_sync / run_stream): the union of the catalog's run methods that a plain object rarely has.
DISTINCTIVE_RUN_METHODS = frozenset(
    {
        "chat",
        "achat",
        "stream_chat",
        "astream_chat",
        "run",
        "arun",
        "run_sync",
        "invoke",
        "ainvoke",
        "initiate_chat",
        "a_initiate_chat",
        "kickoff",
        "kickoff_async",
        "akickoff",
        "invoke_async",
        "run_stream",
        "generate_reply",
        "a_generate_reply",
    }
)
# A project function whose name says it runs an agent turn (``run_support_agent``,
# ``ask_crew``), called but defined elsewhere (the project's agent module): an agent run.
AGENT_HELPER_RE = re.compile(
    r"^_*a?(run|invoke|execute|call|kickoff|start|ask|chat_with)_(\w+_)?(agent|crew|assistant)s?(_\w+)?$"
)
# Top-level packages whose objects are not agents even when the variable is called ``agent``:
# HTTP clients (``agent = httpx.Client()``), SSH/Docker/cloud SDK clients, user-agent helpers,
# the raw LLM SDKs (a model call, not an agent turn) and dupguard's own runtime wrappers (whose
# runs are guarded by construction).
NON_AGENT_ROOTS = frozenset(
    {
        "httpx",
        "requests",
        "aiohttp",
        "urllib3",
        "docker",
        "paramiko",
        "subprocess",
        "boto3",
        "fake_useragent",
        "dupguard",
        "openai",
        "anthropic",
        "litellm",
        "ollama",
        "mistralai",
    }
)

# ----------------------------------------------------------------------------- tool executions


# A function named like a tool executor (``execute_tool_call``, ``run_tools``,
# ``process_tool_calls``, ``handle_function_call``, ``dispatch_tool_batch``): DUP501/502/505.
TOOL_EXEC_RE = re.compile(
    r"^_*a?(?:execute|exec|run|call|invoke|dispatch|process|handle|perform|apply)_"
    r"(?:(?:the|one|single|each|all|pending|parallel)_)?"
    r"(?:tool|tools|tool_call|tool_calls|tool_use|tool_uses|function_call|function_calls)"
    r"(?:_once|_async|_sync|_batch)?$"
)
# Of those, the ones that execute a whole batch (their argument is the payload, DUP502).
BATCH_EXEC_RE = re.compile(r"(tools|calls|uses|batch)(_once|_async|_sync|_batch)?$")
# A generic executor name (``execute``, ``run_one``, ``handle_tool``) that executes a tool when
# it is fed the loop variable of a loop over a response's tool calls (DUP502/505).
GENERIC_EXEC_RE = re.compile(
    r"^_*a?(execute|exec|run|call|invoke|dispatch|handle|process|perform)"
    r"(_(one|single|each|call|it|tool\w*|function\w*))?$"
)
# Iterables that hold a response's tool calls (``msg.tool_calls``, ``response.tool_uses``,
# ``function_calls``): OpenAI, Anthropic and Gemini response fields.
TOOL_CALLS_ITERABLE_RE = re.compile(r"tool_?calls?|tool_?uses?|function_?calls?", re.IGNORECASE)
# Words in the name of a table that maps tool names to callables: ``TOOLS[name](**args)``,
# ``available_functions[name]`` (OpenAI's function-calling guide), ``HANDLERS``, ``registry``.
DISPATCH_WORDS = ("tool", "function", "func", "handler", "dispatch", "registry", "available", "action", "impl")
# Methods that run a tool object: LangChain ``invoke``/``ainvoke``/``run``, LlamaIndex
# ``call``/``acall``, smolagents ``forward``/``__call__``, AutoGen ``run_json``, MCP ``call_tool``.
TOOL_OBJECT_METHODS = frozenset(
    {
        "call",
        "acall",
        "invoke",
        "ainvoke",
        "run",
        "arun",
        "execute",
        "aexecute",
        "forward",
        "__call__",
        "run_json",
        "call_tool",
    }
)
# Callees fed a tool call's name and arguments that do not execute it: containers, loggers,
# serialisers and builtins (``results.append(call.function.name, ...)``, ``log.info(...)``).
NOT_EXECUTIONS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "add",
        "update",
        "put",
        "get",
        "set",
        "setdefault",
        "pop",
        "info",
        "debug",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "print",
        "dumps",
        "loads",
        "format",
        "emit",
        "isinstance",
        "str",
        "repr",
        "dict",
        "len",
        "json",
    }
)
# Verbs of calls that look at a tool call without executing it (``log_tool_call``,
# ``validate_call``, ``render_call``, ``on_tool_start``, ``make_tool_message``).
NOT_EXECUTION_RE = re.compile(
    r"^_*(log|record|trace|track|emit|validate|check|verify|parse|format|render|serialize|to_|display|show|"
    r"print|debug|notify|audit|describe|summari[sz]e|count|measure|observe|report|append|add|store|save|cache|"
    r"start_span|span|metric|stat|event|on_|callback|hook|publish|broadcast|stream_|yield_|make_|build_|create_)",
    re.IGNORECASE,
)

# ----------------------------------------------------------------------------- callbacks (DUP403)


# A callback executes tool calls when a function it calls is named <verb>_..._<noun>
# (``call_tool``, ``execute_tool_call``, ``maybe_process_tools``, ``dispatch_function``): the
# verbs, the prefixes skipped before the verb, and the nouns.
EXEC_VERBS = ("call", "run", "execute", "exec", "dispatch", "invoke", "process", "handle", "perform", "apply")
SKIP_WORDS = ("maybe", "a", "async", "do", "try", "safe", "safely")
TOOL_EXECUTOR_NOUNS = ("tool", "tools", "function", "functions", "action", "actions")
# Words that turn "handle_tool_…" into bookkeeping: ``handle_tool_error``, ``process_tool_output``,
# ``call_tool_logger``, ``process_tool_call_chunk`` (accumulates, does not run).
NOT_EXECUTING = frozenset(
    {
        "error",
        "errors",
        "result",
        "results",
        "output",
        "outputs",
        "log",
        "logs",
        "logger",
        "metric",
        "metrics",
        "display",
        "render",
        "trace",
        "traces",
        "event",
        "events",
        "schema",
        "schemas",
        "spec",
        "specs",
        "ui",
        "status",
        "chunk",
        "chunks",
        "delta",
        "deltas",
        "start",
        "end",
        "message",
        "messages",
    }
)
# A bare dispatch verb executes a tool when its first argument is the tool call's name.
BARE_VERBS = ("dispatch", "execute", "invoke", "call", "run", "run_tool", "handle")
# Keys and attributes that hold a tool call's name (OpenAI ``function.name``, Anthropic
# ``block["name"]``, the SDKs' ``tool_name``).
NAME_KEYS = ("name", "tool_name", "function_name")
# Callback names of incremental (streaming) events and of final events, and the catch-all event
# hooks: LangChain ``on_llm_new_token``/``on_llm_end``, OpenAI Assistants ``on_tool_call_delta``/
# ``on_tool_call_done``/``on_event``, Anthropic's stream helpers.
STREAM_WORDS = ("delta", "token", "chunk", "partial", "stream", "progress", "created", "start")
FINAL_WORDS = ("end", "complete", "completed", "done", "final", "finish", "finished", "stop", "result", "response")
CATCH_ALL = frozenset(
    {"on_event", "on_any_event", "on_stream_event", "on_message_event", "on_raw_event", "handle_event"}
)

# ----------------------------------------------------------------------------- guards (guards.py)


# Names of sets/dicts that remember what already ran: ``if call.id in seen_call_ids: continue``
# (DUP501/502/505, in the container of an ``in`` test) and ``if tc.id in self.dispatched:``
# (DUP403, in any name of the test). One list for both: the two rule families once kept a list
# each (the first without "dispatched"/"ran", the second without "completed", "finished",
# "ledger", "results", "cache"); the union changes no outcome on the rule fixtures or the corpus.
# Words are matched as substrings of the lowercased name.
SEEN_WORDS = (
    "seen",
    "done",
    "processed",
    "executed",
    "handled",
    "completed",
    "finished",
    "ledger",
    "results",
    "cache",
    "dispatched",
    "ran",
)
# Words in the test of an early exit that checks an idempotency key (``if record.processed:
# return``, ``if already_handled(key)``, ``if is_duplicate(event)``, Django ``claimed``).
IDEMPOTENCY_WORDS = ("processed", "already", "seen", "duplicate", "dedup", "idempot", "handled", "claimed")
# Calls that check or record an idempotency key, matched on the callee's last name
# (``already_processed(key)``, ``was_handled``, ``dedupe(...)``, ``claim(job)``).
GUARD_CALL_RE = re.compile(
    r"(already|is|was|been|has)_?(been_)?(processed|handled|done|seen|executed|run|completed|applied|delivered)"
    r"|^_*(seen|dedup|dedupe|deduplicate|is_duplicate|check_duplicate|idempot|claim|should_skip|skip_if)",
    re.IGNORECASE,
)
# Context managers and decorators that make a body run once per key (``with turn_lease(...)``,
# ``with ledger.begin(...)``, ``@idempotent``, ``@run_once``, dupguard.runtime's ``TurnToolGuard``).
ONCE_WORDS = ("lease", "idempot", "ledger", "dedup", "once", "turn_guard", "exactly")
# Words in an ``if`` test that mark a register-once flag (``if not _tracing_installed:``,
# ``if getattr(app.state, "hooks_registered", False)``): DUP303/401.
FLAG_WORDS = (
    "registered",
    "installed",
    "initialized",
    "initialised",
    "configured",
    "attached",
    "hooked",
    "_setup",
    "setup_done",
    "_done",
    "already",
    "once",
    "seen",
)
# Context managers that serialise the runs of a shared object (``with lock:``,
# ``async with semaphore:``, ``with rate_limiter:``): DUP101/102/201/202.
LOCK_WORDS = ("lock", "semaphore", "mutex", "limiter")
# Methods whose context manager holds a guard (``async with guard.hold():``, dupguard.runtime's
# ``InvocationGuard.hold``/``ahold``, ``pool.use()``, ``sem.acquire()``).
GUARD_METHODS = frozenset({"hold", "ahold", "use", "ause", "acquire"})
# Decorators that serialise a function (``@guarded``, ``@synchronized``, ``@serialized``).
GUARD_DECORATOR_WORDS = ("guarded", "synchronized", "serialized")

# ----------------------------------------------------------------------------- registrations


# Method prefixes and methods that undo a registration (``remove_handler``, ``unregister_hook``,
# LangChain ``set_handlers([])``); ``agent.reset()``, which clears chat history, is not one.
REMOVE_PREFIXES = ("remove", "unregister", "deregister", "discard")
REMOVE_METHODS = frozenset({"set_handlers", "clear_handlers", "reset_handlers", "clear_hooks", "clear_callbacks"})
# Keyword arguments that carry the handler, per registration style (LangChain ``handler=``,
# AG2 ``reply_func=``, Strands ``callback=``, OpenAI Agents ``processor=``, pydantic-ai ``tool=``).
HANDLER_KWARGS = (
    "handler",
    "hook",
    "reply_func",
    "callback",
    "f",
    "func",
    "function",
    "processor",
    "filter",
    "tool",
    "event_handler",
    "span_handler",
)
# ``autogen.register_function(f, caller=a, executor=b)`` registers on the agents it is given.
TARGET_KWARGS = ("caller", "executor", "agent")
# Libraries with registration methods of the same names (add_handler, add_callback…) whose
# registrations have nothing to do with agent tool calls (python-telegram-bot, tornado's IOLoop,
# logging, GUI toolkits): their top-level packages.
OTHER_LIBRARIES = frozenset(
    {
        "telegram",
        "aiogram",
        "discord",
        "slack_bolt",
        "tornado",
        "asyncio",
        "logging",
        "signal",
        "atexit",
        "tkinter",
        "PyQt5",
        "PyQt6",
        "PySide2",
        "PySide6",
        "kivy",
        "pygame",
        "watchdog",
    }
)

# ----------------------------------------------------------------------------- tool lists (DUP301-303)


# Methods that grow a list in place (``x += y`` is recorded as ``__iadd__``).
LIST_MUTATORS = frozenset({"append", "extend", "insert", "__iadd__"})
# Keyword arguments that take an agent's tool list when the catalog does not say
# (``tools=`` everywhere, OpenAI's legacy ``functions=``).
DEFAULT_TOOLS_KWARGS = ("tools", "functions")
# Keyword arguments whose value is a tool list, for naming a list "tools" (adds LangChain's
# ``toolkits=``).
TOOL_LIST_KWARGS = ("tools", "functions", "toolkits")
# Keyword arguments that take the function a tool wraps (LlamaIndex ``fn=``, LangChain
# ``func=``/``coroutine=``, Strands ``function=``).
FUNCTION_KWARGS = ("fn", "func", "function", "f", "coroutine")
# Name words of a tool list (``TOOLS``, ``base_tools``, ``toolkit``) and the words that make a
# list about tools without being the tools themselves (``tool_calls``, ``tool_results``).
TOOL_LIST_WORDS = frozenset({"tool", "tools", "toolkit", "toolkits", "toolset", "toolsets", "toolbox"})
NOT_TOOLS = frozenset(
    {
        "call",
        "calls",
        "result",
        "results",
        "output",
        "outputs",
        "guardrail",
        "guardrails",
        "name",
        "names",
        "id",
        "ids",
        "message",
        "messages",
        "history",
        "event",
        "events",
        "log",
        "logs",
        "usage",
        "choice",
        "choices",
        "error",
        "errors",
        "count",
        "counts",
    }
)
# Base-class words of classes that copy or declare class-level defaults per instance (pydantic
# ``BaseModel``, ``TypedDict``, ``NamedTuple``, msgspec ``Struct``, marshmallow ``Schema``):
# ``tools: list = []`` there is not one list shared by every instance.
PER_INSTANCE_BASE_WORDS = ("BaseModel", "pydantic", "TypedDict", "NamedTuple", "Struct", "Schema")

# ----------------------------------------------------------------------------- retries and loops (DUP501/505)


# Loop targets of a retry loop (``for attempt in range(3)``, ``for retry in ...``, ``for _ in``).
RETRY_TARGET_WORDS = ("attempt", "retry", "retries", "tries", "try_", "trial")
# Keyword arguments that make a retry decorator try only once (tenacity, backoff ``max_tries``,
# stamina ``attempts``, retrying ``stop_max_attempt_number``, retry ``tries``), with that value.
SINGLE_ATTEMPT = {
    "max_tries": 1,
    "attempts": 1,
    "stop_max_attempt_number": 1,
    "tries": 1,
    "max_attempts": 1,
    "max_retries": 0,
    "retries": 0,
}
# The project's own retry decorators (``@async_retry(max_retries=5)``, ``@with_retries``), by
# name, and the names that say the opposite (``@no_retry``, ``@without_retries``).
RETRY_NAME_RE = re.compile(r"retry|retries|retrying|backoff", re.IGNORECASE)
NOT_RETRY_RE = re.compile(r"^_*(no|without|skip|disable)_?retr", re.IGNORECASE)
# Top-level packages of libraries (not the project) whose decorators may mention retries
# without retrying the function (celery's ``autoretry_for``) or are matched by qualified name.
LIBRARY_ROOTS = frozenset(
    {
        "celery",
        "dramatiq",
        "rq",
        "huey",
        "tenacity",
        "backoff",
        "stamina",
        "retrying",
        "retry",
        "urllib3",
        "requests",
        "httpx",
        "aiohttp",
        "google",
        "botocore",
        "boto3",
        "openai",
        "anthropic",
        "langchain",
        "langchain_core",
        "llama_index",
        "autogen",
        "strands",
        "agents",
        "pydantic_ai",
    }
)
# Methods that read the next message of a conversation (websockets ``receive_text``,
# Starlette ``receive_json``, ZeroMQ ``recv_json``, streams ``readline``): a loop that calls one
# answers a new message each round (a REPL or chat loop), not a retry or a tool loop.
INPUT_METHODS = frozenset(
    {
        "receive",
        "receive_text",
        "receive_json",
        "receive_bytes",
        "recv",
        "recv_json",
        "readline",
        "read_message",
        "get_message",
        "next_message",
        "wait_for_message",
    }
)
# Name words of a counter, a limit or a deadline in a loop test (``steps < MAX_STEPS``,
# ``turn == max_turns``, ``time.monotonic() < deadline``): a bounded tool loop (DUP505).
CAP_WORDS = ("max", "limit", "cap", "budget", "step", "turn", "round", "iter", "count", "attempt", "deadline", "hop")

# ----------------------------------------------------------------------------- fan-out (DUP201-203)


# Methods that start a task (asyncio ``loop.create_task``/``ensure_future``, anyio
# ``start_soon``, trio/gevent ``spawn``) or run work on a pool (concurrent.futures ``submit``/
# ``map``, ``run_in_executor``, multiprocessing ``apply_async``/``imap``/``starmap``), when the
# receiver is not resolved; and the pool methods that run their callable many times by design.
ASYNC_SPAWN_METHODS = frozenset({"create_task", "start_soon", "ensure_future", "spawn"})
THREAD_METHODS = frozenset({"submit", "map", "run_in_executor", "apply_async", "imap", "imap_unordered", "starmap"})
INHERENTLY_MANY = frozenset({"map", "imap", "imap_unordered", "starmap"})
# Class names (last component) of tool-result messages: LangChain ``ToolMessage`` and
# ``FunctionMessage``, Anthropic ``ToolResultBlockParam``, AutoGen ``FunctionExecutionResult``.
TOOL_MESSAGE_CLASSES = ("ToolMessage", "FunctionMessage", "ToolResultBlockParam", "FunctionExecutionResult")

# ----------------------------------------------------------------------------- tool effects (DUP507, DUP204)


# Stems of DANGEROUS_STEMS that as often name a read or a thing: ``run_query``, ``execute_sql``
# (a SELECT as often as not), ``get_order``'s "order", ``book_search``, ``block_info``, ``ban``,
# and the calculator's ``add``.
AMBIGUOUS_STEMS = frozenset({"run", "execut", "order", "book", "lock", "block", "ban", "unlock", "add"})
# Verbs that set a state: running them again with the same arguments changes nothing more.
OVERWRITE_STEMS = frozenset(
    {
        "delet",
        "remov",
        "drop",
        "destroy",
        "purg",
        "wip",
        "eras",
        "truncat",
        "deactivat",
        "disabl",
        "enabl",
        "suspend",
        "kill",
        "terminat",
        "cancel",
        "revok",
        "approv",
        "reject",
        "deny",
        "overwrit",
        "replac",
        "reset",
        "updat",
        "modif",
        "edit",
        "chang",
        "writ",
        "archiv",
        "unarchiv",
        "restor",
        "migrat",
        "deploy",
        "rollback",
        "revert",
        "merg",
        "unpublish",
        "shutdown",
        "restart",
        "reboot",
        "grant",
        "put",
        "patch",
        "sav",
        "set",
        "upsert",
        "mov",
        "renam",
        "clos",
        "assign",
        "unsubscrib",
        "confirm",
        "mark",
    }
)
# Storage verbs that set a state when their object is a place (``save_profile``, ``write_file``)
# but make something new when it is a thing each call adds: ``save_email_draft`` appends a new
# draft (an IMAP APPEND) on every run. Taught by Inventora-Digital/crewai-gmail-automation@
# e79fe56c77 src/gmail_crew_ai/tools/gmail_tools.py:264 (SaveDraftTool, bench/real-apps/labels-d.toml).
STORING_STEMS = frozenset({"sav", "writ"})
# Things each call of a storing verb adds rather than sets (the stems of ``runtime.similarity``).
ADDED_THINGS = frozenset({"draft", "messag", "email", "mail", "comment", "note", "post", "ticket", "repli", "reply"})
# Verbs whose every run makes something new (an HTTP POST, a message, money moved, a booking),
# beyond the runtime's list.
MORE_WRITE_STEMS = frozenset(
    {
        "post",
        "submit",
        "upload",
        "commit",
        "push",
        "tweet",
        "reply",
        "repli",
        "invit",
        "schedul",
        "purchas",
        "place",
        "enrol",
        "enroll",
        "register",
        "subscrib",
        "sms",
        "trad",
        "withdraw",
        "deposit",
        "escalat",
        "apply",
        "appli",
        "reserv",
        "comment",
        "append",
        # a tool named by the notification it sends (``SlackNotificationTool``, ``push_notification``):
        # the runtime's stemmer gives "notific" (bench/real-apps/labels-e.toml,
        # Inventora-Digital/crewai-gmail-automation src/gmail_crew_ai/crew.py:102)
        "notific",
    }
)
WRITE_STEMS = ((DANGEROUS_STEMS - AMBIGUOUS_STEMS) | MORE_WRITE_STEMS) - OVERWRITE_STEMS
READ_STEMS = frozenset(
    {
        "get",
        "fetch",
        "search",
        "find",
        "lookup",
        "look",
        "list",
        "read",
        "query",
        "queri",
        "retriev",
        "check",
        "calculat",
        "calcul",
        "comput",
        "summariz",
        "summar",
        "analyz",
        "analys",
        "brows",
        "scrap",
        "crawl",
        "count",
        "describ",
        "explain",
        "translat",
        "compar",
        "validat",
        "view",
        "show",
        "load",
        "inspect",
        "estimat",
        "forecast",
        "recommend",
        "answer",
        "rank",
        "classify",
        "classifi",
        "extract",
        "pars",
        "convert",
        "format",
        "verify",
        "verifi",
        "resolv",
        "grep",
        "detect",
        "predict",
        "evaluat",
        "score",
        "plan",
        "think",
        "reason",
        "render",
        "preview",
        "download",
        # the same reads named by their noun (``Image Analysis Tool``, ``retrieval_tool``): the
        # stems the runtime's stemmer gives the nouns (bench/real-apps/labels-c.toml,
        # bstraehle/ai-ml-dl hugging-face/gaia/crew.py: analysis tools that upload their input)
        "analysi",
        "retrieval",
        "extraction",
        "transcription",
        "classific",
        "transl",
        "recognition",
        "detection",
        "summary",
        "evalu",
    }
)
# Dotted call suffixes that ask a model (Gemini ``models.generate_content``, OpenAI chat
# completions and responses, Anthropic messages): a tool that asks one about a file it uploaded
# has staged its input, not written anything (semantic.effects ``_stages_model_input``).
MODEL_CALL_SUFFIXES = (
    "generate_content",
    "chat.completions.create",
    "responses.create",
    "messages.create",
)
# Tokens that say nothing about the effect (``refund_tool``, ``aget_weather``, ``do_send``).
NOISE = frozenset({"tool", "tools", "fn", "func", "function", "async", "a", "do", "try", "safe", "my", "the", "impl"})
# Calls in a tool's body that make something new, whatever the tool is called: an HTTP POST, a
# message sent (``put``/``patch``/``delete`` set a state; a ``commit`` says nothing of what).
BODY_WRITE_METHODS = frozenset({"post", "send", "sendmail", "send_message", "send_email", "insert_one"})
# Calls in a body whose name says "write" without saying what (a transaction's ``commit``, a
# log line): not evidence about the tool.
BODY_NOISE = frozenset({"commit", "flush", "log", "append", "add", "register", "apply", "place", "push"})
# Keyword arguments and header names that carry an idempotency key with a write (a tool that
# sends one is safe to repeat).
IDEMPOTENCY_KEYWORDS = ("idempotency_key", "idempotencykey", "idempotence_key", "dedupe_key", "dedup_key")
IDEMPOTENCY_HEADER = re.compile(r"idempoten(cy|ce)[-_]?key", re.IGNORECASE)

# ----------------------------------------------------------------------------- per-turn ids (DUP506)


# First words of a function that only records (``log_action``, ``audit_tool_call``) and logger
# methods (stdlib ``logging``, structlog keyword events): an idempotency key handed to one names
# the log row or line, it guards nothing (DUP506).
RECORD_ONLY_VERBS = frozenset({"log", "audit"})
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "msg"})
# Names of per-turn ids, compared lowercased without underscores: OpenAI ``tool_call_id`` and
# the Responses API's ``call_id``, Anthropic/Bedrock ``tool_use_id``/``toolUseId``, Gemini/ADK
# ``function_call_id`` and ``invocation_id``, the Responses API's ``response_id``.
PER_TURN_NAMES = frozenset({"toolcallid", "callid", "tooluseid", "functioncallid", "invocationid", "responseid"})
# Objects whose ``.id`` / ``["id"]`` is a per-turn id: a tool call (``tool_call``, ``tc``,
# ``call``, ``function_call``, ``fc``), an Anthropic ``tool_use`` block, a model response.
ID_HOLDERS = frozenset(
    {"toolcall", "tc", "call", "tooluse", "functioncall", "fc", "fncall", "response", "resp", "completion"}
)
# Keyword arguments that carry a key deciding whether work runs (SQS ``MessageDeduplicationId``
# included), compared lowercased without underscores.
KEY_KEYWORDS = frozenset(
    {
        "idempotencykey",
        "idempotencekey",
        "dedupekey",
        "dedupkey",
        "dedupeid",
        "dedupid",
        "deduplicationid",
        "messagededuplicationid",
        "lockkey",
        "lockname",
        "lockid",
    }
)
# Atomic claims of a key in a store (Redis ``SETNX``/``HSETNX``/``SADD``, membership reads).
CLAIM_METHODS = frozenset({"setnx", "hsetnx", "sadd", "sismember", "set_if_absent", "add_if_absent"})
# Callables that take a lock's name (``redis.lock(name)``, ``get_lock(key)``, ``FileLock(path)``)
# and the values of a lock table (``locks.setdefault(key, asyncio.Lock())``).
LOCK_NAME_RE = re.compile(r"(^|_)lock(s|_|$)|Lock$|^lock", re.IGNORECASE)

# ----------------------------------------------------------------------------- a tool called again in its except (DUP508)


# Exceptions raised before a tool's body runs: argument validation (pydantic, JSON), a call
# that does not fit the signature. A handler that catches only these retries a call that never
# started.
BEFORE_THE_BODY = frozenset({"ValidationError", "JSONDecodeError", "TypeError", "ArgumentError", "ToolInputError"})
# Decorators that register a function as a tool (last name), for tools without a catalog entry.
TOOL_DECORATORS = frozenset({"tool", "function_tool", "tool_plain", "kernel_function", "register_tool"})
# Methods that run a tool object beyond those runs.tool_execution knows (a CrewAI/LangChain
# tool's wrapped ``func``, LangChain's ``_run``).
MORE_TOOL_METHODS = frozenset({"func", "coroutine", "_run", "_arun"})
