"""Results cache: content hash + settings hash + version → diagnostics.

One JSON file per (version, settings) pair holds every file's results keyed by the hash of
its bytes and enabled codes, so a warm run reads one file instead of parsing anything.
Paths are not part of the key: a renamed or copied file still hits. A corrupt or
unwritable cache is ignored, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


class Cache:
    def __init__(self, directory: Path, settings_hash: str, version: str) -> None:
        self.path = directory / f"v{version}" / f"{settings_hash}.json"
        self._entries: dict[str, Any] | None = None
        self._dirty = False

    def key(self, data: bytes, codes: frozenset[str], facts: str = "") -> str:
        """The file's entry: its bytes, its codes and ``facts``, the digest of what the project
        index told it about the names it imports (``ProjectFacts.digest``): a change to the
        module that builds an agent changes the key of every file that uses it."""
        digest = hashlib.blake2b(data, digest_size=16)
        digest.update(",".join(sorted(codes)).encode())
        if facts:
            digest.update(b"|" + facts.encode())
        return digest.hexdigest()

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            try:
                self._entries = json.loads(self.path.read_text(encoding="utf-8"))
                if not isinstance(self._entries, dict):
                    self._entries = {}
            except (OSError, ValueError):
                self._entries = {}
        return self._entries

    def get(self, key: str) -> list[Any] | None:
        return self._load().get(key)

    def put(self, key: str, diagnostics: list[Any]) -> None:
        self._load()[key] = diagnostics
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            gitignore = self.path.parent.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n", encoding="utf-8")
            # a name no other process uses, then an atomic rename; not ``tempfile``, whose
            # import (shutil, random, bz2, lzma) costs more than the one-file run it serves
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{id(self)}.tmp")
            try:
                with open(tmp, "x", encoding="utf-8") as handle:
                    json.dump(self._entries, handle, separators=(",", ":"))
                os.replace(tmp, self.path)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a read-only checkout still lints; it just does not cache
