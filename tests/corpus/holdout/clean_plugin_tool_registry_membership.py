"""Plugin loader for the ops assistant: plugins add tools once, whatever the call count."""
from __future__ import annotations

from strands import Agent, tool

from dupguard.runtime import dedupe_tools
from ops.plugins import discover_plugins

OPS_TOOLS: list = []
_plugins_loaded = False


@tool
def uptime(service: str) -> str:
    """Report the uptime of a service."""
    from ops.metrics import uptime_for

    return uptime_for(service)


def register_tool(fn) -> None:
    """Called by plugins; repeated registrations of the same tool are ignored."""
    if fn not in OPS_TOOLS:
        OPS_TOOLS.append(fn)


def load_plugins() -> None:
    """Discover plugins on first use only (startup is too early for the plugin path)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    for plugin in discover_plugins():
        for fn in plugin.tools():
            register_tool(fn)
    _plugins_loaded = True


register_tool(uptime)


def answer(question: str) -> str:
    """Per-call agent over the registered tools (plugins may have overlapping names)."""
    load_plugins()
    agent = Agent(tools=dedupe_tools(OPS_TOOLS), system_prompt="You are the on-call assistant.")
    return str(agent(question))
