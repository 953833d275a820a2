from agno.agent import Agent as AgnoAgent
from crewai import Agent
from crewai.tools import tool
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRetryMiddleware, ToolRetryMiddleware
from langchain_core.tools import tool as lc_tool
from langchain_openai import ChatOpenAI
from openai import OpenAI
from pydantic_ai import Agent as PydanticAgent

from dupguard.runtime import idempotent

from .clients import mailer, payments


@tool("Search knowledge base")
def search_kb(query: str) -> str:
    """Look up help articles."""
    return mailer.search(query)


@tool("Send email")
def send_email(to: str, body: str) -> str:
    """Send an email to a customer."""
    return mailer.send(to, body)


# retries on an agent whose tools only read
researcher = Agent(role="Research", goal="g", backstory="b", tools=[search_kb], max_retry_limit=3)

# the framework retry turned off for the agent that writes
mailer_agent = Agent(role="Mail", goal="g", backstory="b", tools=[send_email], max_retry_limit=0)


# a write made idempotent: a retried run gets the stored result
@idempotent(key=lambda order_id, amount: f"refund:{order_id}:{amount}")
def refund_payment(order_id: str, amount: int) -> str:
    return payments.refund(order_id, amount)


billing = AgnoAgent(name="billing", tools=[refund_payment], retries=2)

# pydantic-ai: retries let the model fix a tool call's arguments; no tool is repeated
assistant = PydanticAgent("openai:gpt-4o", tools=[refund_payment], retries=3)

# the HTTP client retries one request; the chat model retries the model call
client = OpenAI(max_retries=5)
llm = ChatOpenAI(model="gpt-4o").with_retry(stop_after_attempt=3)
bound = ChatOpenAI(model="gpt-4o").bind_tools([send_email]).with_retry(stop_after_attempt=3)


@lc_tool
def lookup_order(order_id: str) -> str:
    """Read an order."""
    return payments.get(order_id)


# tool retries only for the tools that read; model retries for the rest
triage = create_agent(
    "openai:gpt-4o",
    [lookup_order, send_email],
    middleware=[ToolRetryMiddleware(max_retries=3, tools=["lookup_order"]), ModelRetryMiddleware(max_retries=3)],
)
