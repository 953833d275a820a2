# Case from a public application, rewritten in our own words (no code copied):
# weet-ai/agentic-app-openai-agents-sdk-mcp-example, backend/src/agent_/data_analysis.py
# (commit 128ec1ccc647a7cfff6c10eaa6657eb2d25e5cfc): a FastAPI route calls a helper that opens
# an MCP connection per request and assigns it to a module-level OpenAI Agents SDK agent, so a
# concurrent request calls tools through a connection another request owns and closes.
from agents import Agent, Runner
from agents.mcp import MCPServerSse
from fastapi import FastAPI

api = FastAPI()

reporting_agent = Agent(
    name="Reporting analyst",
    instructions="Turn the user's question into a query, run it with the tools, summarise the rows.",
)
gatekeeper = Agent(
    name="Gatekeeper",
    instructions="Refuse questions outside sales reporting; hand the rest to the analyst.",
)


def tool_connection(names: list[str]) -> MCPServerSse:
    return MCPServerSse(params={"url": "http://reporting-tools:8000/sse"}, allowed_tool_names=names)


async def answer_question(question: str):
    async with tool_connection(["run_query", "describe_tables"]) as connection:
        gatekeeper.handoffs = [reporting_agent]
        reporting_agent.mcp_servers = [connection]
        outcome = await Runner.run(starting_agent=gatekeeper, input=question)
        return outcome.final_output


@api.post("/reports/ask")
async def ask(question: str):
    return {"answer": await answer_question(question)}


@api.get("/reports/agents")
async def describe_agents():
    # read-only: names and instructions, no writes
    return {"agents": [gatekeeper.name, reporting_agent.name], "analyst": reporting_agent.instructions}
