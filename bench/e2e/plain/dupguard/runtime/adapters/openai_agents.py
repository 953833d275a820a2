"""``OpenAIAgentsGuard`` as the plain SDK: ``Runner.run`` and the tools unchanged."""

from __future__ import annotations

from typing import Any


class OpenAIAgentsGuard:
    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def tools(self, tools: Any) -> list:
        return list(tools)

    async def run(self, agent: Any, input: Any, *, turn_id: str | None = None, **kwargs: Any) -> Any:
        from agents import Runner

        return await Runner.run(agent, input, **kwargs)

    def run_sync(self, agent: Any, input: Any, *, turn_id: str | None = None, **kwargs: Any) -> Any:
        from agents import Runner

        return Runner.run_sync(agent, input, **kwargs)
