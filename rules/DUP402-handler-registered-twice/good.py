import os

from autogen import Agent, AssistantAgent, UserProxyAgent
from langchain_core.callbacks import CallbackManager, StdOutCallbackHandler
from llama_index.core.callbacks import CallbackManager as LlamaCallbackManager
from llama_index.core.callbacks import LlamaDebugHandler, TokenCountingHandler
from strands import Agent as StrandsAgent
from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent
from telegram.ext import Application, MessageHandler, filters

from .audit import audit_reply, post_tool_audit, pre_tool_audit
from .tools import crm_lookup, send_email

# two different handlers on one manager
token_counter = TokenCountingHandler()
callback_manager = LlamaCallbackManager([])
callback_manager.add_handler(token_counter)
callback_manager.add_handler(LlamaDebugHandler())

# one handler in either branch: only one registration runs
if os.getenv("VERBOSE"):
    callback_manager.add_handler(LlamaDebugHandler(print_trace_on_end=True))
else:
    callback_manager.add_handler(LlamaDebugHandler(print_trace_on_end=True))

# removed before it is added back
callback_manager.remove_handler(token_counter)
callback_manager.add_handler(token_counter)

# LangChain's manager skips a handler object it already holds
stdout = StdOutCallbackHandler()
manager = CallbackManager([])
manager.add_handler(stdout)
manager.add_handler(stdout)


# the same reply on two different agents
def build_pair(llm_config) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("support", llm_config=llm_config)
    proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config=False)
    assistant.register_reply([Agent, None], audit_reply, position=0)
    proxy.register_reply([Agent, None], audit_reply, position=0)
    return assistant, proxy


# the same callback on two different events, and a second agent built in between
def build_agents() -> list[StrandsAgent]:
    agent = StrandsAgent(tools=[crm_lookup], callback_handler=None)
    agent.hooks.add_callback(BeforeToolCallEvent, pre_tool_audit)
    agent.hooks.add_callback(AfterToolCallEvent, pre_tool_audit)
    first = agent
    agent = StrandsAgent(tools=[send_email], callback_handler=None)
    agent.hooks.add_callback(BeforeToolCallEvent, pre_tool_audit)
    agent.hooks.add_callback(AfterToolCallEvent, post_tool_audit)
    return [first, agent]


# the first registration returns early: the two never run together
def install(debug: bool) -> None:
    if debug:
        callback_manager.add_handler(token_counter)
        return
    callback_manager.add_handler(token_counter)


# try/except: the second runs only when the first failed
def install_fallback(manager: LlamaCallbackManager) -> None:
    try:
        manager.add_handler(token_counter)
    except ValueError:
        manager.add_handler(token_counter)


# python-telegram-bot's Application.add_handler is another library's method (and within one
# group only the first matching handler runs)
bot = Application.builder().token("TOKEN").build()
bot.add_handler(MessageHandler(filters.TEXT, print))
bot.add_handler(MessageHandler(filters.TEXT, print))


# one decorator factory applied to two functions registers two tools
def register_tools(executor: UserProxyAgent) -> None:
    executor.register_for_execution()(crm_lookup)
    executor.register_for_execution()(send_email)
