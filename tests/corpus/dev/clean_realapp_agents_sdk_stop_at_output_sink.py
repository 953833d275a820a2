# Case from a public repository, rewritten in our own words (no code copied):
# Open-Earth-Foundation/Query_mechanism_urbind, backend/modules/sql_researcher/agent.py:32-43 at
# 3a310cc053045bd901b0e0d6e9bdd16fc8cfc024 (bench/real-apps/labels-e.toml). Each research step
# builds an OpenAI Agents SDK agent whose only tool hands back the structured answer it is given
# and stops there: a structured-output sink. Parallel tool calls stay on, but two parallel calls
# are two answers of which one is kept; nothing runs twice. Quiet.
from agents import Agent, Runner, function_tool
from pydantic import BaseModel


class QueryPlan(BaseModel):
    queries: list[str]


def build_planner() -> Agent:
    @function_tool
    def submit_query_plan(plan: QueryPlan) -> QueryPlan:
        """Return the plan unchanged."""
        return plan

    return Agent(
        name="SQL planner",
        instructions="Plan read-only SQL queries, then call submit_query_plan once.",
        tools=[submit_query_plan],
        output_type=QueryPlan,
        tool_use_behavior="stop_on_first_tool",
    )


def plan_queries(question: str) -> QueryPlan:
    result = Runner.run_sync(build_planner(), question)
    return result.final_output
