"""The hosts agent applications are served by: what each keeps for the whole process (and so
shares between requests, sessions or jobs), what it keeps per request or session, and what it
runs at the same time.

Frameworks say what an *object* keeps (``catalog_data.py``); hosts say how long the *module*
that holds it lives and who reaches it. The two together decide a shared-state finding: a
Strands ``Agent`` at module level is one conversation for every visitor of a FastAPI server,
one conversation per session under Bedrock AgentCore (a microVM per session), and a new object
on every run of a Streamlit page script (the script re-runs top to bottom), while the same
object returned by ``@st.cache_resource`` is shared by every session.

``HOSTS`` is the record, one :class:`Host` per host with the version and the source file or
documentation page that was read (rendered in docs/catalog.md, "Hosts", by
``python tests/test_hosts.py --write-docs``). Which functions become request handlers and
worker tasks on each host is data in ``entrypoints.py``; the analyses at the end of this module
are the facts the rules ask about the file being checked:

- ``streamlit_page``: a Streamlit *page script* (it renders at module level, or runs ``main()``),
  whose module level re-runs per session, versus a helper module the page imports, which is
  imported once per process;
- ``reruns_per_session``: a page script of Streamlit, or a Panel app marked ``.servable()``
  (Panel runs the script once per session);
- ``module_state``: ``"session"`` for a Bedrock AgentCore app, whose whole process belongs to
  one runtime session, ``"process"`` otherwise;
- ``process_cache``: a cached factory whose value every session shares (``functools.cache``,
  ``st.cache_resource`` unless ``scope="session"``, ``pn.cache`` unless ``per_session=True``);
- ``isolated``: code that runs only as an RQ job, in a work horse forked per job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import entrypoints as ep
from .catalog_data import PROCESS_CACHES
from .model import analysis, string_value

if TYPE_CHECKING:
    from .model import Call, Decorator, Function, Model

# A context marker (next to handler/worker): the function runs as an RQ job in a forked work
# horse, so module state it changes dies with the job.
FORKED = "forked-job"


@dataclass(frozen=True)
class Host:
    """What one host does with the modules and objects of the application it serves."""

    name: str
    modules: tuple[str, ...]  # import roots that identify it
    entry: str  # what makes a function run per request / session / job
    shared: str  # what lives for the process: shared by every request, session or job
    per_request: str  # what is created per request, session or job
    concurrency: str  # what runs at the same time
    dupguard: str  # what dupguard concludes
    version: str
    source: str  # the source file or documentation page that was read


HOSTS: tuple[Host, ...] = (
    Host(
        name="Streamlit",
        modules=("streamlit",),
        entry='the page script: its module level and `if __name__ == "__main__":` run on every session\'s every '
        "interaction, with the functions they call",
        shared="every module the page imports (imported once per process); values of `@st.cache_resource` "
        '(default `scope="global"`), wherever the cached function is defined: the cache key is the function\'s '
        "module, qualified name and source, so a cached function nested in `main()` or a closure is one cache",
        per_request="the page script's own module-level objects (a fresh `__main__` module per run); "
        '`st.session_state`; `@st.cache_resource(scope="session")` values',
        concurrency="each session runs its script in its own thread: cached objects are used by several "
        "sessions at once",
        dupguard="module-level agents of a page script are not shared; a cached factory's agent used from page "
        "code or any function it calls is (DUP101/DUP102); a helper module (imports streamlit, renders nothing "
        "at module level) is an ordinary module whose module-level objects every session shares",
        version="streamlit 1.67.0",
        source="streamlit/runtime/scriptrunner/script_runner.py (new `__main__` module per run, a script thread "
        "per session); streamlit/runtime/caching/cache_utils.py `_make_function_key`; "
        "streamlit/runtime/caching/cache_resource_api.py (`scope`)",
    ),
    Host(
        name="Gradio",
        modules=("gradio",),
        entry="`gr.ChatInterface(fn=...)`, `gr.Interface(fn, ...)` and Blocks event listeners "
        "(`.click/.submit/.change(fn, inputs, outputs)`: event registrations, not executor submits)",
        shared="module-level objects and objects the event functions close over: one process serves every visitor",
        per_request="`gr.State` values (the initial value is deep-copied per session)",
        concurrency='each listener has its own queue running one event at a time (`concurrency_limit="default"`, '
        "`default_concurrency_limit` 1); a function bound to two listeners, or `concurrency_limit=None`/N > 1, "
        "runs concurrently",
        dupguard="event functions are request handlers: an agent that keeps history across runs, shared by them, "
        "is reported even when one listener serialises the runs (the next visitor still reads the previous one's "
        "conversation)",
        version="gradio 6.31.0",
        source="gradio/queueing.py `create_event_queue_for_fn`; gradio/blocks.py `queue(default_concurrency_limit=)`; "
        'gradio/chat_interface.py `ChatInterface(fn, concurrency_limit="default")`',
    ),
    Host(
        name="Chainlit",
        modules=("chainlit",),
        entry="`@cl.on_message`, `@cl.on_chat_start`, `@cl.on_chat_resume`, `@cl.action_callback(...)`, the audio "
        "and settings hooks",
        shared="module globals and `functools.cache` factories: one server process for every chat",
        per_request="`cl.user_session` (per chat session)",
        concurrency="one asyncio server: handlers of different sessions interleave at every `await`",
        dupguard="the hooks are request handlers; `@cl.on_app_startup` runs once",
        version="chainlit 2.12.0",
        source="chainlit/callbacks.py (the decorators); docs.chainlit.io/concepts/user-session",
    ),
    Host(
        name="Panel",
        modules=("panel",),
        entry="`pn.chat.ChatInterface(callback=...)`, `widget.on_click(fn)`, `pn.bind(fn, widget)`, "
        "`widget.param.watch(fn, ...)`, `pn.state.onload(fn)`",
        shared="modules the app imports; `pn.cache` values (`per_session=False` by default); with `pn.serve(...)` "
        "from a script, that script's module objects",
        per_request="`panel serve app.py`: the app script runs once per session (`modify_document` builds a new "
        "module per session), so a `.servable()` script's module-level objects are per session",
        concurrency="events of all sessions on one event loop thread unless `--num-threads`/`config.nthreads`",
        dupguard="callbacks are request handlers; a `.servable()` script's module level is not shared (like a "
        "Streamlit page), `pn.cache` factories are",
        version="panel 1.9.4",
        source="panel/io/handlers.py `PanelCodeHandler.modify_document`; panel/io/cache.py `cache(per_session=False)`; "
        "panel/chat/feed.py `callback`; panel/config.py `nthreads`",
    ),
    Host(
        name="AWS Lambda",
        modules=("aws_lambda_powertools", "mangum"),
        entry="a top-level `handler(event, context)` / `lambda_handler(event, context)`",
        shared="module-level (INIT) objects, reused by every invocation the execution environment serves",
        per_request="the handler's locals",
        concurrency="one invocation at a time per execution environment (parallel load gets more environments)",
        dupguard="the handler is a request handler: an agent that keeps history at module level carries one "
        "user's conversation into the next invocation even without concurrency (DUP101)",
        version="AWS Lambda operator guide",
        source="docs.aws.amazon.com/lambda/latest/operatorguide/statelessness-functions.html; "
        "docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html",
    ),
    Host(
        name="Bedrock AgentCore Runtime",
        modules=("bedrock_agentcore",),
        entry="`@app.entrypoint` on a `BedrockAgentCoreApp` (POST /invocations); a custom container that serves "
        "`POST /invocations` and `GET /ping` (the runtime's HTTP contract)",
        shared="nothing across sessions: each runtime session gets its own microVM (compute, memory, filesystem), "
        "terminated when the session ends",
        per_request="the whole process, module state included, belongs to one runtime session (one conversation)",
        concurrency="invocations of one session can overlap: async entrypoints on a worker loop, sync ones in the "
        "thread pool",
        dupguard="module state is per session: DUP101/DUP102 stay quiet for process-wide agents and memories "
        "(both spellings of the host); fan-out and retry rules still apply. The same two paths are SageMaker's "
        "inference-container contract, where one container serves every caller: an agent kept there is missed "
        "(accepted: precision first)",
        version="bedrock-agentcore 1.25.0",
        source="bedrock_agentcore/runtime/app.py (routes `/invocations`, `/ping`; `entrypoint`; `_invoke_handler`); "
        "docs.aws.amazon.com/bedrock-agentcore/latest/devguide/runtime-sessions.html; "
        "…/runtime-http-protocol-contract.html",
    ),
    Host(
        name="Azure Functions",
        modules=("azure.functions",),
        entry="`@app.route(route=...)` on `func.FunctionApp()`/`Blueprint` (handler); `@app.*_trigger(...)` "
        "(worker); v1 `main(req: func.HttpRequest)`",
        shared="module globals of a worker process, used by every invocation it runs",
        per_request="the function's locals",
        concurrency="one instance processes several events at once: `async def` on the worker's event loop, "
        "`def` in a thread pool (`PYTHON_THREADPOOL_THREAD_COUNT`)",
        dupguard="routes are request handlers, triggers worker tasks",
        version="azure-functions 1.26.0",
        source="azure/functions/decorators/function_app.py (`route`, the `*_trigger` decorators); "
        "learn.microsoft.com/azure/azure-functions/functions-concurrency",
    ),
    Host(
        name="Django views and Channels consumers",
        modules=("django", "channels", "rest_framework"),
        entry="`def view(request)` in a file importing django, class-based views, DRF `@api_view` and viewsets; "
        "every method of a Channels consumer",
        shared="module globals and class attributes, per worker process (threaded or async workers)",
        per_request="a Channels consumer instance per connection (`as_asgi` builds `cls(**initkwargs)` per "
        "scope): `self.x` set in `connect()` is per connection",
        concurrency="threaded WSGI/ASGI workers; async consumers on the event loop, sync ones in threads",
        dupguard="views and consumer methods are request handlers; `self` attributes of a consumer are not shared",
        version="channels 4.3.2",
        source="channels/consumer.py `AsyncConsumer.as_asgi`; channels/generic/websocket.py",
    ),
    Host(
        name="Celery",
        modules=("celery",),
        entry="`@app.task`, `@shared_task`, `run()` of a `Task` subclass",
        shared="module globals of a worker process, and the task object itself: the registry instantiates each "
        "task class once per process, so attributes on a Task subclass are process-wide",
        per_request="the task's locals; `self.request`",
        concurrency="prefork: one task at a time per child process; threads/gevent/eventlet pools: several at once",
        dupguard="tasks are worker tasks: a module-level agent that keeps history carries one job's conversation "
        "into the next",
        version="celery 5.3.6 docs",
        source='celery/app/registry.py `TaskRegistry.register` ("automatically instantiated if not already an '
        'instance"); docs.celeryq.dev userguide/tasks.html',
    ),
    Host(
        name="RQ",
        modules=("rq", "django_rq"),
        entry="`queue.enqueue(job, ...)` / `enqueue_call/enqueue_in/enqueue_at`, `@job(queue)`",
        shared="nothing between jobs under the default `Worker`: it forks a work horse per job, which imports the "
        "job's module and exits; `SimpleWorker` runs jobs in the worker process (state is then kept)",
        per_request="the whole work horse process",
        concurrency="one job at a time per worker (a `WorkerPool` runs several workers)",
        dupguard="functions run only as RQ jobs are isolated: their uses of module state are not shared uses; "
        "a file that builds a `SimpleWorker` is treated as in-process",
        version="rq 3.0.0",
        source="rq/worker/worker_classes.py `fork_work_horse` (`os.fork()`), rq/worker/base.py (`os._exit`)",
    ),
    Host(
        name="Dramatiq",
        modules=("dramatiq",),
        entry="`@dramatiq.actor`",
        shared="module globals of a worker process",
        per_request="the actor's locals",
        concurrency="8 worker threads per process by default",
        dupguard="actors are worker tasks",
        version="dramatiq 2.2.1",
        source="dramatiq/worker.py (`worker_threads=8`); dramatiq/actor.py",
    ),
    Host(
        name="arq",
        modules=("arq",),
        entry="`WorkerSettings.functions = [task, func(task, ...)]`, `cron(task, ...)`",
        shared="module globals of the worker process",
        per_request="the job's `ctx` dict and locals",
        concurrency="up to `max_jobs` (10) jobs at once as asyncio tasks in one process",
        dupguard="the functions are worker tasks",
        version="arq 0.28.0",
        source="arq/worker.py (`func`, `max_jobs`); arq/cron.py",
    ),
    Host(
        name="WebSocket servers",
        modules=("websockets",),
        entry="`websockets.serve(handler, host, port)`; `@app.websocket(...)` routes of FastAPI/Starlette",
        shared="module globals: one server process for every connection",
        per_request="the handler's locals for the life of one connection",
        concurrency="one handler call per connection, all on one event loop",
        dupguard="the handler is a request handler (per connection)",
        version="websockets 14",
        source="websockets/asyncio/server.py `serve(handler, ...)`",
    ),
    Host(
        name="Discord bots",
        modules=("discord",),
        entry="`@bot.event`, `@bot.command(...)`, `@bot.hybrid_command(...)`, `@bot.listen(...)` on a "
        "`commands.Bot`/`discord.Client` built in the file",
        shared="module globals and objects the handlers use: one bot process answers every user and channel",
        per_request="the handler's locals (`ctx`, `message`)",
        concurrency="every event is dispatched as its own asyncio task: handlers of different users interleave at "
        "every `await`; `bot.listen` inside a handler adds one more listener per run (kept in `extra_events`)",
        dupguard="the handlers are request handlers",
        version="discord.py 2.0+ (Rapptz/discord.py 0019b713)",
        source="discord/client.py `Client.dispatch`/`_schedule_event` (a task per event); discord/ext/commands/bot.py "
        "`BotBase.listen`, `add_listener` (`extra_events`), `process_commands`",
    ),
    Host(
        name="MCP servers",
        modules=("mcp", "fastmcp"),
        entry="`@mcp.tool()/resource()/prompt()` on `FastMCP`/`MCPServer`; `@server.call_tool()` on the low-level "
        "`Server`",
        shared="module globals and objects the tools close over: one server for every client",
        per_request="the MCP session's `Context` state (FastMCP 3); per-user `UserSession` (FastMCP 4)",
        concurrency="async tools of different clients interleave on the server's event loop",
        dupguard="tools, resources and prompts are request handlers",
        version="mcp 1.x / fastmcp 3",
        source="mcp/server/fastmcp/server.py `FastMCP.tool`; mcp/server/lowlevel/server.py `Server.call_tool`; "
        "gofastmcp.com/servers/context",
    ),
    Host(
        name="A2A servers",
        modules=("a2a",),
        entry="`execute()` of an `AgentExecutor` subclass",
        shared="the one executor `DefaultRequestHandler` holds, and module globals",
        per_request="the `RequestContext` (task id, context id) of each message",
        concurrency="each message/send runs `agent_executor.execute` in its own asyncio task: executions of "
        "different clients overlap on one executor",
        dupguard="`execute` is a request handler",
        version="a2a-python 03ba6d9",
        source="src/a2a/server/request_handlers/default_request_handler.py",
    ),
)


# ---------------------------------------------------------------------- facts about one file

_STREAMLIT_NOT_RENDERING = frozenset(
    {
        "streamlit.cache_resource",
        "streamlit.cache_data",
        "streamlit.cache",
        "streamlit.experimental_singleton",
        "streamlit.experimental_memo",
        "streamlit.secrets.get",
    }
)


@analysis
def streamlit_page(model: Model) -> bool:
    """Is this file a Streamlit page script (rather than a module a page imports)?

    A page renders: it calls Streamlit at module level (``st.title``, ``st.chat_input``…), calls
    one of its own functions there (``main()``), or has an ``if __name__ == "__main__":`` block
    (Streamlit runs the page as ``__main__``). A module that only defines functions and objects
    for pages to import runs once per process."""
    if not model.is_streamlit:
        return False
    for call in model.calls:
        if call.function is not None:
            continue
        if call.in_main:
            return True
        callee = call.callee or ""
        if callee.startswith("streamlit.") and callee not in _STREAMLIT_NOT_RENDERING and not call.outer:
            return True
        if not callee and call.func and "." not in call.func and model.function_named(call.func) is not None:
            return True
    return False


@analysis
def _servable(model: Model) -> bool:
    """A Panel app script served by ``panel serve``: something in it is marked ``.servable()``."""
    return any(call.method == "servable" for call in model.calls) and any(
        q.split(".")[0] == "panel" for q in model.imports.values()
    )


def reruns_per_session(model: Model) -> bool:
    """Does the host run this file's module level again for every session (so its module-level
    objects are not shared)? A Streamlit page script or a ``.servable()`` Panel script."""
    return streamlit_page(model) or _servable(model)


@analysis
def module_state(model: Model) -> str:
    """``"session"`` when the process serving this file belongs to one session (Bedrock
    AgentCore: ``BedrockAgentCoreApp``, or a custom container serving the runtime contract
    ``POST /invocations`` + ``GET /ping``); ``"process"`` otherwise."""
    if any(b.value_call is not None and b.value_call.callee in ep.AGENTCORE_APPS for b in model.bindings):
        return "session"
    paths = set()
    for fn in model.functions:
        for dec in fn.decorators:
            call = dec.call
            if call is None or not call.args or not dec.dotted:
                continue
            path = string_value(call.args[0].node)
            method = dec.dotted.rpartition(".")[2]
            if isinstance(path, str):
                paths.add((method, path.rstrip("/")))
    if ("post", "/invocations") in paths and ("get", "/ping") in paths:
        return "session"
    return "process"


_SCOPED_CACHES = {
    # decorator → (keyword, value) that makes its cache per session (hosts: Streamlit, Panel)
    "streamlit.cache_resource": ("scope", "session"),
    "panel.cache": ("per_session", "True"),
    "panel.io.cache.cache": ("per_session", "True"),
}
HOST_PROCESS_CACHES = frozenset({"panel.cache", "panel.io.cache.cache"})


def process_cache(dec: Decorator) -> bool:
    """Is ``dec`` a cache whose value the whole process shares (and not one scoped to a session:
    ``@st.cache_resource(scope="session")``, ``@pn.cache(per_session=True)``)?"""
    callee = dec.callee or ""
    if callee not in PROCESS_CACHES and callee not in HOST_PROCESS_CACHES:
        return False
    scoped = _SCOPED_CACHES.get(callee)
    if scoped is None or dec.call is None:
        return True
    arg = dec.call.kw(scoped[0])
    if arg is None:
        return True
    value = string_value(arg.node)
    text = value if isinstance(value, str) else getattr(arg.node, "value", None)
    return text != scoped[1]


def isolated(model: Model, fn: Function | None) -> bool:
    """Does ``fn`` run only as an RQ job in a forked work horse (its module state dies with the
    job), never from a request handler?"""
    if fn is None:
        return False
    contexts = model.contexts_of(fn)
    return FORKED in contexts and ep.HANDLER not in contexts


@analysis
def _event_host(model: Model) -> str | None:
    """The host whose event listeners the file may register (the first of
    entrypoints.HOST_EVENT_REGISTRATIONS it imports): once per file, not once per call."""
    tops = {q.split(".")[0] for q in model.imports.values()}
    return next((h for h in ep.HOST_EVENT_REGISTRATIONS if h in tops), None)


def host_event_registration(model: Model, call: Call) -> bool:
    """``box.submit(respond, [box, chat], [chat])``: a Gradio event listener registering a
    function (entrypoints.HOST_EVENT_REGISTRATIONS), not ``executor.submit(fn, *args)``. The
    receiver is a component the file builds from gradio (``gr.Textbox(...)``, also chained), or
    the call names the listener's ``inputs``/``outputs``."""
    host = _event_host(model)
    if host is None or call.method not in ep.HOST_EVENT_REGISTRATIONS[host] or not call.receiver:
        return False
    if call.kw("inputs") is not None or call.kw("outputs") is not None:
        return True
    receiver = call.receiver
    if receiver.endswith("()"):
        return (model.resolve(receiver[:-2]) or "").split(".")[0] == host
    if "." in receiver or "[" in receiver or "(" in receiver:
        return False
    binding = model.local_binding(receiver, call.function)
    callee = binding.value_call.callee if binding is not None and binding.value_call is not None else None
    return (callee or "").split(".")[0] == host
