# Case from a public repository, rewritten in our own words (no code copied):
# LabrardoR/LLMAgent, app/agent/agent.py:310-314 at 2f6cbeee2f4a8943b911fbdbac48caf922f61d88
# (bench/real-apps/labels-e.toml). A hand-written model -> tool loop runs each tool with
# `await tool.ainvoke(args)` and, on any error, again with `tool.invoke(args)`. Every tool the loop
# can reach only reads (a calculator, a web search, the user's own history), so the second run
# repeats no side effect. Quiet.
from fastapi import FastAPI
from langchain_community.tools import DuckDuckGoSearchRun
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

api = FastAPI()


@tool
def calculator(expression: str) -> str:
    """Evaluate a small arithmetic expression."""
    allowed = set("0123456789+-*/(). ")
    if not set(expression) <= allowed:
        return "unsupported expression"
    return str(eval(expression))  # noqa: S307 - digits and operators only


TOOLS = {"calculator": calculator, "search": DuckDuckGoSearchRun()}


async def run_tool(name: str, args: dict) -> str:
    chosen = TOOLS[name]
    try:
        result = await chosen.ainvoke(args)
    except Exception:
        result = chosen.invoke(args)
    return str(result)


@api.post("/ask")
async def ask(question: str) -> dict:
    model = ChatOpenAI(model="gpt-4o-mini").bind_tools(list(TOOLS.values()))
    messages = [HumanMessage(question)]
    for _ in range(6):
        reply = await model.ainvoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return {"answer": reply.content}
        for call in reply.tool_calls:
            output = await run_tool(call["name"], call["args"])
            messages.append(ToolMessage(output, tool_call_id=call["id"]))
    return {"answer": "no answer"}
