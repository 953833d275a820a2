"""A small tool-calling runtime over the Anthropic Messages API.

Guarantees: one execution per tool_use id, at most MAX_ROUNDS model calls per turn, results
returned in the order the model asked for them, model calls retried, tool calls never.
"""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import anthropic
import backoff
from anthropic import AsyncAnthropic

log = logging.getLogger(__name__)
MAX_ROUNDS = 10
MODEL = "claude-3-7-sonnet-latest"

ToolFn = Callable[..., Awaitable[Any]]


@dataclass
class ToolSpec:
    name: str
    description: str
    schema: dict
    fn: ToolFn

    def as_param(self) -> dict:
        return {"name": self.name, "description": self.description, "input_schema": self.schema}


@dataclass
class Turn:
    history: list[dict]
    executed: dict[str, str] = field(default_factory=dict)
    rounds: int = 0


def unique_specs(specs: list[ToolSpec]) -> list[ToolSpec]:
    by_name: dict[str, ToolSpec] = {}
    for spec in specs:
        if spec.name in by_name:
            log.warning("tool %s registered twice; keeping the first", spec.name)
            continue
        by_name[spec.name] = spec
    return list(by_name.values())


class Runtime:
    def __init__(self, specs: list[ToolSpec], on_text: Callable[[str], None] | None = None) -> None:
        self.client = AsyncAnthropic()
        self.specs = {s.name: s for s in unique_specs(specs)}
        self.params = [s.as_param() for s in self.specs.values()]
        self.on_text = on_text or (lambda text: None)

    @backoff.on_exception(backoff.expo, (anthropic.RateLimitError, anthropic.APIConnectionError), max_tries=5)
    async def _model(self, history: list[dict]):
        return await self.client.messages.create(
            model=MODEL, max_tokens=2048, tools=self.params, messages=history
        )

    async def _execute(self, turn: Turn, block) -> str:
        if block.id in turn.executed:
            return turn.executed[block.id]
        spec = self.specs.get(block.name)
        if spec is None:
            output = json.dumps({"error": f"unknown tool {block.name}"})
        else:
            try:
                output = json.dumps(await spec.fn(**block.input))
            except Exception as exc:  # surfaced to the model, never retried here
                output = json.dumps({"error": str(exc)})
        turn.executed[block.id] = output
        return output

    async def run_turn(self, history: list[dict], user_text: str) -> str:
        turn = Turn(history=history)
        turn.history.append({"role": "user", "content": user_text})
        while turn.rounds < MAX_ROUNDS:
            turn.rounds += 1
            response = await self._model(turn.history)
            turn.history.append({"role": "assistant", "content": response.content})
            text = "".join(b.text for b in response.content if b.type == "text")
            if text:
                self.on_text(text)
            tool_uses = [b for b in response.content if b.type == "tool_use"]
            if not tool_uses:
                return text
            outputs = await asyncio.gather(*(self._execute(turn, b) for b in tool_uses))
            results = [
                {"type": "tool_result", "tool_use_id": b.id, "content": out}
                for b, out in zip(tool_uses, outputs)
            ]
            turn.history.append({"role": "user", "content": results})
        return "Stopped: tool round limit reached."


async def demo() -> None:
    async def add(a: float, b: float) -> float:
        return a + b

    spec = ToolSpec("add", "Add two numbers", {"type": "object", "properties": {
        "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}, add)
    runtime = Runtime([spec], on_text=print)
    print(await runtime.run_turn([], "What is 2.5 + 4?"))


if __name__ == "__main__":
    asyncio.run(demo())
