# Case from a public repository, rewritten in our own words (no code copied):
# hminh19/cai (a copy of aliasrobotics/cai, the "Cybersecurity AI" assistant), src/cai/sdk/agents/mcp/util.py:105
# and :142 at 1e24600eeccb25fafaf343f6ae6aa42485fa3a4a. The assistant's bridge to MCP servers sends
# each tool call with `server.call_tool(name, arguments)`; when the call fails with an error that
# looks like a closed stream (anyio's ClosedResourceError, or the ExceptionGroup an SSE task group
# raises), the `except` reconnects and sends the same call again. A stream can close after the
# server received the request and ran the tool (a shell command, a scan, a file written on the
# target), so the tool runs twice and nothing records the first run.
import json
import logging

from agents.mcp import MCPServer

log = logging.getLogger(__name__)


class RemoteToolError(Exception):
    pass


def _looks_disconnected(error: Exception) -> bool:
    text = f"{type(error).__name__} {error}".lower()
    return "closedresource" in text or "exceptiongroup" in text or "taskgroup" in text


async def invoke_remote_tool(server: MCPServer, tool_name: str, raw_arguments: str) -> str:
    arguments = json.loads(raw_arguments) if raw_arguments else {}
    try:
        if getattr(server, "session", None) is None:
            await server.connect()
        outcome = await server.call_tool(tool_name, arguments)
    except Exception as error:
        if not _looks_disconnected(error):
            raise RemoteToolError(f"{tool_name} failed: {error}") from error
        log.info("stream to %s closed during %s; reconnecting", server.name, tool_name)
        server.session = None
        await server.connect()
        outcome = await server.call_tool(tool_name, arguments)
    return "\n".join(getattr(part, "text", str(part)) for part in outcome.content)
