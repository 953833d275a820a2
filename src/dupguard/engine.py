"""The old name of the file pipeline, kept for the imports that still use it.

Everything that was here lives in ``dupguard.pipeline`` (read, decode, gate, parse,
analyse, the worker pool), ``dupguard.edits`` (the report's fix edits) and
``dupguard.fixer`` (the fix loop). Only ``lint_text`` is re-exported, for the test modules
that import it from here; delete this module once they import ``dupguard.pipeline``.
"""

from .pipeline import lint_text

__all__ = ["lint_text"]
