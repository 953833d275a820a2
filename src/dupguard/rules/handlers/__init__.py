"""Handlers family (DUP4xx): callbacks, hooks and reply functions registered too often, and
tool calls executed from two callbacks of one stream.

- ``registrations.py``: DUP401 handler-registered-per-call, DUP402 handler-registered-twice
  (detection in ``dupguard.semantic.registrations``);
- ``tool_calls_in_two_callbacks.py``: DUP403 tool-calls-in-two-callbacks, with its detection.
"""
