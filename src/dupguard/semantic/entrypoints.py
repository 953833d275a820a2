"""Where code runs: the decorators and registrations that make a function a request
handler, a worker task or a startup hook, per web and task framework.

Kept as data so that a new framework is a new row, not new rule code. Users add handler
decorators with ``extend-handler-decorators``. Names are matched on the resolved qualified
name of the decorator when it is imported (``celery.shared_task``), and on the method name
when the decorator is an attribute of an application object the file creates
(``@app.post``, ``@router.get``, ``@bp.route``, ``@celery_app.task``).
"""

from __future__ import annotations

HANDLER = "handler"
WORKER = "worker"
STARTUP = "startup"
SCRIPT = "script"

# Objects whose construction in the file makes ``@<obj>.<method>`` a route decorator.
APP_CLASSES = {
    "fastapi.FastAPI",
    "fastapi.APIRouter",
    "fastapi.routing.APIRouter",
    "starlette.applications.Starlette",
    "starlette.routing.Router",
    "flask.Flask",
    "flask.Blueprint",
    "quart.Quart",
    "quart.Blueprint",
    "sanic.Sanic",
    "sanic.Blueprint",
    "aiohttp.web.RouteTableDef",
    "litestar.Router",
    "django.urls.path",
    "ninja.NinjaAPI",
    "ninja.Router",
    "slack_bolt.App",
    "slack_bolt.async_app.AsyncApp",
    "flask_socketio.SocketIO",
    "fastapi_socketio.SocketManager",
    "socketio.AsyncServer",
    "socketio.Server",
    "chalice.Chalice",
    "functions_framework",
    # MCP servers: one process serves every client, and ``@mcp.tool``/``@mcp.resource``/
    # ``@mcp.prompt`` functions run once per client call, concurrently on the event loop
    # (bench/real-apps/hosts-notes.md, "MCP servers"). FastMCP is ``mcp.server.fastmcp.FastMCP``
    # in mcp 1.x and the standalone ``fastmcp`` package; mcp 2.1.1 renamed it
    # ``mcp.server.mcpserver.MCPServer`` (mcp/server/fastmcp.py says so; ``tool()`` is in
    # mcp/server/mcpserver/server.py).
    "mcp.server.fastmcp.FastMCP",
    "mcp.server.fastmcp.server.FastMCP",
    "mcp.server.FastMCP",
    "mcp.server.mcpserver.MCPServer",
    "mcp.server.MCPServer",
    "fastmcp.FastMCP",
}
ROUTE_METHODS = {
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "options",
    "route",
    "api_route",
    "websocket",
    "websocket_route",
    "view",
    "message",
    "event",
    "on",
    "command",
    "action",
    "shortcut",
    "lambda_function",
    "tool",  # MCP servers (only on the APP_CLASSES above)
    "resource",
    "prompt",
}
# Objects whose construction makes ``@<obj>.<method>`` a worker task.
WORKER_APP_CLASSES = {"celery.Celery", "dramatiq", "huey.RedisHuey", "huey.SqliteHuey", "huey.Huey", "rq.Queue"}
WORKER_METHODS = {"task", "actor", "periodic_task", "job"}
STARTUP_METHODS = {"on_event", "before_serving", "before_first_request", "listener", "on_startup", "startup"}

# Decorators that make a handler / worker / startup hook by their qualified name.
HANDLER_DECORATORS = {
    "litestar.get",
    "litestar.post",
    "litestar.put",
    "litestar.patch",
    "litestar.delete",
    "litestar.route",
    "litestar.websocket",
    "litestar.handlers.get",
    "litestar.handlers.post",
    "chainlit.on_message",
    "chainlit.on_chat_start",
    "chainlit.on_audio_chunk",
    "functions_framework.http",
    "functions_framework.cloud_event",
    "azure.functions.FunctionApp.route",
    "django.views.decorators.http.require_POST",
    "django.views.decorators.http.require_GET",
    "django.views.decorators.http.require_http_methods",
    "django.views.decorators.csrf.csrf_exempt",
    "rest_framework.decorators.api_view",
    "modal.web_endpoint",
    "modal.fastapi_endpoint",
    "modal.asgi_app",
}
WORKER_DECORATORS = {
    "celery.shared_task",
    "celery.task",
    "dramatiq.actor",
    "ray.remote",
    "rq.decorators.job",
    "rq.job",
    "huey.contrib.djhuey.task",
    "huey.contrib.djhuey.db_task",
    "modal.function",
    "prefect.task",
    "prefect.flow",
    "temporalio.activity.defn",
}

# Base classes whose methods handle requests or tasks.
HANDLER_BASES = {
    "django.views.View",
    "django.views.generic.View",
    "rest_framework.views.APIView",
    "starlette.endpoints.HTTPEndpoint",
    "starlette.endpoints.WebSocketEndpoint",
    "flask.views.MethodView",
    "flask.views.View",
    "tornado.web.RequestHandler",
    "channels.generic.websocket.AsyncWebsocketConsumer",
    "channels.generic.websocket.WebsocketConsumer",
    "aiohttp.web.View",
    # A2A: ``DefaultRequestHandler`` holds one executor for the server and awaits
    # ``agent_executor.execute(request, queue)`` in a new task per message/send, so executions
    # of different clients overlap on it (a2a-python
    # src/a2a/server/request_handlers/default_request_handler.py; bench/real-apps/hosts-notes.md)
    "a2a.server.agent_execution.AgentExecutor",
    "a2a.server.agent_execution.agent_executor.AgentExecutor",
}
WORKER_BASES = {"celery.Task", "celery.app.task.Task"}
HANDLER_METHOD_NAMES = {
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "receive",
    "connect",
    "websocket_receive",
    "dispatch",
    "execute",  # A2A AgentExecutor.execute
}

# Calls that register a function given by reference as a handler: (qualified or method name, argument).
HANDLER_REGISTRATIONS = {
    "add_url_rule": "view_func",
    "add_api_route": 1,
    "add_route": 1,
    "add_get": 1,
    "add_post": 1,
    "add_put": 1,
    "add_delete": 1,
    "add_api_websocket_route": 1,
    "starlette.routing.Route": 1,
    "starlette.routing.WebSocketRoute": 1,
    "starlette.routing.Mount": None,
    "django.urls.path": 1,
    "django.urls.re_path": 1,
    "gradio.ChatInterface": 0,
    "gradio.Interface": 0,
}
# Server objects that hold the object given to them for the life of the process and call it for
# every request (qualified name → the argument that takes it: keyword, or positional index).
# a2a-python ``DefaultRequestHandler.__init__(agent_executor, task_store, ...)`` keeps
# ``self.agent_executor`` and awaits ``self.agent_executor.execute(...)`` in a new task per
# message/send (src/a2a/server/request_handlers/default_request_handler.py, commit
# 03ba6d965ca2d91b671b29c138fcc9260d2dd0c5; bench/real-apps/hosts-notes.md, "A2A servers").
LONG_LIVED_HOLDERS = {
    "a2a.server.request_handlers.DefaultRequestHandler": ("agent_executor", 0),
    "a2a.server.request_handlers.default_request_handler.DefaultRequestHandler": ("agent_executor", 0),
}
# UI hosts that keep the *agent* given to them and run that one object for every visitor
# (qualified name → (keyword, positional index, the keyword that makes each run start afresh)).
# smolagents ``GradioUI.__init__(agent, ...)`` keeps ``self.agent``; ``interact_with_agent`` puts
# that same object in every browser session's state and runs it with
# ``reset_agent_memory=False`` unless the UI was built with ``reset_agent_memory=True``
# (src/smolagents/gradio_ui.py at commits 0403b2b706435e0ab60946075037807372cf4d59 and
# 41490ae891ce4c17d9a633d66dbdc23c1b0911ef): every visitor continues one agent memory
# (huggingface/smolagents#703). With the reset each run starts from an empty memory, so one
# visitor's conversation no longer reaches the next; two runs can still overlap when one visitor
# presses Enter while another clicks Submit (two listeners, bench/real-apps/hosts-notes.md
# "Gradio"), which is left alone: the report is about the memory every visitor inherits.
AGENT_HOSTS = {
    "smolagents.GradioUI": ("agent", 0, "reset_agent_memory"),
    "smolagents.gradio_ui.GradioUI": ("agent", 0, "reset_agent_memory"),
}
# Functions that run the agent given to them (qualified name → (keyword, positional index)):
# smolagents ``stream_to_gradio(agent, task, task_images=None, reset_agent_memory=False, ...)``
# iterates ``agent.run(task, stream=True, reset=reset_agent_memory)`` (src/smolagents/gradio_ui.py
# at commit 0403b2b706435e0ab60946075037807372cf4d59): a call of it runs that agent, a streamed
# run that by default continues the agent's memory.
AGENT_RUNNERS = {
    "smolagents.stream_to_gradio": ("agent", 0),
    "smolagents.gradio_ui.stream_to_gradio": ("agent", 0),
}

# Event listeners that register a function given by reference as a handler, by host: only in
# a file that imports the host (the method names are common words). Gradio runs every event
# function of every visitor in one process; each listener has its own queue (one at a time
# by default), and a function bound to two listeners (``textbox.submit(fn)`` and
# ``button.click(fn)``) runs twice at once (gradio.app/guides/queuing; the listener methods
# and their ``fn`` first parameter: gradio 5 docs, "Blocks and Event Listeners";
# bench/real-apps/hosts-notes.md, "Gradio").
HOST_EVENT_REGISTRATIONS = {
    "gradio": {
        method: 0
        for method in (
            "click",
            "submit",
            "change",
            "input",
            "select",
            "upload",
            "release",
            "blur",
            "focus",
            "load",
            "then",
            "success",
            "like",
            "retry",
            "undo",
            "stream",
            "tick",
        )
    }
}
WORKER_REGISTRATIONS = {"enqueue": 0, "enqueue_call": "func", "enqueue_in": 1, "enqueue_at": 1, "enqueue_job": 0}
STARTUP_KWARGS = {"lifespan", "on_startup"}

# serverless entry points: module-level functions with these parameter lists
SERVERLESS_SIGNATURES = {("event", "context"), ("event", "_context"), ("event", "ctx")}
SERVERLESS_NAMES = {"handler", "lambda_handler", "main", "handle", "function_handler"}


# ============================================================================================
# Hosts of real agent applications (issue 14, class 2). What each host shares and what runs at
# once, with the version and the source checked, is ``hosts.py`` (rendered in docs/catalog.md,
# "Hosts"); the rows below only say which functions become request handlers, worker tasks or
# startup hooks there. ``contexts.py`` reads them in ``_host_contexts``.
# ============================================================================================

# ``@<obj>.<method>`` where ``obj = Cls(...)`` is built in the file: class → method → context.
HOST_APP_DECORATORS: dict[str, dict[str, str]] = {}
_AZURE_WORKER_TRIGGERS = (
    "queue_trigger",
    "service_bus_queue_trigger",
    "service_bus_topic_trigger",
    "event_hub_message_trigger",
    "event_grid_trigger",
    "blob_trigger",
    "cosmos_db_trigger",
    "cosmos_db_trigger_v3",
    "kafka_trigger",
    "timer_trigger",
    "schedule",
    "activity_trigger",
    "orchestration_trigger",
    "entity_trigger",
    "sql_trigger",
    "generic_trigger",
)
# Azure Functions (azure-functions 1.26.0, azure/functions/decorators/function_app.py:
# FunctionApp/Blueprint.route and the *_trigger decorators; mcp_tool_trigger serves MCP tools).
for _cls in ("azure.functions.FunctionApp", "azure.functions.Blueprint", "azure.functions.decorators.FunctionApp"):
    HOST_APP_DECORATORS[_cls] = {
        "route": HANDLER,
        "mcp_tool_trigger": HANDLER,
        "mcp_tool": HANDLER,
        **{trigger: WORKER for trigger in _AZURE_WORKER_TRIGGERS},
    }
# Bedrock AgentCore (bedrock-agentcore 1.25.0, bedrock_agentcore/runtime/app.py:
# BedrockAgentCoreApp.entrypoint registers the POST /invocations handler; websocket the /ws one).
AGENTCORE_APPS = (
    "bedrock_agentcore.BedrockAgentCoreApp",
    "bedrock_agentcore.runtime.BedrockAgentCoreApp",
    "bedrock_agentcore.runtime.app.BedrockAgentCoreApp",
)
for _cls in AGENTCORE_APPS:
    HOST_APP_DECORATORS[_cls] = {"entrypoint": HANDLER, "websocket": HANDLER}
# The low-level MCP server (mcp 1.x ``mcp.server.lowlevel.Server``): ``@server.call_tool()``
# handles every client's tool calls on one object.
for _cls in ("mcp.server.lowlevel.Server", "mcp.server.lowlevel.server.Server", "mcp.server.Server"):
    HOST_APP_DECORATORS[_cls] = {m: HANDLER for m in ("call_tool", "read_resource", "get_prompt")}
# Discord bots (discord.py 2.x: discord/client.py ``Client.dispatch`` schedules every event
# handler as its own task; discord/ext/commands/bot.py ``BotBase.listen``/``add_listener`` append
# to ``extra_events``, ``command`` registers a command that ``process_commands`` invokes per
# message): one bot process serves every user, the handlers of different users interleave.
DISCORD_BOTS = (
    "discord.Client",
    "discord.client.Client",
    "discord.AutoShardedClient",
    "discord.Bot",
    "discord.ext.commands.Bot",
    "discord.ext.commands.bot.Bot",
    "discord.ext.commands.AutoShardedBot",
)
for _cls in DISCORD_BOTS:
    HOST_APP_DECORATORS[_cls] = {m: HANDLER for m in ("event", "command", "hybrid_command", "listen", "slash_command")}
del _cls

# Decorators by qualified name (Chainlit 2.12.0, chainlit/callbacks.py: every per-session and
# per-message hook; on_app_startup runs once).
HOST_HANDLER_DECORATORS = {
    "chainlit.on_chat_resume",
    "chainlit.on_chat_end",
    "chainlit.on_stop",
    "chainlit.on_audio_start",
    "chainlit.on_audio_end",
    "chainlit.on_settings_update",
    "chainlit.on_window_message",
    "chainlit.on_mcp_connect",
    "chainlit.on_feedback",
    "chainlit.action_callback",
}
HOST_STARTUP_DECORATORS = {"chainlit.on_app_startup"}

# Calls that hand a function to a host by reference: (qualified callee) → (argument, context).
HOST_REGISTRATIONS: dict[str, tuple[int | str, str]] = {
    # websockets 13+/14 (websockets/asyncio/server.py ``serve(handler, host, port)``): one
    # handler call per connection, all on one event loop
    "websockets.serve": (0, HANDLER),
    "websockets.asyncio.server.serve": (0, HANDLER),
    "websockets.server.serve": (0, HANDLER),
    "websockets.legacy.server.serve": (0, HANDLER),
    "websockets.sync.server.serve": (0, HANDLER),
    # Panel 1.9.4 (panel/chat/feed.py ``callback`` param): the chat callback runs per message
    "panel.chat.ChatInterface": ("callback", HANDLER),
    "panel.chat.ChatFeed": ("callback", HANDLER),
    "panel.chat.feed.ChatFeed": ("callback", HANDLER),
    "panel.chat.interface.ChatInterface": ("callback", HANDLER),
    # arq 0.28 (arq/worker.py ``func(coroutine, ...)``, arq/cron.py ``cron(coroutine, ...)``)
    "arq.func": (0, WORKER),
    "arq.worker.func": (0, WORKER),
    "arq.cron": (0, WORKER),
    "arq.cron.cron": (0, WORKER),
}
# Method-name registrations that count only in a file importing the host (see
# HOST_EVENT_REGISTRATIONS): Panel widgets' ``on_click(fn)``, ``pn.bind(fn, widget)``,
# ``widget.param.watch(fn, "value")``, ``pn.state.onload(fn)`` (panel 1.9.4 widgets/button.py,
# depends.py, io/state.py).
HOST_METHOD_REGISTRATIONS: dict[str, dict[str, int]] = {
    "panel": {"on_click": 0, "bind": 0, "watch": 0, "onload": 0, "add_periodic_callback": 0},
}

# Base classes every method of which runs per connection or request (not only the HTTP verbs):
# Channels 4.3.2 (channels/consumer.py, channels/generic/websocket.py) builds one consumer
# instance per connection (``as_asgi``: ``cls(**initkwargs)`` per scope) and dispatches
# ``{"type": "chat.message"}`` events to ``chat_message``; DRF viewsets route list/create/…
HOST_HANDLER_BASES_ALL_METHODS = {
    "channels.consumer.AsyncConsumer",
    "channels.consumer.SyncConsumer",
    "channels.generic.websocket.WebsocketConsumer",
    "channels.generic.websocket.AsyncWebsocketConsumer",
    "channels.generic.websocket.JsonWebsocketConsumer",
    "channels.generic.websocket.AsyncJsonWebsocketConsumer",
    "rest_framework.viewsets.ViewSet",
    "rest_framework.viewsets.GenericViewSet",
    "rest_framework.viewsets.ModelViewSet",
    "rest_framework.viewsets.ReadOnlyModelViewSet",
    "rest_framework.generics.GenericAPIView",
}

# RQ (rq 3.0.0, rq/worker/worker_classes.py ``fork_work_horse``: ``os.fork()`` per job, the
# child imports the job's module and ``os._exit``s): under the default Worker a job's module
# state dies with its work horse. Functions registered through these run in a fork.
FORKED_JOB_DECORATORS = {"rq.decorators.job", "rq.job"}
FORKED_JOB_MODULES = ("rq", "django_rq")
# ``SimpleWorker`` runs jobs in the worker process itself: the fork no longer isolates them.
IN_PROCESS_RQ_WORKERS = {"rq.SimpleWorker", "rq.worker.SimpleWorker", "rq.worker.worker_classes.SimpleWorker"}
# Azure Functions' v1 model (a ``main(req: func.HttpRequest)`` per function folder, bound by
# function.json): the parameter's annotation says what triggers it (azure-functions 1.26.0,
# azure/functions/__init__.py exports these types).
HOST_PARAM_ANNOTATIONS = {
    "azure.functions.HttpRequest": HANDLER,
    "azure.functions.QueueMessage": WORKER,
    "azure.functions.ServiceBusMessage": WORKER,
    "azure.functions.EventHubEvent": WORKER,
    "azure.functions.EventGridEvent": WORKER,
    "azure.functions.InputStream": WORKER,
    "azure.functions.TimerRequest": WORKER,
}
