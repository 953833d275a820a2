"""LibCST codemods, one module per fixable rule.

A rule builds its fix with the helpers of its codemod module and returns it in
``Finding.replacement`` as ``(node, new node or libcst.RemoveFromParent())``; the fixer
(``dupguard.fixer``) applies it, re-parses, re-lints and repeats until the file is stable.
Each module also exposes a ``libcst.codemod`` command that runs that one rule's fixes, so
the same transformation works from LibCST's own runner::

    python -m libcst.tool codemod --no-format -x dupguard.codemods.duplicate_tool.FixDuplicateTool src/

Modules are imported only when a finding needs its fix: ``libcst.codemod`` is slow to import.
"""

# rule code → "module.CommandClass" (the libcst.tool spelling, relative to this package)
COMMANDS = {
    "DUP101": "shared_agent_singleton.FixSharedAgentSingleton",
    "DUP102": "shared_agent_singleton.FixSharedMemorySingleton",
    "DUP201": "fanout_shared_agent.FixGatherSharedAgent",
    "DUP202": "fanout_shared_agent.FixThreadsSharedAgent",
    "DUP301": "duplicate_tool.FixDuplicateTool",
    "DUP303": "tool_list_grows_per_call.FixToolListGrowsPerCall",
    "DUP401": "handler_registered_per_call.FixHandlerRegisteredPerCall",
    "DUP402": "handler_registered_twice.FixHandlerRegisteredTwice",
    "DUP501": "naive_agent_retry.FixNaiveAgentRetry",
    "DUP503": "duplicate_history_append.FixDuplicateHistoryAppend",
}
