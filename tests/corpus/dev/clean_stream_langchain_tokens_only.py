from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.outputs import LLMResult
from langchain_openai import ChatOpenAI

from .executor import execute_tool_call
from .ws import send_token

llm = ChatOpenAI(model="gpt-4o", streaming=True)


class TokenRelay(AsyncCallbackHandler):
    """Relays tokens only; tool calls are executed from the final message."""

    def __init__(self, websocket) -> None:
        self.websocket = websocket
        self.tokens = 0

    async def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens += 1
        await send_token(self.websocket, token)

    async def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        await self.websocket.send_json({"event": "end", "tokens": self.tokens})


async def stream_turn(websocket, messages: list, tools: list) -> list:
    relay = TokenRelay(websocket)
    message = await llm.bind_tools(tools).ainvoke(messages, config={"callbacks": [relay]})
    results = []
    for call in message.tool_calls:
        results.append(await execute_tool_call(call["id"], call["name"], call["args"]))
    return results
