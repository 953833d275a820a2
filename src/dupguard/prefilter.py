"""Can this file matter at all? A text search, so that irrelevant files cost no parse.

Every rule is about agent code, so a file matters only when it imports an agent or LLM
framework or an agent-serving host (Gradio, MCP, A2A), or a module the user declared in the
catalog extensions, or handles raw ``tool_calls``. libcst is not imported for files that fail the check.

Speed matters here more than anywhere: on a typical tree almost every file stops here, so
this search *is* the linter's cost per file (bench/RESULTS.md: the standard library is 12 MB
of text). The obvious single pattern ``^[ \\t]*(?:from|import)…|\\btool_calls\\b`` makes the
regex engine try both branches at every character (≈ 12 MB/s). Instead: ``tool_calls`` is a
plain substring test first, and the import pattern starts with a literal newline, which the
engine finds with a fast scan (≈ 9× faster on the standard library, same answers).

A lone carriage return ends a line too (old Mac line endings; Python and libcst read such a
file as any other): a text with a ``\r`` in it is searched with each ``\r`` read as ``\n``. A
test for ``\r`` is one ``memchr``; CRLF files pay one more copy, and only they.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOOL_CALLS = re.compile(r"\btool_calls\b")


@lru_cache(maxsize=8)
def _pattern(extra_modules: tuple[str, ...]) -> re.Pattern[str]:
    # imported here, not at module level: a cache hit needs no pattern
    from .semantic.framework_modules import FRAMEWORK_MODULES, HOST_MODULES

    modules = sorted(set(FRAMEWORK_MODULES) | set(HOST_MODULES) | set(extra_modules), key=len, reverse=True)
    alternatives = "|".join(re.escape(m) for m in modules)
    # "\n" + indentation + from/import at the start of a line; might_matter() puts a "\n" in
    # front of the text so that the first line counts too (the same lines as ``^`` with re.M)
    return re.compile(rf"\n[ \t]*(?:from|import)[ \t]+(?:{alternatives})\b")


def might_matter(text: str, extra_modules: tuple[str, ...] = ()) -> bool:
    if "tool_calls" in text and _TOOL_CALLS.search(text) is not None:
        return True
    if "\r" in text:
        text = text.replace("\r", "\n")
    return _pattern(extra_modules).search("\n" + text) is not None
