import json

import httpx
from crewai.tools import BaseTool
from langchain_core.tools import tool
from mcp import ClientSession
from pydantic import ValidationError
from strands import tool as strands_tool

from .clients import mailer
from .registry import TOOLS


# a CrewAI-style tool runner: the fallback for unfiltered arguments also catches the tool's own
# errors and runs it a second time (crewAIInc/crewAI#7449)
class ToolRunner:
    def use(self, tool: BaseTool, arguments: dict, config: dict):
        try:
            accepted = tool.args_schema.model_json_schema()["properties"].keys()
            filtered = {k: v for k, v in arguments.items() if k in accepted}
            result = tool.invoke(input=filtered, config=config)
        except Exception:
            result = tool.invoke(input=arguments, config=config)  # error: DUP508
        return result


@tool
def send_invoice(customer_id: str, amount: int) -> str:
    """Email an invoice to a customer."""
    return mailer.send_invoice(customer_id, amount)


# LangChain tool: a read timeout after the email went out sends it again
def bill(customer_id: str, amount: int) -> str:
    try:
        return send_invoice.invoke({"customer_id": customer_id, "amount": amount})
    except httpx.ReadTimeout:
        return send_invoice.invoke({"customer_id": customer_id, "amount": amount})  # error: DUP508


# MCP client: reconnect and call again, although the server may have run the tool
async def call_remote(session: ClientSession, name: str, args: dict):
    try:
        return await session.call_tool(name, args)
    except (ConnectionError, TimeoutError):
        await session.initialize()
        return await session.call_tool(name, args)  # error: DUP508


@strands_tool
def book_meeting(room: str, start: str) -> str:
    """Book a meeting room."""
    return httpx.post("https://rooms.example/book", json={"room": room, "start": start}).text


# Strands tool called directly, with a second try in the handler
def book(room: str, start: str) -> str:
    try:
        return book_meeting(room, start)
    except httpx.HTTPStatusError:
        return book_meeting(room, start)  # error: DUP508


# a dispatch table: the retry in the except runs the tool twice per failure
def execute_tool_call(call) -> str:
    args = json.loads(call.function.arguments)
    try:
        return json.dumps(TOOLS[call.function.name](**args))
    except Exception as exc:
        if isinstance(exc, ValidationError):
            raise
        return json.dumps(TOOLS[call.function.name](**args))  # error: DUP508
