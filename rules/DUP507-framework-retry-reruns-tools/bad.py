from agno.agent import Agent as AgnoAgent
from agno.team import Team
from crewai import Agent, Crew, Task
from crewai.tools import tool
from langchain.agents import AgentExecutor, create_agent, create_tool_calling_agent
from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.tools import tool as lc_tool
from langgraph.prebuilt import create_react_agent

from .clients import llm, mailer, payments, prompt

RETRIES = 3


@tool("Send email")
def send_email(to: str, body: str) -> str:
    """Send an email to a customer."""
    return mailer.send(to, body)


@tool("Search knowledge base")
def search_kb(query: str) -> str:
    """Look up help articles."""
    return mailer.search(query)


# CrewAI: the agent's task re-runs from the start after any error, the email included
# (crewAIInc/crewAI#5802)
support = Agent(
    role="Support",
    goal="Answer and follow up by email",
    backstory="Patient and precise.",
    tools=[search_kb, send_email],
    max_retry_limit=RETRIES,  # error: DUP507
)

# CrewAI: a rejected output makes the agent run the task again, tools included
follow_up = Task(
    description="Email the customer a summary of {ticket}",
    expected_output="The email that was sent",
    agent=support,
    guardrail=lambda output: (len(output.raw) < 2000, output.raw),
    guardrail_max_retries=2,  # error: DUP507
)
crew = Crew(agents=[support], tasks=[follow_up])

# CrewAI's default: every agent retries its task twice unless max_retry_limit=0
notifier = Agent(role="Notifier", goal="Tell customers", backstory="Brief.", tools=[send_email])  # error: DUP507


def refund_payment(order_id: str, amount: int) -> str:
    return payments.refund(order_id, amount)


# Agno: the whole run starts again after an exception (agno-agi/agno#10366)
billing = AgnoAgent(name="billing", tools=[refund_payment], retries=2)  # error: DUP507
billing_team = Team(members=[billing], retries=3)  # error: DUP507


@lc_tool
def create_ticket(title: str) -> str:
    """Open a ticket in the tracker."""
    return payments.post("/tickets", json={"title": title}).text


# LangChain 1.x: the middleware calls a failed tool again
triage = create_agent(
    "openai:gpt-4o",
    [create_ticket, search_kb],
    middleware=[ToolRetryMiddleware(max_retries=3)],  # error: DUP507
)

# LangGraph / LangChain: with_retry re-invokes the whole agent, tools included
planner = create_react_agent(llm, [create_ticket]).with_retry(stop_after_attempt=3)  # error: DUP507
executor = AgentExecutor(agent=create_tool_calling_agent(llm, [create_ticket], prompt), tools=[create_ticket])
reliable_executor = executor.with_retry(stop_after_attempt=4)  # error: DUP507
