"""Top-level import names whose import marks a file as agent code (the prefilter's list).

Kept apart from ``catalog_data`` so that the prefilter, which runs on every file of every
run, does not import the 1,700-line catalog (≈ 10 ms per start; bench/RESULTS.md, one-file start-up).
tests/test_catalog_data.py checks that every catalog entry's and registration's module is covered.
"""

FRAMEWORK_MODULES: tuple[str, ...] = (
    "llama_index",
    "workflows",
    "autogen",
    "autogen_agentchat",
    "autogen_core",
    "autogen_ext",
    "ag2",
    "strands",
    "langchain",
    "langchain_core",
    "langchain_classic",
    "langchain_community",
    "langchain_openai",
    "langchain_anthropic",
    "langgraph",
    "crewai",
    "agents",
    "pydantic_ai",
    "smolagents",
    "google.adk",
    "agno",
    "semantic_kernel",
    "openai",
    "anthropic",
)

# Hosts whose handlers (entrypoints.py) run agents that are often built in another module: a
# Gradio UI, an MCP server or an A2A server file may import no agent framework itself, yet its
# handlers are where per-request state is written (DUP106) and where a long-lived server runs
# one agent for every client (DUP107). They have no catalog entries, so they are kept apart
# from FRAMEWORK_MODULES (tests/test_catalog_data.py requires an entry for each of those).
# A Discord bot file (discord.py) is the same kind of host, and its own listener registrations
# (``@bot.listen`` inside a command) pile up per invocation (DUP401) with no agent import at all.
HOST_MODULES: tuple[str, ...] = ("gradio", "mcp", "fastmcp", "a2a", "discord")
