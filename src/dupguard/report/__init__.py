"""Diagnostics → text for people (full, concise, grouped), tools (json, json-lines, sarif)
and CI (github annotations). Reporters only format; they never decide what is a finding."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from ..diagnostics import Diagnostic, FileError

Reporter = Callable[[list[Diagnostic], list[FileError], TextIO], None]


# format → (module, function); only the chosen module is imported (json is start-up time)
REPORTERS = {
    "full": ("text", "full"),
    "concise": ("text", "concise"),
    "grouped": ("text", "grouped"),
    "json": ("machine", "json_list"),
    "json-lines": ("machine", "json_lines"),
    "sarif": ("sarif", "sarif"),
    "github": ("github", "github"),
}


def get(name: str) -> Reporter:
    from importlib import import_module

    module, function = REPORTERS[name]
    return getattr(import_module(f"{__name__}.{module}"), function)
