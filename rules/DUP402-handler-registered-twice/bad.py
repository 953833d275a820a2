import os

from agents import add_trace_processor
from autogen import Agent, AssistantAgent, UserProxyAgent
from langchain_core.callbacks import CallbackManager, StdOutCallbackHandler
from llama_index.core.callbacks import CallbackManager as LlamaCallbackManager
from llama_index.core.callbacks import TokenCountingHandler
from llama_index.llms.openai import OpenAI
from strands import Agent as StrandsAgent
from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent

from .audit import audit_reply, post_tool_audit, pre_tool_audit, span_exporter
from .handlers import MyHandler
from .tools import crm_lookup, send_email

# LlamaIndex: the same counter added twice to one callback manager
token_counter = TokenCountingHandler()
callback_manager = LlamaCallbackManager([])
callback_manager.add_handler(token_counter)
if os.getenv("LLAMA_DEBUG"):
    callback_manager.add_handler(MyHandler())
callback_manager.add_handler(token_counter)  # error: DUP402

# LlamaIndex: two identical handlers on the LLM's callback manager
llm = OpenAI(model="gpt-4o-mini")
llm.callback_manager.add_handler(MyHandler())
llm.callback_manager.add_handler(MyHandler())  # error: DUP402

# OpenAI Agents SDK: the exporter appended twice to the global trace provider
add_trace_processor(span_exporter)
add_trace_processor(span_exporter)  # error: DUP402

# LangChain: two fresh stdout handlers (the manager only skips the *same* object)
manager = CallbackManager([])
manager.add_handler(StdOutCallbackHandler())
manager.add_handler(StdOutCallbackHandler())  # error: DUP402


# AG2: the audit reply registered twice on the assistant
def build_pair(llm_config) -> tuple[AssistantAgent, UserProxyAgent]:
    assistant = AssistantAgent("support", llm_config=llm_config)
    proxy = UserProxyAgent("proxy", human_input_mode="NEVER", code_execution_config=False)
    assistant.register_reply([Agent, None], audit_reply, position=0)
    proxy.register_reply([Agent, None], audit_reply, position=0)
    assistant.register_reply([Agent, None], audit_reply, position=0)  # error: DUP402
    return assistant, proxy


# Strands: the audit hook added again under a config flag
def build_outreach_agent(strict: bool) -> StrandsAgent:
    agent = StrandsAgent(tools=[crm_lookup, send_email], callback_handler=None)
    agent.hooks.add_callback(AfterToolCallEvent, post_tool_audit)
    if strict:
        agent.hooks.add_callback(AfterToolCallEvent, post_tool_audit)  # error: DUP402
        agent.hooks.add_callback(BeforeToolCallEvent, pre_tool_audit)
    return agent
