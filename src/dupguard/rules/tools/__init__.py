"""Tools family (DUP3xx): tools given twice, names reused, tool lists that grow per call.

- ``duplicate_tool.py``: DUP301 duplicate-tool (tool lists from ``dupguard.semantic.toolsets``);
- ``duplicate_tool_name.py``: DUP302 duplicate-tool-name (``dupguard.semantic.toolnames``);
- ``tool_list_grows_per_call.py``: DUP303 tool-list-grows-per-call (``dupguard.semantic.toolnames``).
"""
