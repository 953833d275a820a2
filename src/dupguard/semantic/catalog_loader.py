"""The catalog the engine uses: built-in entries plus the project's ``extend-*`` settings."""

from __future__ import annotations

from functools import lru_cache

from ..config import Settings
from .catalog import Catalog


@lru_cache(maxsize=1)
def _builtin() -> Catalog:
    from .catalog_data import ENTRIES, REGISTRATIONS

    return Catalog.build(ENTRIES, REGISTRATIONS)


@lru_cache(maxsize=8)
def _extended(stateful: tuple[str, ...], stateless: tuple[str, ...], memory: tuple[str, ...]) -> Catalog:
    return _builtin().extended(stateful=stateful, stateless=stateless, memory=memory)


def catalog_for(settings: Settings) -> Catalog:
    if not (settings.extend_stateful_agents or settings.extend_stateless or settings.extend_memory_classes):
        return _builtin()
    return _extended(settings.extend_stateful_agents, settings.extend_stateless, settings.extend_memory_classes)
