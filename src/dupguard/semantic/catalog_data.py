"""The framework facts dupguard's rules rely on, one :class:`Entry` per callable.

Every entry was checked against the installed framework: the dotted ``names`` were resolved
with ``importlib`` in a scratch venv holding exactly the ``version`` given, and ``why`` cites
what the ``source`` file does (which attribute keeps the conversation, or where the run state
is created per call). ``docs/catalog.md`` lists the install commands and the same facts as
tables. Names that mean different classes in different versions are called out in ``why``
(LlamaIndex ``llama_index.core.agent.ReActAgent`` is the legacy ``AgentRunner`` up to 0.12 and
the stateless workflow agent from 0.13 on; ``autogen.AssistantAgent`` is AG2's, not AgentChat's).

Precision first: an entry is ``AGENT`` or ``MEMORY`` only when the source shows state that
survives a run on the object itself; shared-by-design stores keyed by a session id
(checkpointers, chat stores, session services) are ``STATELESS`` with ``session_kwargs`` so that
DUP103 can check the key instead.
"""

from __future__ import annotations

from dupguard.semantic.catalog import Entry, Kind, Registration, RetrySetting

# the prefilter's module list, kept in its own module so the prefilter need not import this one
from dupguard.semantic.framework_modules import FRAMEWORK_MODULES  # noqa: F401

AGENT, MEMORY, STATELESS, TOOL, CALLBACKS = (
    Kind.AGENT,
    Kind.MEMORY,
    Kind.STATELESS,
    Kind.TOOL,
    Kind.CALLBACKS,
)

# --------------------------------------------------------------------------------------------
# LlamaIndex. Newest: llama-index-core 0.14.25 (+ llama-index-workflows 2.26.1). Legacy
# AgentRunner-era API: llama-index-core 0.12.52.post1 + llama-index-agent-openai 0.4.12, the last
# releases that still ship it (0.13 removed AgentRunner, FunctionCallingAgent, from_tools).
# --------------------------------------------------------------------------------------------
_LI = "llama-index-core 0.14.25"
_LI_WF = "llama-index-core 0.14.25 / llama-index-workflows 2.26.1"
_LI_OLD = "llama-index-core 0.12.52.post1"
_LI_OAI = "llama-index-agent-openai 0.4.12 (with llama-index-core 0.12.52.post1)"
_LI_LEGACY_RUN = (
    "chat",
    "achat",
    "stream_chat",
    "astream_chat",
    "query",
    "aquery",
    "create_task",
    "run_step",
    "arun_step",
    "stream_step",
    "astream_step",
)
_CHAT_ENGINE_RUN = ("chat", "achat", "stream_chat", "astream_chat")
_LI_WF_RUN = ("run",)

_LLAMA_INDEX = (
    Entry(
        names=(
            "llama_index.core.agent.AgentRunner",
            "llama_index.core.agent.AgentRunner.from_llm",
            "llama_index.core.agent.runner.base.AgentRunner",
            "llama_index.core.agent.runner.base.AgentRunner.from_llm",
            "llama_index.core.agent.StructuredPlannerAgent",
            "llama_index.core.agent.runner.planner.StructuredPlannerAgent",
            "llama_index.core.agent.ParallelAgentRunner",
            "llama_index.core.agent.runner.parallel.ParallelAgentRunner",
        ),
        kind=AGENT,
        framework="llama_index",
        version=_LI_OLD + " (removed in 0.13)",
        source="llama_index/core/agent/runner/base.py",
        why="AgentRunner.__init__ sets self.memory (ChatMemoryBuffer by default) and self.state "
        "(AgentState task dict); chat()/achat() put every turn into self.memory.",
        run_methods=_LI_LEGACY_RUN,
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "llama_index.core.agent.ReActAgent",
            "llama_index.core.agent.ReActAgent.from_tools",
            "llama_index.core.agent.react.ReActAgent",
            "llama_index.core.agent.react.ReActAgent.from_tools",
            "llama_index.core.agent.react.base.ReActAgent",
            "llama_index.core.agent.react.base.ReActAgent.from_tools",
        ),
        kind=AGENT,
        framework="llama_index",
        version=_LI_OLD + " (bare path re-pointed to the workflow agent in 0.13)",
        source="llama_index/core/agent/react/base.py",
        why="legacy ReActAgent subclasses AgentRunner: from_tools() builds memory_cls "
        "(ChatMemoryBuffer) and the runner keeps it as self.memory across chat()/achat() calls; "
        "from 0.13 the bare path llama_index.core.agent.ReActAgent is the workflow agent, which "
        "has only run() (not a run method here), so it stays clean.",
        run_methods=_LI_LEGACY_RUN,
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "llama_index.core.agent.workflow.ReActAgent",
            "llama_index.core.agent.workflow.react_agent.ReActAgent",
        ),
        kind=STATELESS,
        framework="llama_index",
        version=_LI_WF,
        source="llama_index/core/agent/workflow/base_agent.py",
        why="workflow agent: run() builds Context(self) per call when no ctx is given and "
        "_init_context stores the memory in ctx.store, so nothing survives on the agent (the bare "
        "llama_index.core.agent.ReActAgent is listed with the legacy entry: see there).",
        run_methods=_LI_WF_RUN,
        state_kwargs=("ctx", "memory"),
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "llama_index.core.agent.FunctionCallingAgent",
            "llama_index.core.agent.FunctionCallingAgent.from_tools",
            "llama_index.core.agent.function_calling.base.FunctionCallingAgent",
            "llama_index.core.agent.function_calling.base.FunctionCallingAgent.from_tools",
        ),
        kind=AGENT,
        framework="llama_index",
        version=_LI_OLD + " (removed in 0.13)",
        source="llama_index/core/agent/function_calling/base.py",
        why="FunctionCallingAgent subclasses AgentRunner; from_tools() creates a ChatMemoryBuffer "
        "kept as self.memory and appended to on every chat()/achat().",
        run_methods=_LI_LEGACY_RUN,
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "llama_index.agent.openai.OpenAIAgent",
            "llama_index.agent.openai.OpenAIAgent.from_tools",
            "llama_index.agent.openai.base.OpenAIAgent",
            "llama_index.agent.openai.base.OpenAIAgent.from_tools",
        ),
        kind=AGENT,
        framework="llama_index",
        version=_LI_OAI,
        source="llama_index/agent/openai/base.py",
        why="OpenAIAgent subclasses AgentRunner: from_tools() builds a ChatMemoryBuffer that the "
        "runner keeps as self.memory and extends on every chat()/achat().",
        run_methods=_LI_LEGACY_RUN,
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "llama_index.agent.openai.OpenAIAssistantAgent",
            "llama_index.agent.openai.OpenAIAssistantAgent.from_new",
            "llama_index.agent.openai.OpenAIAssistantAgent.from_existing",
            "llama_index.agent.openai.openai_assistant_agent.OpenAIAssistantAgent",
        ),
        kind=AGENT,
        framework="llama_index",
        version=_LI_OAI,
        source="llama_index/agent/openai/openai_assistant_agent.py",
        why="__init__ creates one OpenAI thread and keeps self._thread_id: every chat() on the "
        "same object posts to that one server-side conversation.",
        run_methods=("chat", "achat", "stream_chat", "astream_chat", "query", "aquery"),
        tools_kwargs=("tools",),
        session_kwargs=("thread_id",),
    ),
    Entry(
        names=(
            "llama_index.core.agent.FunctionAgent",
            "llama_index.core.agent.workflow.FunctionAgent",
            "llama_index.core.agent.workflow.function_agent.FunctionAgent",
        ),
        kind=STATELESS,
        framework="llama_index",
        version=_LI_WF,
        source="llama_index/core/agent/workflow/base_agent.py",
        why="pydantic config (name, tools, llm, system_prompt); run() creates a fresh Context "
        "per call (workflows/workflow.py: ctx = ctx if ctx is not None else Context(self)) and "
        "the memory lives in ctx.store, so only a shared ctx= or memory= carries state "
        "(measured: two concurrent runs given one memory= each saw the other's message).",
        run_methods=_LI_WF_RUN,
        state_kwargs=("ctx", "memory"),
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "llama_index.core.agent.CodeActAgent",
            "llama_index.core.agent.workflow.CodeActAgent",
            "llama_index.core.agent.workflow.codeact_agent.CodeActAgent",
        ),
        kind=STATELESS,
        framework="llama_index",
        version=_LI_WF,
        source="llama_index/core/agent/workflow/codeact_agent.py",
        why="BaseWorkflowAgent subclass: run() makes a Context per call and keeps memory in "
        "ctx.store; the code_execute_fn's own globals are the user's responsibility.",
        run_methods=_LI_WF_RUN,
        state_kwargs=("ctx", "memory"),
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "llama_index.core.agent.AgentWorkflow",
            "llama_index.core.agent.AgentWorkflow.from_tools_or_functions",
            "llama_index.core.agent.workflow.AgentWorkflow",
            "llama_index.core.agent.workflow.AgentWorkflow.from_tools_or_functions",
            "llama_index.core.agent.workflow.multi_agent_workflow.AgentWorkflow",
        ),
        kind=STATELESS,
        framework="llama_index",
        version=_LI_WF,
        source="llama_index/core/agent/workflow/multi_agent_workflow.py",
        why="holds only the agents dict, prompts and initial_state template; run(..., ctx=, "
        "memory=) starts a new Context unless one is passed, and deep-copies initial_state "
        "into it.",
        run_methods=_LI_WF_RUN,
        state_kwargs=("ctx", "memory"),
        tools_kwargs=("tools_or_functions",),
    ),
    Entry(
        names=(
            "llama_index.core.workflow.Context",
            "llama_index.core.workflow.context.Context",
            "workflows.Context",
            "workflows.context.Context",
        ),
        kind=MEMORY,
        framework="llama_index",
        version=_LI_WF,
        source="workflows/context/context.py",
        why="a workflow run's state (ctx.store: memory, state dict, current agent); measured "
        "in 0.14.25: a second run on a running ctx raises ContextStateError, and a finished "
        "ctx is re-serialized into the next run carrying the state dict (memory is skipped "
        "as unserializable), so one ctx per request or per session id.",
    ),
    Entry(
        names=(
            "llama_index.core.memory.ChatMemoryBuffer",
            "llama_index.core.memory.ChatMemoryBuffer.from_defaults",
            "llama_index.core.memory.chat_memory_buffer.ChatMemoryBuffer",
            "llama_index.core.memory.chat_memory_buffer.ChatMemoryBuffer.from_defaults",
        ),
        kind=MEMORY,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/memory/chat_memory_buffer.py",
        why="stores messages in its chat_store under chat_store_key (default constant "
        "'chat_history'; without chat_store= a new SimpleChatStore of its own); put()/aput() "
        "append, so a shared buffer mixes conversations.",
        run_methods=("put", "aput", "set", "aset", "put_messages", "aput_messages"),
        session_kwargs=("chat_store_key",),
        store_kwargs=("chat_store",),
    ),
    Entry(
        names=(
            "llama_index.core.memory.ChatSummaryMemoryBuffer",
            "llama_index.core.memory.ChatSummaryMemoryBuffer.from_defaults",
            "llama_index.core.memory.chat_summary_memory_buffer.ChatSummaryMemoryBuffer",
        ),
        kind=MEMORY,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/memory/chat_summary_memory_buffer.py",
        why="like ChatMemoryBuffer it appends to chat_store[chat_store_key] and also rewrites "
        "the stored history with a summary.",
        run_methods=("put", "aput", "set", "aset"),
        session_kwargs=("chat_store_key",),
        store_kwargs=("chat_store",),
    ),
    Entry(
        names=(
            "llama_index.core.memory.Memory",
            "llama_index.core.memory.Memory.from_defaults",
            "llama_index.core.memory.memory.Memory",
            "llama_index.core.memory.memory.Memory.from_defaults",
        ),
        kind=MEMORY,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/memory/memory.py",
        why="bound to one session_id (from_defaults: session_id or generate_chat_store_key()) "
        "in its SQLAlchemyChatStore (without chat_store=, async_database_uri= or async_engine= "
        "an in-memory SQLite of its own); put()/aput() append to that session.",
        run_methods=("put", "aput", "set", "aset", "put_messages", "aput_messages"),
        session_kwargs=("session_id",),
        store_kwargs=("chat_store", "async_database_uri", "async_engine"),
    ),
    Entry(
        names=(
            "llama_index.core.storage.chat_store.SimpleChatStore",
            "llama_index.core.storage.chat_store.simple_chat_store.SimpleChatStore",
        ),
        kind=STATELESS,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/storage/chat_store/simple_chat_store.py",
        why="a dict of message lists keyed by key (add_message: self.store.setdefault(key, [])); "
        "shared by design, isolation comes from the chat_store_key of each memory.",
    ),
    Entry(
        names=("llama_index.core.storage.chat_store.sql.SQLAlchemyChatStore",),
        kind=STATELESS,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/storage/chat_store/sql.py",
        why="a table of messages keyed by each Memory's session_id (get_messages(key)); shared by "
        "design (one engine for every session), isolation comes from the session_id of each Memory.",
    ),
    Entry(
        names=(
            "llama_index.core.chat_engine.SimpleChatEngine",
            "llama_index.core.chat_engine.SimpleChatEngine.from_defaults",
            "llama_index.core.chat_engine.simple.SimpleChatEngine",
            "llama_index.core.chat_engine.simple.SimpleChatEngine.from_defaults",
            "llama_index.core.chat_engine.ContextChatEngine",
            "llama_index.core.chat_engine.ContextChatEngine.from_defaults",
            "llama_index.core.chat_engine.context.ContextChatEngine",
            "llama_index.core.chat_engine.CondensePlusContextChatEngine",
            "llama_index.core.chat_engine.CondensePlusContextChatEngine.from_defaults",
            "llama_index.core.chat_engine.condense_plus_context.CondensePlusContextChatEngine",
            "llama_index.core.chat_engine.CondenseQuestionChatEngine",
            "llama_index.core.chat_engine.CondenseQuestionChatEngine.from_defaults",
            "llama_index.core.chat_engine.condense_question.CondenseQuestionChatEngine",
        ),
        kind=AGENT,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/chat_engine/context.py",
        why="every chat engine keeps self._memory (ChatMemoryBuffer from from_defaults) and "
        "chat()/achat() put the user and assistant messages into it.",
        run_methods=_CHAT_ENGINE_RUN,
    ),
    Entry(
        names=(
            "llama_index.core.tools.FunctionTool",
            "llama_index.core.tools.function_tool.FunctionTool",
        ),
        kind=TOOL,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/tools/function_tool.py",
        why="FunctionTool(fn, metadata) wraps one callable; its name is metadata.name (ToolMetadata) or fn.__name__.",
    ),
    Entry(
        names=(
            "llama_index.core.tools.FunctionTool.from_defaults",
            "llama_index.core.tools.function_tool.FunctionTool.from_defaults",
        ),
        kind=TOOL,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/tools/function_tool.py",
        why="from_defaults(fn, name=None, ...) names the tool name or fn.__name__.",
        name_kwargs=("name", "1"),
    ),
    Entry(
        names=(
            "llama_index.core.tools.QueryEngineTool",
            "llama_index.core.tools.query_engine.QueryEngineTool",
        ),
        kind=TOOL,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/tools/query_engine.py",
        why="QueryEngineTool(query_engine, metadata) takes its name from ToolMetadata.name.",
    ),
    Entry(
        names=(
            "llama_index.core.tools.QueryEngineTool.from_defaults",
            "llama_index.core.tools.query_engine.QueryEngineTool.from_defaults",
        ),
        kind=TOOL,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/tools/query_engine.py",
        why="from_defaults(query_engine, name=None, description=None) defaults the name to "
        "'query_engine_tool', so two unnamed ones collide.",
        name_kwargs=("name", "1"),
    ),
    Entry(
        names=(
            "llama_index.core.callbacks.CallbackManager",
            "llama_index.core.callbacks.base.CallbackManager",
        ),
        kind=CALLBACKS,
        framework="llama_index",
        version=_LI,
        source="llama_index/core/callbacks/base.py",
        why="add_handler() is self.handlers.append(handler) with no duplicate check, so each "
        "registration repeats every event.",
    ),
)
# --------------------------------------------------------------------------------------------
# AutoGen 0.2 API: ``import autogen``. Read in ag2 0.14.0 (the last ag2 release that ships the
# ``autogen`` module; ag2 1.x replaced it with ``ag2``) and cross-checked in pyautogen 0.2.35.
# --------------------------------------------------------------------------------------------
_AG2 = "ag2 0.14.0 (also pyautogen 0.2.35)"
_AG2_RUN = (
    "initiate_chat",
    "a_initiate_chat",
    "initiate_chats",
    "a_initiate_chats",
    "run",
    "a_run",
    "generate_reply",
    "a_generate_reply",
    "send",
    "a_send",
    "receive",
    "a_receive",
)

_AUTOGEN_02 = (
    Entry(
        names=(
            "autogen.ConversableAgent",
            "autogen.agentchat.ConversableAgent",
            "autogen.agentchat.conversable_agent.ConversableAgent",
            "autogen.AssistantAgent",
            "autogen.agentchat.AssistantAgent",
            "autogen.agentchat.assistant_agent.AssistantAgent",
            "autogen.UserProxyAgent",
            "autogen.agentchat.UserProxyAgent",
            "autogen.agentchat.user_proxy_agent.UserProxyAgent",
        ),
        kind=AGENT,
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/conversable_agent.py",
        why="keeps self._oai_messages = defaultdict(list) per peer agent and appends every "
        "send/receive; initiate_chat(clear_history=True) wipes it at the start, so two "
        "concurrent chats on the same pair clear and interleave each other's tool_calls.",
        run_methods=_AG2_RUN,
        tools_kwargs=("functions",),
    ),
    Entry(
        names=(
            "autogen.GroupChat",
            "autogen.agentchat.GroupChat",
            "autogen.agentchat.groupchat.GroupChat",
        ),
        kind=MEMORY,
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/groupchat.py",
        why="a dataclass holding self.messages; append() adds every message of the chat and "
        "reset() clears it, so one GroupChat shared by requests is one transcript.",
    ),
    Entry(
        names=(
            "autogen.GroupChatManager",
            "autogen.agentchat.GroupChatManager",
            "autogen.agentchat.groupchat.GroupChatManager",
        ),
        kind=AGENT,
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/groupchat.py",
        why="a ConversableAgent that holds its GroupChat (messages) and self._last_speaker; "
        "run_chat() appends to the shared groupchat.messages.",
        run_methods=_AG2_RUN + ("run_chat", "a_run_chat", "resume", "a_resume"),
    ),
    Entry(
        names=("autogen.tools.tool", "autogen.tools.Tool", "autogen.tools.tool.Tool"),
        kind=TOOL,
        framework="autogen",
        version="ag2 0.14.0",
        source="autogen/tools/tool.py",
        why="Tool(name=None, description=None, func_or_tool=...) and the @tool(name=None) "
        "decorator name the tool name or the function's __name__.",
        name_kwargs=("name",),
    ),
)
# --------------------------------------------------------------------------------------------
# AutoGen AgentChat 0.4+ (autogen-agentchat / autogen-core / autogen-ext 0.7.5).
# --------------------------------------------------------------------------------------------
_AC = "autogen-agentchat 0.7.5"
_ACORE = "autogen-core 0.7.5"
_AEXT = "autogen-ext 0.7.5"
_AC_AGENT_RUN = ("run", "run_stream", "on_messages", "on_messages_stream")
_AC_TEAM_RUN = ("run", "run_stream")

_AUTOGEN_AGENTCHAT = (
    Entry(
        names=(
            "autogen_agentchat.agents.AssistantAgent",
            "autogen_agentchat.agents._assistant_agent.AssistantAgent",
        ),
        kind=AGENT,
        framework="autogen_agentchat",
        version=_AC,
        source="autogen_agentchat/agents/_assistant_agent.py",
        why="keeps self._model_context (UnboundedChatCompletionContext by default) and every "
        "run()/on_messages() adds the new messages and tool results to it; only on_reset() "
        "clears it (measured with ReplayChatCompletionClient: 2 messages after one run, 4 "
        "after two).",
        run_methods=_AC_AGENT_RUN,
        tools_kwargs=("tools", "workbench"),
    ),
    Entry(
        names=(
            "autogen_agentchat.agents.CodeExecutorAgent",
            "autogen_agentchat.agents._code_executor_agent.CodeExecutorAgent",
            "autogen_agentchat.agents.SocietyOfMindAgent",
            "autogen_agentchat.agents._society_of_mind_agent.SocietyOfMindAgent",
        ),
        kind=AGENT,
        framework="autogen_agentchat",
        version=_AC,
        source="autogen_agentchat/agents/_code_executor_agent.py",
        why="both keep self._model_context = UnboundedChatCompletionContext() across runs "
        "(SocietyOfMindAgent also holds its inner team).",
        run_methods=_AC_AGENT_RUN,
    ),
    Entry(
        names=(
            "autogen_agentchat.agents.UserProxyAgent",
            "autogen_agentchat.agents._user_proxy_agent.UserProxyAgent",
        ),
        kind=STATELESS,
        framework="autogen_agentchat",
        version=_AC,
        source="autogen_agentchat/agents/_user_proxy_agent.py",
        why="holds only input_func (self._is_async flag); it keeps no message history and calls no tools.",
    ),
    Entry(
        names=(
            "autogen_agentchat.teams.RoundRobinGroupChat",
            "autogen_agentchat.teams._group_chat._round_robin_group_chat.RoundRobinGroupChat",
            "autogen_agentchat.teams.SelectorGroupChat",
            "autogen_agentchat.teams._group_chat._selector_group_chat.SelectorGroupChat",
            "autogen_agentchat.teams.Swarm",
            "autogen_agentchat.teams._group_chat._swarm_group_chat.Swarm",
            "autogen_agentchat.teams.MagenticOneGroupChat",
            "autogen_agentchat.teams.GraphFlow",
        ),
        kind=AGENT,
        framework="autogen_agentchat",
        version=_AC,
        source="autogen_agentchat/teams/_group_chat/_base_group_chat.py",
        why="a team keeps its participants (stateful agents) and the group chat manager's "
        "message thread across run() calls (reset() clears them) and raises 'The team is "
        "already running' on a concurrent run via self._is_running.",
        run_methods=_AC_TEAM_RUN,
    ),
    Entry(
        names=(
            "autogen_core.model_context.UnboundedChatCompletionContext",
            "autogen_core.model_context.BufferedChatCompletionContext",
            "autogen_core.model_context.HeadAndTailChatCompletionContext",
            "autogen_core.model_context.TokenLimitedChatCompletionContext",
        ),
        kind=MEMORY,
        framework="autogen_core",
        version=_ACORE,
        source="autogen_core/model_context/_chat_completion_context.py",
        why="ChatCompletionContext keeps self._messages and add_message() appends, so one "
        "context passed as model_context= to per-request agents still shares the history.",
        run_methods=("add_message",),
    ),
    Entry(
        names=(
            "autogen_core.memory.ListMemory",
            "autogen_core.memory._list_memory.ListMemory",
        ),
        kind=MEMORY,
        framework="autogen_core",
        version=_ACORE,
        source="autogen_core/memory/_list_memory.py",
        why="keeps self._contents and add() appends; update_context() injects every stored "
        "item into the model context of each agent that uses it.",
        run_methods=("add",),
    ),
    Entry(
        names=(
            "autogen_core.tools.FunctionTool",
            "autogen_core.tools._function_tool.FunctionTool",
        ),
        kind=TOOL,
        framework="autogen_core",
        version=_ACORE,
        source="autogen_core/tools/_function_tool.py",
        why="FunctionTool(func, description, name=None) names the tool name or func.__name__.",
        name_kwargs=("name", "2"),
    ),
    Entry(
        names=(
            "autogen_ext.models.openai.OpenAIChatCompletionClient",
            "autogen_ext.models.openai._openai_client.OpenAIChatCompletionClient",
            "autogen_ext.models.openai.AzureOpenAIChatCompletionClient",
            "autogen_ext.models.openai._openai_client.AzureOpenAIChatCompletionClient",
        ),
        kind=STATELESS,
        framework="autogen_ext",
        version=_AEXT,
        source="autogen_ext/models/openai/_openai_client.py",
        why="create() sends the messages it is given; the object keeps only the client, "
        "create_args and usage counters (_total_usage), no conversation.",
        run_methods=("create", "create_stream"),
    ),
)

# --------------------------------------------------------------------------------------------
# AG2 1.x: a new API under the top-level module ``ag2`` (``autogen`` is no longer shipped).
# --------------------------------------------------------------------------------------------
_AG2_NEW = "ag2 1.2.1"
_AG2_NEW_ENTRIES = (
    Entry(
        names=("ag2.Agent", "ag2.agent.Agent"),
        kind=STATELESS,
        framework="ag2",
        version=_AG2_NEW,
        source="ag2/agent.py",
        why="ask()/run() call _open_run, which builds a context over 'stream or "
        "MemoryStream()' per call, so history lives in the run unless a shared stream= is "
        "passed.",
        run_methods=("ask", "run"),
        state_kwargs=("stream",),
        tools_kwargs=("tools",),
    ),
    Entry(
        names=("ag2.MemoryStream", "ag2.stream.MemoryStream"),
        kind=MEMORY,
        framework="ag2",
        version=_AG2_NEW,
        source="ag2/stream.py",
        why="holds the event history of the conversations run over it (stream.history); "
        "passing one stream= to every ask() continues one conversation.",
    ),
    Entry(
        names=("ag2.tool", "ag2.tools.tool", "ag2.tools.final.function_tool.tool"),
        kind=TOOL,
        framework="ag2",
        version=_AG2_NEW,
        source="ag2/tools/final/function_tool.py",
        why="tool(function=None, *, name=None, ...) makes a FunctionTool named name or function.__name__.",
        name_kwargs=("name",),
    ),
)
# --------------------------------------------------------------------------------------------
# Strands Agents (strands-agents 1.62.0).
# --------------------------------------------------------------------------------------------
_ST = "strands-agents 1.62.0"

_STRANDS = (
    Entry(
        names=("strands.Agent", "strands.agent.Agent", "strands.agent.agent.Agent"),
        kind=AGENT,
        framework="strands",
        version=_ST,
        source="strands/agent/agent.py",
        why="keeps self.messages (and self.state) on the agent and appends every turn; a second "
        "concurrent call raises ConcurrencyException by default "
        "(concurrent_invocation_mode='throw'), so sharing fails rather than deduplicates. "
        "__call__, invoke_async and stream_async take **kwargs and merge them into that call's "
        "invocation_state (stream_async: merged_state.update(kwargs)); the conversation is "
        "self.messages, keyed by nothing a call passes (the agent's session_id comes from its "
        "session_manager), so session_id= there is per-call data, not a conversation key.",
        run_methods=(
            "__call__",
            "invoke_async",
            "stream_async",
            "structured_output",
            "structured_output_async",
        ),
        tools_kwargs=("tools",),
        unkeyed_run_kwargs=("session_id", "thread_id", "conversation_id", "chat_store_key"),
    ),
    Entry(
        names=(
            "strands.session.FileSessionManager",
            "strands.session.file_session_manager.FileSessionManager",
            "strands.session.S3SessionManager",
            "strands.session.s3_session_manager.S3SessionManager",
        ),
        kind=MEMORY,
        framework="strands",
        version=_ST,
        source="strands/session/file_session_manager.py",
        why="bound to one session_id at construction and registered as a hook that syncs "
        "the agent's messages into that session, so one manager shared by all requests is "
        "one conversation.",
        session_kwargs=("session_id",),
    ),
    Entry(
        names=("strands.tool", "strands.tools.tool", "strands.tools.decorator.tool"),
        kind=TOOL,
        framework="strands",
        version=_ST,
        source="strands/tools/decorator.py",
        why="@tool / @tool(name=...) wraps a function as DecoratedFunctionTool named name or the function's __name__.",
        name_kwargs=("name",),
    ),
    Entry(
        names=("strands.hooks.HookRegistry", "strands.hooks.registry.HookRegistry"),
        kind=CALLBACKS,
        framework="strands",
        version=_ST,
        source="strands/hooks/registry.py",
        why="add_callback() bisect.insorts a new _CallbackEntry every time with no check for "
        "the same callback, so repeated registration runs it repeatedly.",
    ),
)
# --------------------------------------------------------------------------------------------
# LangChain. Classic API read in langchain 0.3.30 / langchain-core 0.3.86 / langchain-community
# 0.3.31; in langchain 1.x (1.4.7) AgentExecutor, initialize_agent, chains and the memory
# classes moved to ``langchain_classic`` (1.0.8) and ``langchain.agents`` / ``langchain.memory``
# no longer have them. Core pieces re-checked in langchain-core 1.7.2.
# --------------------------------------------------------------------------------------------
_LC = "langchain 0.3.30 (langchain_classic 1.0.8 for langchain 1.x)"
_LCC = "langchain-core 1.7.2 (same in 0.3.86)"
_LCCOM = "langchain-community 0.3.31"
_LC_RUN = ("invoke", "ainvoke", "stream", "astream", "batch", "abatch", "run", "arun", "__call__", "acall")
_LCR_RUN = ("invoke", "ainvoke", "stream", "astream", "batch", "abatch", "astream_events")

_LANGCHAIN = (
    Entry(
        names=(
            "langchain.agents.AgentExecutor",
            "langchain.agents.AgentExecutor.from_agent_and_tools",
            "langchain.agents.agent.AgentExecutor",
            "langchain.agents.agent.AgentExecutor.from_agent_and_tools",
            "langchain_classic.agents.AgentExecutor",
            "langchain_classic.agents.AgentExecutor.from_agent_and_tools",
            "langchain_classic.agents.agent.AgentExecutor",
            "langchain.agents.initialize_agent",
            "langchain.agents.initialize.initialize_agent",
            "langchain_classic.agents.initialize_agent",
        ),
        kind=STATELESS,
        framework="langchain",
        version=_LC,
        source="langchain/chains/base.py",
        why="Chain.memory defaults to None and each invoke() runs the agent loop on local "
        "intermediate_steps; only with memory= does prep_inputs load and prep_outputs "
        "save_context() a shared history (initialize_agent forwards **kwargs to it).",
        run_methods=_LC_RUN,
        stateful_if_kwargs=("memory",),
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "langchain.chains.LLMChain",
            "langchain.chains.llm.LLMChain",
            "langchain_classic.chains.LLMChain",
            "langchain.chains.ConversationalRetrievalChain",
            "langchain.chains.ConversationalRetrievalChain.from_llm",
            "langchain.chains.conversational_retrieval.base.ConversationalRetrievalChain",
            "langchain_classic.chains.ConversationalRetrievalChain",
            "langchain_classic.chains.ConversationalRetrievalChain.from_llm",
            "langchain.chains.RetrievalQA",
            "langchain.chains.RetrievalQA.from_chain_type",
            "langchain_classic.chains.RetrievalQA",
        ),
        kind=STATELESS,
        framework="langchain",
        version=_LC,
        source="langchain/chains/base.py",
        why="Chains whose memory field defaults to None (from_llm / from_chain_type forward "
        "**kwargs to the constructor): stateless unless memory= is given.",
        run_methods=_LC_RUN,
        stateful_if_kwargs=("memory",),
    ),
    Entry(
        names=(
            "langchain.chains.ConversationChain",
            "langchain.chains.conversation.base.ConversationChain",
            "langchain_classic.chains.ConversationChain",
        ),
        kind=AGENT,
        framework="langchain",
        version=_LC,
        source="langchain/chains/conversation/base.py",
        why="memory: BaseMemory = Field(default_factory=ConversationBufferMemory): every "
        "instance keeps a history even without memory=, and each call saves to it.",
        run_methods=_LC_RUN,
    ),
    Entry(
        names=(
            "langchain.memory.ConversationBufferMemory",
            "langchain.memory.buffer.ConversationBufferMemory",
            "langchain_classic.memory.ConversationBufferMemory",
            "langchain.memory.ConversationBufferWindowMemory",
            "langchain_classic.memory.ConversationBufferWindowMemory",
            "langchain.memory.ConversationSummaryMemory",
            "langchain.memory.summary.ConversationSummaryMemory",
            "langchain_classic.memory.ConversationSummaryMemory",
            "langchain.memory.ConversationSummaryBufferMemory",
            "langchain_classic.memory.ConversationSummaryBufferMemory",
            "langchain.memory.ConversationTokenBufferMemory",
            "langchain_classic.memory.ConversationTokenBufferMemory",
            # the backwards-compatible re-exports of langchain/chains/conversation/memory.py
            # (ssabrut/chatbot-booking@5b22ba9af3716ea6f78fe14d24efd50cac57e167, src/config/memory.py)
            "langchain.chains.conversation.memory.ConversationBufferMemory",
            "langchain.chains.conversation.memory.ConversationBufferWindowMemory",
            "langchain.chains.conversation.memory.ConversationSummaryMemory",
            "langchain.chains.conversation.memory.ConversationSummaryBufferMemory",
        ),
        kind=MEMORY,
        framework="langchain",
        version=_LC,
        source="langchain/memory/chat_memory.py",
        why="BaseChatMemory keeps chat_memory (an InMemoryChatMessageHistory by default) and "
        "save_context() appends the user and AI messages to it.",
        run_methods=("save_context", "asave_context", "load_memory_variables"),
    ),
    Entry(
        names=(
            "langchain_core.chat_history.InMemoryChatMessageHistory",
            "langchain_community.chat_message_histories.ChatMessageHistory",
            "langchain_community.chat_message_histories.in_memory.ChatMessageHistory",
            "langchain.memory.ChatMessageHistory",
        ),
        kind=MEMORY,
        framework="langchain_core",
        version=_LCC + "; " + _LCCOM,
        source="langchain_core/chat_history.py",
        why="messages: list[BaseMessage] = Field(default_factory=list); add_message() / "
        "add_messages() append (ChatMessageHistory is an alias of this class).",
        run_methods=("add_message", "add_messages", "aadd_messages", "add_user_message", "add_ai_message"),
    ),
    Entry(
        names=(
            "langchain_core.runnables.RunnableWithMessageHistory",
            "langchain_core.runnables.history.RunnableWithMessageHistory",
        ),
        kind=STATELESS,
        framework="langchain_core",
        version=_LCC,
        source="langchain_core/runnables/history.py",
        why="holds only the runnable and get_session_history; each invoke() looks the history "
        "up by config['configurable']['session_id'] (_merge_configs calls "
        "self.get_session_history(...)), so it is shared by design unless that getter returns "
        "the same history for every id.",
        run_methods=_LCR_RUN,
        session_kwargs=("session_id",),
        history_getters=("1", "get_session_history"),
    ),
    Entry(
        names=(
            "langchain_openai.ChatOpenAI",
            "langchain_openai.chat_models.ChatOpenAI",
            "langchain_openai.chat_models.base.ChatOpenAI",
            "langchain_openai.AzureChatOpenAI",
            "langchain_openai.chat_models.AzureChatOpenAI",
            "langchain_anthropic.ChatAnthropic",
            "langchain_anthropic.chat_models.ChatAnthropic",
            "langchain.chat_models.init_chat_model",
            "langchain.chat_models.base.init_chat_model",
        ),
        kind=STATELESS,
        framework="langchain_core",
        version="langchain-openai 1.7.3; langchain-anthropic 1.7.7; langchain 1.4.7",
        source="langchain_openai/chat_models/base.py",
        why="BaseChatModel.invoke() sends the messages it is passed; the model keeps only "
        "client config (model_name, temperature, clients), no history.",
        run_methods=_LCR_RUN,
    ),
    Entry(
        names=(
            "langchain_core.tools.tool",
            "langchain_core.tools.convert.tool",
            "langchain.tools.tool",
            "langchain.agents.tool",
        ),
        kind=TOOL,
        framework="langchain_core",
        version=_LCC,
        source="langchain_core/tools/convert.py",
        why="@tool or @tool('name'): the first positional argument is the name when it is a "
        "string (name_or_callable), else the function's __name__ is used.",
        name_kwargs=("name_or_callable", "0"),
    ),
    Entry(
        names=(
            "langchain_core.tools.StructuredTool.from_function",
            "langchain_core.tools.structured.StructuredTool.from_function",
            "langchain.tools.StructuredTool.from_function",
        ),
        kind=TOOL,
        framework="langchain_core",
        version=_LCC,
        source="langchain_core/tools/structured.py",
        why="from_function(func=None, coroutine=None, name=None, ...) names the tool name or func.__name__.",
        name_kwargs=("name", "2"),
    ),
    Entry(
        names=(
            "langchain_core.tools.StructuredTool",
            "langchain_core.tools.structured.StructuredTool",
            "langchain.tools.StructuredTool",
        ),
        kind=TOOL,
        framework="langchain_core",
        version=_LCC,
        source="langchain_core/tools/structured.py",
        why="a pydantic BaseTool: the name field is keyword-only.",
        name_kwargs=("name",),
    ),
    Entry(
        names=(
            "langchain_core.tools.Tool",
            "langchain_core.tools.simple.Tool",
            "langchain.tools.Tool",
            "langchain.agents.Tool",
        ),
        kind=TOOL,
        framework="langchain_core",
        version=_LCC,
        source="langchain_core/tools/simple.py",
        why="Tool(name, func, description): the name is the first positional argument.",
        name_kwargs=("name", "0"),
    ),
    Entry(
        names=(
            "langchain_core.tools.Tool.from_function",
            "langchain_core.tools.simple.Tool.from_function",
        ),
        kind=TOOL,
        framework="langchain_core",
        version=_LCC,
        source="langchain_core/tools/simple.py",
        why="Tool.from_function(func, name, description): the name is the second argument.",
        name_kwargs=("name", "1"),
    ),
    Entry(
        names=(
            "langchain_core.callbacks.CallbackManager",
            "langchain_core.callbacks.manager.CallbackManager",
            "langchain_core.callbacks.AsyncCallbackManager",
            "langchain_core.callbacks.manager.AsyncCallbackManager",
        ),
        kind=CALLBACKS,
        framework="langchain_core",
        version=_LCC,
        source="langchain_core/callbacks/base.py",
        why="BaseCallbackManager.add_handler() appends unless the same handler is already in "
        "self.handlers (an equality check), so re-adding one object is harmless but a new "
        "handler instance per request accumulates.",
    ),
)

# --------------------------------------------------------------------------------------------
# LangGraph (langgraph 1.2.22, langgraph-prebuilt 1.1.2, langgraph-checkpoint 4.3.2) and the
# langchain 1.x agent factory built on it.
# --------------------------------------------------------------------------------------------
_LG = "langgraph 1.2.22"
_LANGGRAPH = (
    Entry(
        names=(
            "langgraph.graph.StateGraph",
            "langgraph.graph.state.StateGraph",
            "langgraph.graph.MessageGraph",
            "langgraph.graph.message.MessageGraph",
        ),
        kind=STATELESS,
        framework="langgraph",
        version=_LG,
        source="langgraph/graph/state.py",
        why="a builder of nodes and edges; compile() returns a Pregel graph that builds fresh "
        "channels per invoke() and persists only through a checkpointer keyed by "
        "config['configurable']['thread_id'].",
    ),
    Entry(
        names=(
            "langgraph.graph.StateGraph.compile",
            "langgraph.graph.state.StateGraph.compile",
            "langgraph.graph.state.CompiledStateGraph",
            "langgraph.pregel.Pregel",
            "langgraph.pregel.main.Pregel",
        ),
        kind=STATELESS,
        framework="langgraph",
        version=_LG,
        source="langgraph/pregel/main.py",
        why="invoke()/stream() create the run's channels per call; with a checkpointer the "
        "state is read and written under config[CONF]['thread_id'], so one compiled graph "
        "is shared by design.",
        run_methods=_LCR_RUN,
        session_kwargs=("thread_id",),
    ),
    Entry(
        names=(
            "langgraph.prebuilt.create_react_agent",
            "langgraph.prebuilt.chat_agent_executor.create_react_agent",
            "langchain.agents.create_agent",
            "langchain.agents.factory.create_agent",
        ),
        kind=STATELESS,
        framework="langgraph",
        version=_LG + " / langgraph-prebuilt 1.1.2; langchain 1.4.7",
        source="langgraph/prebuilt/chat_agent_executor.py",
        why="returns a compiled StateGraph (messages live in the run's state or the "
        "checkpointer under thread_id), nothing on a shared object.",
        run_methods=_LCR_RUN,
        tools_kwargs=("tools",),
        session_kwargs=("thread_id",),
    ),
    Entry(
        names=(
            "langgraph.checkpoint.memory.MemorySaver",
            "langgraph.checkpoint.memory.InMemorySaver",
            "langgraph.store.memory.InMemoryStore",
        ),
        kind=STATELESS,
        framework="langgraph",
        version="langgraph-checkpoint 4.3.2",
        source="langgraph/checkpoint/memory/__init__.py",
        why="self.storage is a defaultdict keyed by thread_id (MemorySaver = InMemorySaver); "
        "meant to be one per process, isolation comes from the thread_id in the config.",
        session_kwargs=("thread_id",),
    ),
)
# --------------------------------------------------------------------------------------------
# CrewAI (crewai 1.15.30).
# --------------------------------------------------------------------------------------------
_CR = "crewai 1.15.30"
_CREWAI = (
    Entry(
        names=("crewai.Crew", "crewai.crew.Crew"),
        kind=AGENT,
        framework="crewai",
        version=_CR,
        source="crewai/crew.py",
        why="kickoff() mutates the crew's own tasks and agents (_interpolate_inputs rewrites "
        "task.description and agent role/goal from inputs, task.output and usage_metrics are "
        "assigned), and kickoff_for_each() runs self.copy() per input for that reason.",
        run_methods=(
            "kickoff",
            "kickoff_async",
            "akickoff",
            "kickoff_for_each",
            "kickoff_for_each_async",
            "akickoff_for_each",
            "replay",
            "train",
        ),
    ),
    Entry(
        names=("crewai.Task", "crewai.task.Task"),
        kind=AGENT,
        framework="crewai",
        version=_CR,
        source="crewai/task.py",
        why="execute_sync() sets self.output and prompt_context, and each crew kickoff "
        "re-interpolates self.description from _original_description, so one Task running "
        "for two requests at once swaps their inputs.",
        run_methods=("execute_sync", "execute_async", "aexecute_sync"),
        tools_kwargs=("tools",),
        member_of=("crewai.Crew", "crewai.crew.Crew"),
    ),
    Entry(
        names=("crewai.Agent", "crewai.agent.Agent", "crewai.agent.core.Agent"),
        kind=STATELESS,
        framework="crewai",
        version=_CR,
        source="crewai/agent/core.py",
        why="Agent.kickoff() builds a fresh executor per call (_prepare_kickoff) and keeps no "
        "messages; with memory= it saves every result into that memory "
        "(_save_kickoff_to_memory), and crews rewrite its role/goal on kickoff. Run by a crew "
        "(a Task's agent=, a Crew's agents=), execute_task calls create_agent_executor, which "
        "keeps one self.agent_executor per agent and re-targets it in place for each task "
        "(_update_executor_parameters sets its task, tools, prompt and stop words) and sets "
        "agent.crew: two crews built per request around one module-level agent run on each "
        "other's task.",
        run_methods=("kickoff", "kickoff_async", "akickoff"),
        stateful_if_kwargs=("memory",),
        tools_kwargs=("tools",),
        member_of=("crewai.Crew", "crewai.crew.Crew", "crewai.Task", "crewai.task.Task"),
    ),
    Entry(
        names=("crewai.tools.tool", "crewai.tools.base_tool.tool"),
        kind=TOOL,
        framework="crewai",
        version=_CR,
        source="crewai/tools/base_tool.py",
        why="@tool('Name') takes the tool name as its first positional argument (a string), "
        "else the function's __name__.",
        name_kwargs=("0",),
    ),
)
# --------------------------------------------------------------------------------------------
# OpenAI Agents SDK (openai-agents 0.24.0) and the plain LLM clients (openai 3.54.0,
# anthropic 2.12.0).
# --------------------------------------------------------------------------------------------
_OA = "openai-agents 0.24.0"
_OPENAI_AGENTS = (
    Entry(
        names=("agents.Agent", "agents.agent.Agent"),
        kind=STATELESS,
        framework="openai_agents",
        version=_OA,
        source="agents/agent.py",
        why="a @dataclass of configuration (name, instructions, tools, handoffs, model, "
        "guardrails); it has no run method and keeps nothing: Runner.run builds the run "
        "state per call.",
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "agents.Runner",
            "agents.run.Runner",
            "agents.Runner.run",
            "agents.Runner.run_sync",
            "agents.Runner.run_streamed",
        ),
        kind=STATELESS,
        framework="openai_agents",
        version=_OA,
        source="agents/run.py",
        why="run/run_sync/run_streamed are classmethods that create the run's items and "
        "context per call; history carries over only through session=, conversation_id= or "
        "previous_response_id=.",
        run_methods=("run", "run_sync", "run_streamed"),
        state_kwargs=("session",),
        session_kwargs=("conversation_id",),
    ),
    Entry(
        names=(
            "agents.SQLiteSession",
            "agents.memory.SQLiteSession",
            "agents.memory.sqlite_session.SQLiteSession",
        ),
        kind=MEMORY,
        framework="openai_agents",
        version=_OA,
        source="agents/memory/sqlite_session.py",
        why="bound to one conversation at construction (SQLiteSession(session_id, "
        "db_path=':memory:'): without a file, a database of its own); add_items() appends every "
        "run's items to it.",
        run_methods=("add_items", "get_items", "pop_item", "clear_session"),
        session_kwargs=("session_id", "0"),
        store_kwargs=("db_path", "1"),
    ),
    Entry(
        names=(
            "agents.OpenAIConversationsSession",
            "agents.memory.OpenAIConversationsSession",
        ),
        kind=MEMORY,
        framework="openai_agents",
        version=_OA,
        source="agents/memory/openai_conversations_session.py",
        why="bound to one server-side conversation at construction "
        "(OpenAIConversationsSession(conversation_id=)); add_items() appends every run's items to it.",
        run_methods=("add_items", "get_items", "pop_item", "clear_session"),
        session_kwargs=("conversation_id",),
    ),
    Entry(
        names=("agents.function_tool", "agents.tool.function_tool"),
        kind=TOOL,
        framework="openai_agents",
        version=_OA,
        source="agents/tool.py",
        why="@function_tool(name_override=...) names the FunctionTool, else the function's __name__.",
        name_kwargs=("name_override",),
    ),
    Entry(
        names=("agents.FunctionTool", "agents.tool.FunctionTool"),
        kind=TOOL,
        framework="openai_agents",
        version=_OA,
        source="agents/tool.py",
        why="a dataclass whose first field is name, so FunctionTool('x', ...) names the tool positionally.",
        name_kwargs=("name", "0"),
    ),
)

_PLAIN_CLIENTS = (
    Entry(
        names=(
            "openai.OpenAI",
            "openai.AsyncOpenAI",
            "openai.AzureOpenAI",
            "openai.AsyncAzureOpenAI",
            "openai.Client",
            "openai.AsyncClient",
        ),
        kind=STATELESS,
        framework="openai",
        version="openai 3.54.0",
        source="openai/_client.py",
        why="an HTTP client (api key, base URL, connection pool); every chat.completions / "
        "responses call sends the messages it is given and keeps none.",
    ),
    Entry(
        names=(
            "anthropic.Anthropic",
            "anthropic.AsyncAnthropic",
            "anthropic.Client",
            "anthropic.AsyncClient",
            "anthropic.AnthropicBedrock",
            "anthropic.AsyncAnthropicBedrock",
            "anthropic.AnthropicVertex",
            "anthropic.AsyncAnthropicVertex",
        ),
        kind=STATELESS,
        framework="anthropic",
        version="anthropic 2.12.0",
        source="anthropic/_client.py",
        why="an HTTP client; messages.create() sends the conversation it is passed and keeps none.",
    ),
)
# --------------------------------------------------------------------------------------------
# pydantic-ai (pydantic-ai-slim 2.68.0).
# --------------------------------------------------------------------------------------------
_PA = "pydantic-ai-slim 2.68.0"
_PYDANTIC_AI = (
    Entry(
        names=("pydantic_ai.Agent", "pydantic_ai.agent.Agent"),
        kind=STATELESS,
        framework="pydantic_ai",
        version=_PA,
        source="pydantic_ai/agent/__init__.py",
        why="__init__ stores only configuration (model, instructions, toolsets, output schema); "
        "iter() builds the run's graph state per call and history enters only through "
        "message_history= / conversation=.",
        run_methods=("run", "run_sync", "run_stream", "run_stream_events", "iter"),
        state_kwargs=("message_history", "conversation"),
        tools_kwargs=("tools", "toolsets"),
        session_kwargs=("conversation_id",),
    ),
    Entry(
        names=("pydantic_ai.Tool", "pydantic_ai.tools.Tool"),
        kind=TOOL,
        framework="pydantic_ai",
        version=_PA,
        source="pydantic_ai/tools.py",
        why="Tool(function, *, name=None, ...) names the tool name or function.__name__; a "
        "FunctionToolset raises UserError on a second tool with the same name.",
        name_kwargs=("name",),
    ),
)

# --------------------------------------------------------------------------------------------
# smolagents (smolagents 1.26.0).
# --------------------------------------------------------------------------------------------
_SA = "smolagents 1.26.0"
_SMOLAGENTS = (
    Entry(
        names=(
            "smolagents.CodeAgent",
            "smolagents.agents.CodeAgent",
            "smolagents.ToolCallingAgent",
            "smolagents.agents.ToolCallingAgent",
            "smolagents.MultiStepAgent",
            "smolagents.agents.MultiStepAgent",
        ),
        kind=AGENT,
        framework="smolagents",
        version=_SA,
        source="smolagents/agents.py",
        why="keeps self.memory = AgentMemory(...), self.step_number and (CodeAgent) the "
        "executor state on the agent; run(task, stream=False, reset=True) calls "
        "self.memory.reset() before the first step (MultiStepAgent.run), so two concurrent runs "
        "reset and interleave each other's steps, and runs that never overlap share nothing.",
        run_methods=("run", "__call__"),
        tools_kwargs=("tools",),
        resetting_run=("reset", "stream"),
    ),
    Entry(
        names=("smolagents.AgentMemory", "smolagents.memory.AgentMemory"),
        kind=MEMORY,
        framework="smolagents",
        version=_SA,
        source="smolagents/memory.py",
        why="holds the steps list of one agent's run; reset() clears it.",
    ),
    Entry(
        names=("smolagents.tool", "smolagents.tools.tool"),
        kind=TOOL,
        framework="smolagents",
        version=_SA,
        source="smolagents/tools.py",
        why="@tool takes only the function; the tool is named after the function's __name__ (no name argument).",
    ),
)
# --------------------------------------------------------------------------------------------
# Google ADK (google-adk 2.13.0).
# --------------------------------------------------------------------------------------------
_ADK = "google-adk 2.13.0"
_GOOGLE_ADK = (
    Entry(
        names=(
            "google.adk.Agent",
            "google.adk.agents.Agent",
            "google.adk.agents.LlmAgent",
            "google.adk.agents.llm_agent.LlmAgent",
            "google.adk.agents.SequentialAgent",
            "google.adk.agents.ParallelAgent",
            "google.adk.agents.LoopAgent",
        ),
        kind=STATELESS,
        framework="google_adk",
        version=_ADK,
        source="google/adk/agents/llm_agent.py",
        why="pydantic config (model, instruction, tools, sub_agents) with no per-run "
        "attribute writes; Runner.run_async builds an InvocationContext per call and the "
        "history lives in the session service under (app_name, user_id, session_id).",
        tools_kwargs=("tools",),
    ),
    Entry(
        names=(
            "google.adk.Runner",
            "google.adk.runners.Runner",
            "google.adk.runners.InMemoryRunner",
        ),
        kind=STATELESS,
        framework="google_adk",
        version=_ADK,
        source="google/adk/runners.py",
        why="holds the agent and the services; run()/run_async(user_id=, session_id=, "
        "new_message=) fetch that session from session_service per call.",
        run_methods=("run", "run_async", "run_live"),
        session_kwargs=("session_id", "user_id"),
    ),
    Entry(
        names=(
            "google.adk.sessions.InMemorySessionService",
            "google.adk.sessions.in_memory_session_service.InMemorySessionService",
        ),
        kind=STATELESS,
        framework="google_adk",
        version=_ADK,
        source="google/adk/sessions/in_memory_session_service.py",
        why="self.sessions is a dict app_name -> user_id -> session_id -> Session: one "
        "service per process is the design, sessions are keyed.",
        session_kwargs=("session_id", "user_id"),
    ),
    Entry(
        names=("google.adk.tools.FunctionTool", "google.adk.tools.function_tool.FunctionTool"),
        kind=TOOL,
        framework="google_adk",
        version=_ADK,
        source="google/adk/tools/function_tool.py",
        why="FunctionTool(func) is named after func.__name__ (no name argument).",
    ),
)

# --------------------------------------------------------------------------------------------
# Agno (agno 3.1.10).
# --------------------------------------------------------------------------------------------
_AGNO = "agno 3.1.10"
_AGNO_ENTRIES = (
    Entry(
        names=(
            "agno.agent.Agent",
            "agno.agent.agent.Agent",
            "agno.team.Team",
            "agno.team.team.Team",
        ),
        kind=STATELESS,
        framework="agno",
        version=_AGNO,
        source="agno/agent/_session.py",
        why="messages are stored per session_id in db (none without db=); BUT "
        "initialize_session() makes the first run's generated id sticky "
        "(agent.session_id = session_id), so with db= and no session_id= per run every "
        "caller shares one session: pass session_id= (or user_id=) to run().",
        run_methods=("run", "arun", "print_response", "aprint_response"),
        tools_kwargs=("tools",),
        session_kwargs=("session_id", "user_id"),
    ),
    Entry(
        names=("agno.tools.tool", "agno.tools.decorator.tool"),
        kind=TOOL,
        framework="agno",
        version=_AGNO,
        source="agno/tools/decorator.py",
        why="@tool(name=...) overrides the Function name, else func.__name__.",
        name_kwargs=("name",),
    ),
)
# --------------------------------------------------------------------------------------------
# Semantic Kernel (semantic-kernel 1.45.0).
# --------------------------------------------------------------------------------------------
_SK = "semantic-kernel 1.45.0"
_SEMANTIC_KERNEL = (
    Entry(
        names=(
            "semantic_kernel.agents.ChatCompletionAgent",
            "semantic_kernel.agents.chat_completion.chat_completion_agent.ChatCompletionAgent",
        ),
        kind=STATELESS,
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/agents/chat_completion/chat_completion_agent.py",
        why="get_response()/invoke() construct a new ChatHistoryAgentThread when thread is "
        "None, so history lives in the thread the caller passes, not on the agent.",
        run_methods=("get_response", "invoke", "invoke_stream"),
        state_kwargs=("thread",),
        tools_kwargs=("plugins",),
    ),
    Entry(
        names=(
            "semantic_kernel.contents.ChatHistory",
            "semantic_kernel.contents.chat_history.ChatHistory",
        ),
        kind=MEMORY,
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/contents/chat_history.py",
        why="add_message() / add_user_message() append to self.messages, so one ChatHistory "
        "shared by requests is one conversation.",
        run_methods=("add_message", "add_user_message", "add_assistant_message", "add_tool_message"),
    ),
    Entry(
        names=(
            "semantic_kernel.agents.ChatHistoryAgentThread",
            "semantic_kernel.agents.chat_completion.chat_completion_agent.ChatHistoryAgentThread",
        ),
        kind=MEMORY,
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/agents/chat_completion/chat_completion_agent.py",
        why="wraps one ChatHistory (self._chat_history); every agent invoke(thread=...) on it "
        "adds the new messages through on_new_message().",
        run_methods=("on_new_message", "get_messages", "reduce"),
        session_kwargs=("thread_id",),
    ),
    Entry(
        names=(
            "semantic_kernel.agents.AgentGroupChat",
            "semantic_kernel.agents.group_chat.agent_group_chat.AgentGroupChat",
        ),
        kind=AGENT,
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/agents/group_chat/agent_group_chat.py",
        why="keeps self.history (ChatHistory) and is_complete across invoke() calls; every "
        "turn is appended to the shared history.",
        run_methods=(
            "invoke",
            "invoke_stream",
            "invoke_single_turn",
            "add_chat_message",
            "add_chat_messages",
        ),
    ),
    Entry(
        names=("semantic_kernel.Kernel", "semantic_kernel.kernel.Kernel"),
        kind=STATELESS,
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/kernel.py",
        why="a registry of plugins (dict by name), services and filters; invoke() keeps no "
        "conversation (history is passed in as ChatHistory/arguments).",
    ),
    Entry(
        names=(
            "semantic_kernel.functions.kernel_function",
            "semantic_kernel.functions.kernel_function_decorator.kernel_function",
        ),
        kind=TOOL,
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/functions/kernel_function_decorator.py",
        why="@kernel_function(name=...) names the function (else func.__name__); plugins index functions by that name.",
        name_kwargs=("name", "1"),
    ),
)
# --------------------------------------------------------------------------------------------
# Registrations (DUP401/DUP402): methods that add a callback, hook, reply function or tool to
# a long-lived object. Keyed by method name (Catalog.build keeps one per name), so a name used
# by two frameworks is one Registration whose why covers both.
# --------------------------------------------------------------------------------------------
REGISTRATIONS: tuple[Registration, ...] = (
    Registration(
        method="listen",
        framework="discord",
        version="discord.py 2.0+ (Rapptz/discord.py 0019b713)",
        source="discord/ext/commands/bot.py",
        why="BotBase.listen(name) calls add_listener, which appends the function to "
        "self.extra_events[name] with no duplicate check and nothing removes it, and dispatch "
        "schedules every entry: run inside a command, each invocation adds one more listener.",
        receivers=("discord.ext.commands", "discord.Bot", "discord.bot"),
    ),
    Registration(
        method="add_listener",
        framework="discord",
        version="discord.py 2.0+ (Rapptz/discord.py 0019b713)",
        source="discord/ext/commands/bot.py",
        why="BotBase.add_listener appends to self.extra_events[name] with no duplicate check: "
        "one more listener per call, each run for every later event.",
        receivers=("discord.ext.commands", "discord.Bot", "discord.bot"),
    ),
    Registration(
        method="add_handler",
        framework="llama_index, langchain_core",
        version=_LI + "; " + _LCC,
        source="llama_index/core/callbacks/base.py; langchain_core/callbacks/base.py",
        why="LlamaIndex CallbackManager.add_handler is self.handlers.append(handler) with no "
        "check, so a second registration doubles every event; LangChain's skips a handler "
        "already in self.handlers, so only a new instance per call accumulates there.",
        dedupes_same_object_in=("langchain_core", "langchain"),
    ),
    Registration(
        method="set_global_handler",
        framework="llama_index",
        version=_LI,
        source="llama_index/core/callbacks/global_handlers.py",
        why="rebuilds a handler on every call and assigns llama_index.core.global_handler; "
        "integrations such as 'arize_phoenix' also instrument globally and add a span "
        "processor each time: call it once at startup.",
        receivers=("llama_index.core",),
    ),
    Registration(
        method="add_event_handler",
        framework="llama_index",
        version="llama-index-instrumentation 0.6.0",
        source="llama_index_instrumentation/dispatcher.py",
        why="Dispatcher.add_event_handler is self.event_handlers += [handler] with no duplicate check.",
    ),
    Registration(
        method="add_span_handler",
        framework="llama_index",
        version="llama-index-instrumentation 0.6.0",
        source="llama_index_instrumentation/dispatcher.py",
        why="Dispatcher.add_span_handler is self.span_handlers += [handler] with no duplicate check.",
    ),
    Registration(
        method="register_reply",
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/conversable_agent.py",
        why="inserts the reply function into self._reply_func_list (position 0) on every "
        "call with no duplicate check, so the same reply runs once per registration.",
    ),
    Registration(
        method="register_hook",
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/conversable_agent.py",
        why="appends to self.hook_lists[method]; the same function twice fails an assert, but "
        "a new closure per call accumulates and every hook runs on every message.",
    ),
    Registration(
        method="register_function",
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/conversable_agent.py",
        why="ConversableAgent.register_function updates self._function_map by name (with an "
        "'is being overridden' warning) and autogen.register_function(f, caller=, executor=) "
        "registers on two long-lived agents: per request it swaps one user's function for "
        "another's.",
    ),
    Registration(
        method="register_for_llm",
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/conversable_agent.py",
        why="rewrites the agent's llm_config['tools'] (update_tool_signature replaces a "
        "same-named tool with a warning): per-request registration mutates a shared agent.",
    ),
    Registration(
        method="register_for_execution",
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/conversable_agent.py",
        why="adds the function to the executor's _function_map by name: per-request "
        "registration swaps it on a shared executor agent.",
    ),
    Registration(
        method="register_nested_chats",
        framework="autogen",
        version=_AG2,
        source="autogen/agentchat/conversable_agent.py",
        why="registers a new reply function (register_reply) for the nested chat queue on every call.",
    ),
    Registration(
        method="add_callback",
        framework="strands",
        version=_ST,
        source="strands/hooks/registry.py",
        why="HookRegistry.add_callback bisect.insorts a new entry each call with no check for the same callback.",
    ),
    Registration(
        method="add_hook",
        framework="strands",
        version=_ST,
        source="strands/hooks/registry.py",
        why="HookRegistry.add_hook(provider) calls provider.register_hooks(self), adding all "
        "its callbacks again; Agent.add_hook(callback) forwards to add_callback.",
    ),
    Registration(
        method="add_trace_processor",
        framework="openai_agents",
        version=_OA,
        source="agents/tracing/__init__.py",
        why="appends the processor to the global trace provider's processor list; per-call "
        "registration exports every span once per registration.",
    ),
    Registration(
        method="add_filter",
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/filters/kernel_filters_extension.py",
        why="inserts (id(filter), filter) at the front of the kernel's filter list each call "
        "with no duplicate check, so a filter registered per request runs N times.",
        receivers=("semantic_kernel.Kernel",),
    ),
    Registration(
        method="tool",
        framework="pydantic_ai",
        version=_PA,
        source="pydantic_ai/toolsets/function.py",
        why="@agent.tool adds to the agent's FunctionToolset, which raises UserError 'Tool "
        "name conflicts with existing tool' the second time: per-request use breaks the "
        "second request (generic name: match only on a pydantic_ai.Agent receiver).",
        receivers=("pydantic_ai.Agent",),
    ),
    Registration(
        method="tool_plain",
        framework="pydantic_ai",
        version=_PA,
        source="pydantic_ai/toolsets/function.py",
        why="@agent.tool_plain adds to the agent's FunctionToolset, which raises UserError "
        "'Tool name conflicts with existing tool' the second time: per-request use breaks "
        "the second request.",
        receivers=("pydantic_ai.Agent",),
    ),
    Registration(
        method="system_prompt",
        framework="pydantic_ai",
        version=_PA,
        source="pydantic_ai/agent/__init__.py",
        why="@agent.system_prompt appends the function to self._system_prompt_functions with no "
        "duplicate check, so registering one per request on a shared agent adds every "
        "session's prompt to every later run (pydantic/pydantic-ai#1209 asks how to give each "
        "session its own prompt: per-run instructions= or a dynamic prompt reading deps).",
        receivers=("pydantic_ai.Agent",),
    ),
    Registration(
        method="instructions",
        framework="pydantic_ai",
        version=_PA,
        source="pydantic_ai/agent/__init__.py",
        why="@agent.instructions appends the function to self._instructions with no duplicate "
        "check: per-request registration on a shared agent accumulates every session's "
        "instructions.",
        receivers=("pydantic_ai.Agent",),
    ),
    Registration(
        method="add_tool",
        framework="agno",
        version=_AGNO,
        source="agno/agent/_init.py",
        why="Agent.add_tool is agent.tools.append(tool) with no duplicate check, so the "
        "shared agent's tool list grows per call.",
        receivers=("agno.agent.Agent", "agno.team.Team"),
    ),
)

# --------------------------------------------------------------------------------------------
# Retry settings (DUP507): what one retry of a framework's own retry setting repeats, read in
# the framework's source. "tools" re-runs the agent loop and so every tool the failed attempt
# had already called; "runnable" re-runs whatever the receiver runs (tools only when it is an
# agent or a graph with a tool node); "model", "validation" and "http" run no tool again.
# --------------------------------------------------------------------------------------------
RETRY_SETTINGS: tuple[RetrySetting, ...] = (
    RetrySetting(
        names=("crewai.Agent", "crewai.agent.Agent", "crewai.agent.core.Agent"),
        keywords=("max_retry_limit",),
        reruns="tools",
        default=2,
        framework="crewai",
        version=_CR,
        source="crewai/agent/core.py",
        why="an exception in execute_task goes to _handle_execution_error, which counts "
        "_times_executed against max_retry_limit and calls execute_task again: the task's whole "
        "agent loop, tools included, from the start (the default 2 applies to every agent).",
        summary="re-runs the agent's whole task after any error, tools included",
        by_default=True,
    ),
    RetrySetting(
        names=("crewai.Task", "crewai.task.Task"),
        keywords=("guardrail_max_retries", "max_retries"),
        reruns="tools",
        default=3,
        framework="crewai",
        version=_CR,
        source="crewai/task.py",
        why="when a guardrail rejects the output, _invoke_guardrail_function calls "
        "agent.execute_task(task, context, tools) again up to guardrail_max_retries times "
        "(max_retries is its deprecated alias): the tools run again with the feedback.",
        summary="re-runs the task's agent, tools included, each time the guardrail rejects the output",
        requires=("guardrail", "guardrails"),
        by_default=True,
    ),
    RetrySetting(
        names=("agno.agent.Agent", "agno.agent.agent.Agent", "agno.team.Team", "agno.team.team.Team"),
        keywords=("retries",),
        reruns="tools",
        default=0,
        framework="agno",
        version=_AGNO,
        source="agno/agent/_run.py; agno/team/_run.py",
        why="run() loops over range(retries + 1) around the whole run (session read, model "
        "calls and tool calls) and starts again after any exception, so a tool that already "
        "ran runs again (agno-agi/agno#10366).",
        summary="re-runs the whole agent run, tools included, after any exception",
        tools_kwargs=("tools", "members"),
    ),
    RetrySetting(
        names=(
            "langchain.agents.middleware.ToolRetryMiddleware",
            "langchain.agents.middleware.tool_retry.ToolRetryMiddleware",
        ),
        keywords=("max_retries",),
        reruns="tools",
        default=2,
        framework="langchain",
        version="langchain 1.5.0",
        source="langchain/agents/middleware/tool_retry.py",
        why="wrap_tool_call calls the tool handler again after a failed call (max_retries "
        "defaults to 2, all tools unless tools= names some): a tool that failed after its "
        "side effect runs again.",
        summary="calls a tool again after it failed",
        by_default=True,
    ),
    RetrySetting(
        names=("langchain_core.runnables.Runnable", "langchain_core.runnables.base.Runnable"),
        keywords=(),
        reruns="runnable",
        default=2,
        framework="langchain_core",
        version="langchain-core 1.8.2",
        source="langchain_core/runnables/retry.py",
        why="with_retry() wraps the runnable in RunnableRetry, whose _invoke calls the whole "
        "bound runnable again per attempt: an AgentExecutor or an agent graph re-runs its "
        "tools, a chat model only repeats the model call.",
        summary="re-invokes the whole runnable after an error",
        method="with_retry",
    ),
    # Settings with the same names that run no tool again (near-misses, kept so the reason is
    # written down).
    RetrySetting(
        names=("pydantic_ai.Agent", "pydantic_ai.agent.Agent"),
        keywords=("retries",),
        reruns="validation",
        default=1,
        framework="pydantic_ai",
        version=_PA,
        source="pydantic_ai/tool_manager.py",
        why="the budget for ModelRetry and argument ValidationError: the error goes back to the "
        "model, which may call the tool again with new arguments; the framework never repeats "
        "a tool call that raised anything else (_check_max_retries).",
        summary="lets the model correct a tool call's arguments",
    ),
    RetrySetting(
        names=("openai.OpenAI", "openai.AsyncOpenAI", "openai.AzureOpenAI", "openai.AsyncAzureOpenAI"),
        keywords=("max_retries",),
        reruns="http",
        default=2,
        framework="openai",
        version="openai 3.54.0",
        source="openai/_base_client.py",
        why="retries one HTTP request to the API (connection errors, 408/409/429/5xx); the client executes no tools.",
        summary="repeats one HTTP request",
    ),
    RetrySetting(
        names=("agents.ModelSettings", "agents.model_settings.ModelSettings"),
        keywords=("retry",),
        reruns="model",
        default=0,
        framework="openai_agents",
        version=_OA,
        source="agents/model_settings.py",
        why="ModelRetrySettings: opt-in runner-managed retries of the model call only; tool "
        "calls are not part of the retried request.",
        summary="repeats the model call",
    ),
    RetrySetting(
        names=("strands.Agent", "strands.agent.Agent", "strands.agent.agent.Agent"),
        keywords=("retry_strategy",),
        reruns="model",
        default=6,
        framework="strands",
        version=_ST,
        source="strands/agent/agent.py",
        why="ModelRetryStrategy retries the model call on throttling and transient errors "
        "(max_attempts=6 by default); tools already run are not repeated.",
        summary="repeats the model call",
    ),
)

# The OpenAI Agents SDK's stop-at-tool settings (DUP204), openai-agents 0.24.0. Agent's
# tool_use_behavior "stop_on_first_tool" or a StopAtTools dict makes a tool result the final
# output (run_internal/turn_resolution.py: check_for_final_output_from_tools takes
# tool_results[0] or the first listed tool's result), but only after every function tool of the
# response has run (execute_function_tool_calls). ModelSettings.parallel_tool_calls defaults to
# None, which leaves the request field out (models/openai_responses.py,
# models/openai_chatcompletions.py), so the provider's default applies: parallel tool calls on.
SDK_AGENTS = frozenset({"agents.Agent", "agents.agent.Agent"})
STOP_AT_TOOLS = frozenset({"agents.StopAtTools", "agents.agent.StopAtTools"})
MODEL_SETTINGS = frozenset({"agents.ModelSettings", "agents.model_settings.ModelSettings"})
# Agent factories whose tools are a positional argument (index), besides ``tools=``:
# langgraph-prebuilt 1.1.2 ``create_react_agent(model, tools)``, langchain 1.5.0
# ``create_agent(model, tools=None)``, langgraph ``ToolNode(tools)``.
TOOLS_POSITION = {
    "langgraph.prebuilt.create_react_agent": 1,
    "langgraph.prebuilt.chat_agent_executor.create_react_agent": 1,
    "langchain.agents.create_agent": 1,
    "langchain.agents.factory.create_agent": 1,
    "langgraph.prebuilt.ToolNode": 0,
    "langgraph.prebuilt.tool_node.ToolNode": 0,
}

# --------------------------------------------------------------------------------------------
# Model clients and per-session stores of the frameworks above, and multi-agent wrappers: added
# so that a module-level LLM (the commonest shared object) is known to be safe, and so that a
# per-session store built with a constant key reaches DUP103.
# --------------------------------------------------------------------------------------------
_MORE = (
    Entry(
        names=(
            "llama_index.llms.openai.OpenAI",
            "llama_index.llms.openai.base.OpenAI",
            "llama_index.llms.anthropic.Anthropic",
            "llama_index.llms.anthropic.base.Anthropic",
        ),
        kind=STATELESS,
        framework="llama_index",
        version="llama-index-llms-openai 0.8.3; llama-index-llms-anthropic 0.12.3",
        source="llama_index/llms/openai/base.py",
        why="an LLM wrapper (model, api key, client); chat()/achat() send the messages they "
        "are passed and append to nothing on self.",
        run_methods=("chat", "achat", "complete", "acomplete", "stream_chat", "astream_chat"),
    ),
    Entry(
        names=(
            "autogen.OpenAIWrapper",
            "autogen.oai.OpenAIWrapper",
            "autogen.oai.client.OpenAIWrapper",
        ),
        kind=STATELESS,
        framework="autogen",
        version="ag2 0.14.0",
        source="autogen/oai/client.py",
        why="holds the client list built from config_list plus usage summaries; create() "
        "sends the messages it is given, the conversation lives on the agents.",
        run_methods=("create",),
    ),
    Entry(
        names=(
            "strands.multiagent.Swarm",
            "strands.multiagent.swarm.Swarm",
            "strands.multiagent.graph.Graph",
            "strands.multiagent.GraphBuilder.build",
            "strands.multiagent.graph.GraphBuilder.build",
        ),
        kind=AGENT,
        framework="strands",
        version=_ST,
        source="strands/multiagent/swarm.py",
        why="each invocation replaces self.state (SwarmState / GraphState) and resets and "
        "runs the node agents, which are stateful strands.Agent objects, so two concurrent "
        "invocations overwrite each other's state.",
        run_methods=("__call__", "invoke_async", "stream_async"),
    ),
    Entry(
        names=(
            "strands.models.BedrockModel",
            "strands.models.bedrock.BedrockModel",
            "strands.models.openai.OpenAIModel",
        ),
        kind=STATELESS,
        framework="strands",
        version=_ST + " (with the openai extra)",
        source="strands/models/bedrock.py",
        why="model config and a client; stream() formats the messages the agent passes and "
        "keeps no history (the history is Agent.messages).",
    ),
    Entry(
        names=(
            "langchain_community.chat_message_histories.RedisChatMessageHistory",
            "langchain_community.chat_message_histories.redis.RedisChatMessageHistory",
            "langchain_community.chat_message_histories.SQLChatMessageHistory",
            "langchain_community.chat_message_histories.sql.SQLChatMessageHistory",
            "langchain_community.chat_message_histories.PostgresChatMessageHistory",
        ),
        kind=MEMORY,
        framework="langchain_core",
        version=_LCCOM,
        source="langchain_community/chat_message_histories/redis.py",
        why="bound to one conversation by its first argument session_id (messages stored "
        "under key_prefix + session_id); add_message() appends to that conversation.",
        run_methods=("add_message", "add_messages", "aadd_messages", "add_user_message", "add_ai_message"),
        session_kwargs=("session_id", "0"),
    ),
    Entry(
        names=(
            "langgraph.checkpoint.sqlite.SqliteSaver",
            "langgraph.checkpoint.sqlite.SqliteSaver.from_conn_string",
            "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver",
            "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver.from_conn_string",
            "langgraph.checkpoint.postgres.PostgresSaver",
            "langgraph.checkpoint.postgres.PostgresSaver.from_conn_string",
            "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver",
            "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver.from_conn_string",
        ),
        kind=STATELESS,
        framework="langgraph",
        version="langgraph-checkpoint-sqlite 3.1.2; langgraph-checkpoint-postgres 3.2.0",
        source="langgraph/checkpoint/sqlite/__init__.py",
        why="checkpoint rows are keyed by thread_id (and checkpoint_ns) from the run config; "
        "one saver per process is the design.",
        session_kwargs=("thread_id",),
    ),
    Entry(
        names=(
            "smolagents.InferenceClientModel",
            "smolagents.models.InferenceClientModel",
            "smolagents.OpenAIServerModel",
            "smolagents.models.OpenAIServerModel",
            "smolagents.OpenAIModel",
            "smolagents.AzureOpenAIServerModel",
            "smolagents.LiteLLMModel",
            "smolagents.models.LiteLLMModel",
        ),
        kind=STATELESS,
        framework="smolagents",
        version=_SA,
        source="smolagents/models.py",
        why="client config (model_id, client_kwargs); generate() sends the messages the "
        "agent passes and appends nothing to self.",
        run_methods=("generate", "generate_stream", "__call__"),
    ),
    Entry(
        names=("crewai.LLM", "crewai.llm.LLM"),
        kind=STATELESS,
        framework="crewai",
        version=_CR,
        source="crewai/llm.py",
        why="model name and parameters plus token-usage counters; call() sends the messages "
        "it is passed and keeps no history.",
        run_methods=("call", "acall"),
    ),
    Entry(
        names=(
            "semantic_kernel.connectors.ai.open_ai.OpenAIChatCompletion",
            "semantic_kernel.connectors.ai.open_ai.AzureChatCompletion",
        ),
        kind=STATELESS,
        framework="semantic_kernel",
        version=_SK,
        source="semantic_kernel/connectors/ai/open_ai/services/open_ai_chat_completion.py",
        why="an AI service (client, model id); get_chat_message_contents(chat_history, ...) "
        "reads the ChatHistory it is given and keeps none.",
        run_methods=("get_chat_message_contents", "get_streaming_chat_message_contents"),
    ),
)

# --------------------------------------------------------------------------------------------
# Toolkits that keep one user's account on the instance (DUP105), read in agno 3.1.10 with
# google-api-python-client, zep-cloud and mem0ai installed (the toolkits import them).
# --------------------------------------------------------------------------------------------
_USER_STATE_TOOLKITS = (
    Entry(
        names=(
            "agno.tools.google.GmailTools",
            "agno.tools.google.gmail.GmailTools",
            "agno.tools.google.GoogleCalendarTools",
            "agno.tools.google.calendar.GoogleCalendarTools",
            "agno.tools.google.GoogleDriveTools",
            "agno.tools.google.drive.GoogleDriveTools",
            "agno.tools.google.GoogleSheetsTools",
            "agno.tools.google.sheets.GoogleSheetsTools",
            "agno.tools.google.GoogleSlidesTools",
            "agno.tools.google.slides.GoogleSlidesTools",
        ),
        kind=TOOL,
        framework="agno",
        version=_AGNO,
        source="agno/tools/google/auth/decorator.py",
        why="every tool method is wrapped by google_authenticate(): the first call resolves "
        "credentials (instance creds, service account, token DB or the OAuth flow; "
        "GoogleToolkit._resolve_creds in agno/tools/google/base.py takes no user) and stores "
        "them in self.creds and the built client in self._service, which every later call "
        "reuses: one instance acts as the first user's account for everyone "
        "(agno-agi/agno PR #7377).",
        user_state_kwargs=("*",),
    ),
    Entry(
        names=(
            "agno.tools.gmail.GmailTools",
            "agno.tools.googlecalendar.GoogleCalendarTools",
            "agno.tools.googlesheets.GoogleSheetsTools",
        ),
        kind=TOOL,
        framework="agno",
        version="agno 1.8.4",
        source="agno/tools/gmail.py",
        why="the module paths of agno 1.x (moved under agno.tools.google in 2.x): the "
        "authenticate decorator runs _auth() once, which loads token.json or runs the local "
        "OAuth flow, and keeps self.creds and self.service for every later call "
        "(googlecalendar.py and googlesheets.py do the same).",
        user_state_kwargs=("*",),
    ),
    Entry(
        names=("agno.tools.zep.ZepTools",),
        kind=TOOL,
        framework="agno",
        version=_AGNO,
        source="agno/tools/zep.py",
        why="initialize() fixes self.user_id and self.session_id once (the given ones, or a "
        "generated user-<uuid> and thread) and every memory read and write uses them: one "
        "instance is one Zep user and thread for all callers.",
        user_state_kwargs=("*",),
    ),
    Entry(
        names=("agno.tools.mem0.Mem0Tools",),
        kind=TOOL,
        framework="agno",
        version=_AGNO,
        source="agno/tools/mem0.py",
        why="_get_user_id() prefers self.user_id (the constructor's user_id=) over "
        "run_context.user_id: built with user_id=, every caller reads and writes that one "
        "user's memories; without it the run's user_id is used.",
        user_state_kwargs=("user_id",),
    ),
)

ENTRIES: tuple[Entry, ...] = (
    *_LLAMA_INDEX,
    *_AUTOGEN_02,
    *_AUTOGEN_AGENTCHAT,
    *_AG2_NEW_ENTRIES,
    *_STRANDS,
    *_LANGCHAIN,
    *_LANGGRAPH,
    *_CREWAI,
    *_OPENAI_AGENTS,
    *_PYDANTIC_AI,
    *_SMOLAGENTS,
    *_GOOGLE_ADK,
    *_AGNO_ENTRIES,
    *_USER_STATE_TOOLKITS,
    *_SEMANTIC_KERNEL,
    *_PLAIN_CLIENTS,
    *_MORE,
)

# --------------------------------------------------------------------------------------------
# Callables the analyses name directly. They are not entries (they build nothing a rule
# tracks): they are how a decorator, a loop or a call is recognised by its qualified name.
# Sources as for the entries above; the standard library's from the Python 3.11 docs.
# --------------------------------------------------------------------------------------------

# Catalogued objects with run methods that run no tools: a retry around them repeats a model
# call, not a tool call (DUP501-505; the entries above cite their sources).
LLM_ONLY = frozenset(
    {
        "langchain_openai.ChatOpenAI",
        "autogen_ext.models.openai.OpenAIChatCompletionClient",
        "langchain.chains.LLMChain",
        "langchain.chains.ConversationChain",
    }
)
# A compiled LangGraph graph runs tools only when the file builds it with a tool node
# (langgraph 1.2.22 / langgraph-prebuilt 1.1.2: ``StateGraph.compile``, ``ToolNode``,
# ``tools_condition``).
GRAPH_ENTRIES = frozenset({"langgraph.graph.StateGraph.compile"})
TOOL_NODE_CALLEES = frozenset(
    {
        "langgraph.prebuilt.ToolNode",
        "langgraph.prebuilt.tool_node.ToolNode",
        "langgraph.prebuilt.tools_condition",
        "langgraph.prebuilt.tool_node.tools_condition",
    }
)
# Chat-model requests that can answer with tool calls, by function (litellm 1.x ``completion``/
# ``acompletion``, ollama-python ``chat``, mistralai 1.x ``Mistral.chat.complete``); the SDK
# clients' ``chat.completions.create``/``messages.create`` are recognised by method (runs.py).
MODEL_CALLEES = frozenset(
    {
        "litellm.completion",
        "litellm.acompletion",
        "ollama.chat",
        "ollama.AsyncClient.chat",
        "mistralai.Mistral.chat.complete",
    }
)
# Decorators that make one cached value for the whole process: every caller (every request)
# gets the object a decorated factory returned first (functools ``lru_cache``/``cache``,
# Streamlit ``cache_resource`` and its old name ``experimental_singleton``, cachetools ``cached``).
PROCESS_CACHES = frozenset(
    {
        "functools.lru_cache",
        "functools.cache",
        "streamlit.cache_resource",
        "streamlit.experimental_singleton",
        "cachetools.cached",
    }
)
# Decorators after which a function body runs once (per process, or per instance for
# ``functools.cached_property``, which is why it is not a process cache): DUP303/401.
RUN_ONCE_CACHES = PROCESS_CACHES | {"functools.cached_property"}
# FastAPI's dependency marker (``Depends(get_agent)``; fastapi 0.115 ``fastapi.params.Depends``).
DEPENDS = frozenset({"fastapi.Depends", "fastapi.params.Depends"})
# Retry decorators (DUP501): tenacity 9 (``tenacity.retry``), backoff 2.2 (``on_exception``,
# ``on_predicate``), stamina 24 (``stamina.retry``), retrying 1.3, retry 0.9, opnieuw,
# async_retrying, aioretry.
RETRY_DECORATORS = frozenset(
    {
        "tenacity.retry",
        "tenacity.asyncio.retry",
        "backoff.on_exception",
        "backoff.on_predicate",
        "stamina.retry",
        "retrying.retry",
        "retry.retry",
        "retry.api.retry",
        "opnieuw.retry",
        "async_retrying.retry",
        "aioretry.retry",
    }
)
# Iterables that are retry loops by construction: ``for attempt in Retrying(...): with attempt:``
# (tenacity 9 ``Retrying``/``AsyncRetrying``, stamina 24 ``retry_context``).
RETRYING_ITERABLES = frozenset(
    {
        "tenacity.Retrying",
        "tenacity.AsyncRetrying",
        "tenacity.asyncio.AsyncRetrying",
        "stamina.retry_context",
    }
)
# Iterables that count rather than hold work: a ``for`` over one is a retry or a step budget.
COUNTED_ITERABLES = frozenset({"range", "builtins.range", "itertools.count", "itertools.repeat"})
# Functions that read a line from the user (``input``, rich ``Prompt.ask``, click/typer
# ``prompt``): a loop that calls one is a REPL, not a retry or a tool loop.
INPUT_FUNCS = frozenset({"input", "builtins.input", "rich.prompt.Prompt.ask", "click.prompt", "typer.prompt"})
# Calls that run coroutines concurrently (asyncio ``gather``/``wait``/``as_completed``/
# ``create_task``/``ensure_future``, anyio ``create_task_group``): DUP201.
ASYNC_FANOUT = frozenset(
    {
        "asyncio.gather",
        "asyncio.wait",
        "asyncio.as_completed",
        "asyncio.create_task",
        "asyncio.ensure_future",
        "anyio.create_task_group",
    }
)
# Of those, the ones that wait for the tasks rather than start one more (not a "spawn").
ASYNC_WAITS = frozenset({"asyncio.gather", "asyncio.wait", "asyncio.as_completed"})
# Calls that run a callable in another thread (``threading.Thread``, ``asyncio.to_thread``,
# ``ThreadPoolExecutor.submit``): DUP202.
THREAD_CALLS = frozenset({"threading.Thread", "asyncio.to_thread", "concurrent.futures.ThreadPoolExecutor.submit"})
# Iterators that yield results in completion order, not request order (DUP203).
COMPLETION_ORDER = frozenset({"asyncio.as_completed", "concurrent.futures.as_completed", "anyio.as_completed"})
