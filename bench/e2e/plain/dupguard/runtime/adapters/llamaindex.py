"""``LlamaIndexGuard`` as plain LlamaIndex: ``agent.run`` and the tools unchanged."""

from __future__ import annotations

from typing import Any


class LlamaIndexGuard:
    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def tools(self, tools: Any) -> list:
        return list(tools)

    async def run(self, agent: Any, *args: Any, turn_id: str | None = None, **kwargs: Any) -> Any:
        return await agent.run(*args, **kwargs)
