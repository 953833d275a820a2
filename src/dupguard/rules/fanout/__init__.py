"""Fan-out family (DUP2xx): one stateful agent run by many tasks or threads at once, and
parallel tool results applied in completion order.

- ``shared_agent.py``: DUP201 gather-shared-agent, DUP202 threads-shared-agent (detection in
  ``dupguard.semantic.fanout``, which DUP203 uses too);
- ``unordered_tool_results.py``: DUP203 unordered-tool-results, with its detection.
"""
