"""Research service: runs one model turn's tool calls concurrently."""
import asyncio
import json
from typing import Any

from openai import AsyncOpenAI

from research.tools import TOOL_SCHEMAS, TOOL_FUNCS

MAX_TURNS = 6


class ResearchSession:
    """Created per user request by the API layer."""

    def __init__(self, question: str) -> None:
        self.client = AsyncOpenAI()
        self.messages: list[Any] = [{"role": "user", "content": question}]

    async def _run_tool(self, call) -> None:
        output = await TOOL_FUNCS[call.function.name](**json.loads(call.function.arguments))
        self.messages.append(
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)}
        )

    async def run(self) -> str:
        for _ in range(MAX_TURNS):
            resp = await self.client.chat.completions.create(
                model="gpt-4o", tools=TOOL_SCHEMAS, messages=self.messages
            )
            msg = resp.choices[0].message
            self.messages.append(msg)
            if not msg.tool_calls:
                return msg.content or ""
            await asyncio.gather(*(self._run_tool(c) for c in msg.tool_calls))
        return "no answer within the turn limit"
