"""Shared-state family (DUP1xx): agents, memories and session keys shared by every request.

One module per rule, named after it (DUP101 and DUP102 share ``singletons.py``); each module's
docstring names its rules, and ``docs/rules/index.md`` maps every code to its module.
"""
