from agents import Agent, ModelSettings, Runner, StopAtTools, ToolsToFinalOutputResult, function_tool
from fastapi import FastAPI

from .backends import docs_server, mailer, payments, weather

app = FastAPI()
ONE_CALL_AT_A_TIME = ModelSettings(parallel_tool_calls=False)


@function_tool
def refund_order(order_id: str, amount: int) -> str:
    """Refund an order."""
    return payments.refund(order_id, amount)


@function_tool
def send_email(to: str, body: str) -> str:
    """Email the customer."""
    return mailer.send(to, body)


@function_tool
def get_weather(city: str) -> str:
    """Read the forecast."""
    return weather.forecast(city)


@function_tool
def search_docs(query: str) -> str:
    """Search the documentation."""
    return weather.search(query)


# parallel tool calls turned off: the model asks for one tool per response
refunds = Agent(
    name="Refunds",
    tools=[refund_order],
    tool_use_behavior="stop_on_first_tool",
    model_settings=ModelSettings(parallel_tool_calls=False),
)
mailer_agent = Agent(
    name="Mailer",
    tools=[send_email, refund_order],
    tool_use_behavior=StopAtTools(stop_at_tool_names=["send_email"]),
    model_settings=ONE_CALL_AT_A_TIME,
)

# every tool only reads: a dropped result costs a call, not a second refund
forecaster = Agent(name="Forecast", tools=[get_weather, search_docs], tool_use_behavior="stop_on_first_tool")

# the default behaviour feeds every result back to the model
assistant = Agent(name="Assistant", tools=[refund_order, send_email], tool_use_behavior="run_llm_again")


# a function that looks at every result
def first_refund(context, results) -> ToolsToFinalOutputResult:
    return ToolsToFinalOutputResult(is_final_output=True, final_output=[r.output for r in results])


collector = Agent(name="Collector", tools=[refund_order], tool_use_behavior=first_refund)

# no tools: nothing runs beside the answer
echo = Agent(name="Echo", tool_use_behavior="stop_on_first_tool")

# tools this module cannot name (an MCP server's): nothing shown to write
remote = Agent(name="Remote", mcp_servers=[docs_server], tool_use_behavior="stop_on_first_tool")


# settings from the caller: not known here
def build(settings: ModelSettings) -> Agent:
    return Agent(name="Built", tools=[refund_order], tool_use_behavior="stop_on_first_tool", model_settings=settings)


@app.post("/refund")
async def refund(payload: dict) -> dict:
    result = await Runner.run(refunds, payload["message"])
    return {"answer": result.final_output}
