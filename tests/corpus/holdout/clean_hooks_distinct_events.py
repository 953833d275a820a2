"""Agent factory with audit hooks: one handler, two different events; LangChain re-adds are no-ops."""
import logging

from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from strands import Agent
from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent

from audit.sink import write_audit
from procurement.tools import create_po, approve_po

log = logging.getLogger(__name__)


def audit_tool_event(event) -> None:
    write_audit(type(event).__name__, event.tool_use["name"], event.tool_use["input"])


class TimingHandler(BaseCallbackHandler):
    def on_llm_end(self, response, **kwargs) -> None:
        log.info("llm call finished: %s", response.llm_output)


timing = TimingHandler()
lc_callbacks = CallbackManager([timing])
lc_callbacks.add_handler(timing)


def build_procurement_agent(requester: str) -> Agent:
    agent = Agent(
        tools=[create_po, approve_po],
        system_prompt=f"Raise purchase orders for {requester}; approvals need a manager.",
        callback_handler=None,
    )
    agent.hooks.add_callback(BeforeToolCallEvent, audit_tool_event)
    agent.hooks.add_callback(AfterToolCallEvent, audit_tool_event)
    return agent


def handle(requester: str, text: str) -> str:
    return str(build_procurement_agent(requester)(text))
