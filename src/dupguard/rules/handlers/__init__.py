"""Handlers family (DUP4xx): callbacks, hooks and reply functions registered too often, and
tool calls executed from two callbacks of one stream.

One module per rule, named after it (DUP401 and DUP402 share ``registrations.py``); each
module's docstring names its rules, and ``docs/rules/index.md`` maps every code to its module.
"""
