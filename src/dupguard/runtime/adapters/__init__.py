"""One-line duplicate-tool-call protection for agent frameworks.

=====================  ==============================================================
module                 what it gives
=====================  ==============================================================
``.llamaindex``        :class:`LlamaIndexGuard`: ``tools([...])`` and ``run(agent, ...)``
``.strands``           :class:`StrandsGuard`: a hook provider, and ``protect(agent)``
``.openai_agents``     :class:`OpenAIAgentsGuard`: ``tools([...])`` and ``run(agent, ...)``
``.autogen``           :class:`AutoGenGuard`: ``tools([...])`` and ``protect(agent)``
=====================  ==============================================================

Every adapter puts the same :class:`~dupguard.runtime.adapters._core.ToolCallGate` in front
of each tool execution (ledger across turns, ``TurnToolGuard`` within a turn) and an optional
:class:`~dupguard.runtime.InvocationGuard` around each run. Importing this package, or any
adapter module, imports no framework: each framework is imported inside the functions that
need it, so ``import dupguard.runtime.adapters`` is safe where a framework is not installed.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._core import REPLAY_MODES, AdapterGuard, Outcome, Pending, ToolCallGate, Turn, current_turn

_LAZY = {
    "LlamaIndexGuard": "llamaindex",
    "StrandsGuard": "strands",
    "OpenAIAgentsGuard": "openai_agents",
    "AutoGenGuard": "autogen",
}

__all__ = [
    "REPLAY_MODES",
    "AdapterGuard",
    "AutoGenGuard",
    "LlamaIndexGuard",
    "OpenAIAgentsGuard",
    "Outcome",
    "Pending",
    "StrandsGuard",
    "ToolCallGate",
    "Turn",
    "current_turn",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dupguard.runtime.adapters' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
