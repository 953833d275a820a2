"""Shared-state family (DUP1xx): agents, memories and session keys shared by every request.

- ``singletons.py``: DUP101 shared-agent-singleton, DUP102 shared-memory-singleton (detection in
  ``dupguard.semantic.shared``, which the fan-out rules use too);
- ``constant_session_key.py``: DUP103 constant-session-key, with its detection.
"""
