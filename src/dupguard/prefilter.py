"""Can this file matter at all? A text search, so that irrelevant files cost no parse.

Every rule is about agent code, so a file matters only when it imports an agent or LLM
framework (or a module the user declared in the catalog extensions), or handles raw
``tool_calls``. The check is one compiled regular expression; libcst is not imported for
files that fail it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .semantic.catalog_data import FRAMEWORK_MODULES


@lru_cache(maxsize=8)
def _pattern(extra_modules: tuple[str, ...]) -> re.Pattern[str]:
    modules = sorted(set(FRAMEWORK_MODULES) | set(extra_modules), key=len, reverse=True)
    alternatives = "|".join(re.escape(m) for m in modules)
    return re.compile(
        rf"^[ \t]*(?:from|import)[ \t]+(?:{alternatives})\b|\btool_calls\b",
        re.MULTILINE,
    )


def might_matter(text: str, extra_modules: tuple[str, ...] = ()) -> bool:
    return _pattern(extra_modules).search(text) is not None
