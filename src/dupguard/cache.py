"""Results cache: content hash + settings hash + version → diagnostics.

One JSON file per (version, settings) pair holds every file's results keyed by the hash of
its bytes and enabled codes, so a warm run reads one file instead of parsing anything.
Paths are not part of the key: a renamed or copied file still hits. A corrupt, forged,
wrongly shaped or unwritable cache is ignored, never fatal.

Trust: the cache directory lives in the project, where a repository (or a CI cache restored
from elsewhere) can put anything, so nothing read from it is believed on its word. Each
cache file starts with a MAC (keyed BLAKE2b) over the version, the settings hash and the
entries, under a key kept outside the project, in the user's cache directory
(``$XDG_CACHE_HOME/dupguard/key``, else ``~/.cache/dupguard/key``, created 0600). A file
whose MAC does not match was not written by this user's dupguard and is ignored whole;
without a private place for the key (a read-only or missing home) there is no cache at all.
The MAC also covers :func:`linter_build`, a fingerprint of the linter's own files: the version
number alone does not change when an editable install or a pre-commit environment built from a
later commit runs the rules, and results of other rules must not be replayed as this one's.

Links: a repository can also commit symbolic links where the cache would write. Every
directory from the project root down to the cache file is opened without following a link,
and every file is created with ``O_EXCL | O_NOFOLLOW`` relative to its directory, so nothing
is written outside the cache directory (or read through a link out of it). A ``cache-dir``
named on the command line (an absolute path) is the user's own choice and is followed.
The ``.gitignore`` (``*``) is written only into a cache directory this code created.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic

KEY_BYTES = 32
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# ----------------------------------------------------------------------------- the key


def linter_build() -> str:
    """A fingerprint of the files that decide findings: every module and data file of the package but
    the runtime, by path, size and modification time (as Python's own bytecode cache does; a stat of
    about a hundred files, ~1 ms). A reinstall or an edit changes it, so results are recomputed."""
    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=16)
    for directory, subdirs, names in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d not in ("__pycache__", "runtime"))
        for name in sorted(names):
            if name.endswith((".py", ".toml", ".json")):
                path = os.path.join(directory, name)
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{os.path.relpath(path, package)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def key_path() -> Path | None:
    """Where this user's cache key lives (outside every project), or None without a home."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is to be ignored
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "dupguard" / "key"


def _read_key(path: Path) -> bytes | None:
    """The key, if it is a regular file of the right size that only this user can read or write."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return None
    with open(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o077
            or info.st_size != KEY_BYTES
        ):
            return None
        key = handle.read(KEY_BYTES + 1)
    return key if len(key) == KEY_BYTES else None


def _create_key(path: Path) -> None:
    """Write a new random key: a private temporary file, then a hard link to the final name,
    so that a concurrent run sees either no key or a whole one (and one key wins)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, _NEW_FILE, 0o600)
    except OSError:
        return
    try:
        with open(fd, "wb", buffering=0) as handle:
            handle.write(os.urandom(KEY_BYTES))
            os.fsync(fd)
        os.link(tmp, path)
    except OSError:
        pass  # another run made the key first, or the directory is not writable
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def user_key() -> bytes | None:
    """This user's cache key, created on first use; None when it cannot be kept privately."""
    path = key_path()
    if path is None:
        return None
    key = _read_key(path)
    if key is None:
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return None
        _create_key(path)
        key = _read_key(path)
    return key


# ----------------------------------------------------------------------------- entries


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _valid_fix(fix: Any) -> bool:
    if not (
        isinstance(fix, dict)
        and isinstance(fix.get("applicability"), str)
        and isinstance(fix.get("message"), str)
        and isinstance(fix.get("edits"), list)
    ):
        return False
    for edit in fix["edits"]:
        if not (isinstance(edit, dict) and isinstance(edit.get("content"), str)):
            return False
        for where in (edit.get("location"), edit.get("end_location")):
            if not (isinstance(where, dict) and _is_count(where.get("row")) and _is_count(where.get("column"))):
                return False
    return True


def _diagnostic(filename: str, item: Any) -> Diagnostic:
    """One cached finding, checked for the shape ``Diagnostic.to_cache`` writes (ValueError if not)."""
    if not isinstance(item, list) or len(item) != 7:
        raise ValueError(item)
    row, column, end_row, end_column, code, message, fix = item
    if not all(_is_count(n) for n in (row, column, end_row, end_column)):
        raise ValueError(item)
    if not isinstance(code, str) or not isinstance(message, str) or not (fix is None or _valid_fix(fix)):
        raise ValueError(item)
    return Diagnostic.from_cache(filename, item)


# ----------------------------------------------------------------------------- the cache


class Cache:
    """The cache file for one (version, settings) pair under ``directory``.

    ``base``: the project root when ``directory`` is relative to it (from a config file or
    the default): every directory below ``base`` is opened without following links. None
    for a directory named on the command line. ``key``: :func:`user_key`. ``build``:
    :func:`linter_build`, authenticated with the entries (a file from another build is ignored).
    """

    def __init__(
        self,
        directory: Path,
        settings_hash: str,
        version: str,
        key: bytes,
        *,
        base: Path | None = None,
        build: str = "",
    ) -> None:
        self.directory = directory
        self.base = base
        self.name = f"{settings_hash}.json"
        self.version_dir = f"v{version}"
        self.path = directory / self.version_dir / self.name
        self._key = key
        self._build = build
        self._context = f"dupguard-cache\0{version}\0{build}\0{settings_hash}\0".encode()
        self._entries: dict[str, Any] | None = None
        self._dirty = False

    def sibling(self, name: str) -> Cache:
        """Another cache file beside this one (same directory, version, key and link rules):
        where the project index keeps its per-file summaries and answers (``dupguard.project``)."""
        return Cache(self.directory, name, self.version_dir[1:], self._key, base=self.base, build=self._build)

    def entries(self) -> dict[str, Any]:
        """Every entry, read (and authenticated) on first use."""
        return self._load()

    def replace(self, entries: dict[str, Any]) -> None:
        """All the entries at once (the next ``save`` writes exactly these)."""
        self._entries = entries
        self._dirty = True

    def key(self, data: bytes, codes: frozenset[str], facts: str = "") -> str:
        """The file's entry: its bytes, its codes and ``facts``, the digest of what the project
        index told it about the names it imports (``ProjectFacts.digest``): a change to the
        module that builds an agent changes the key of every file that uses it."""
        digest = hashlib.blake2b(data, digest_size=16)
        digest.update(",".join(sorted(codes)).encode())
        if facts:
            digest.update(b"|" + facts.encode())
        return digest.hexdigest()

    def _mac(self, payload: bytes) -> bytes:
        mac = hashlib.blake2b(self._context, key=self._key, digest_size=32)
        mac.update(payload)
        return mac.hexdigest().encode()

    # -- directories

    def _open_dirs(self, create: bool) -> int | None:
        """A descriptor of the version directory, every directory on the way opened without
        following a link (below ``base``); None when there is none or a link is in the way."""
        parts: list[str] = []
        top = -1  # index in ``parts`` of the cache directory itself
        try:
            if self.base is None:
                created = create and not os.path.isdir(self.directory)
                if created:
                    os.makedirs(self.directory, exist_ok=True)
                fd = os.open(self.directory, _DIR)
                if created:
                    _write_gitignore(fd)
            else:
                fd = os.open(self.base, _DIR)
                parts = [p for p in Path(os.path.relpath(self.directory, self.base)).parts if p != "."]
                top = len(parts) - 1
        except OSError:
            return None
        try:
            for index, part in enumerate([*parts, self.version_dir]):
                try:
                    child = os.open(part, _DIR | _NOFOLLOW, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(part, 0o755, dir_fd=fd)
                        made = True
                    except FileExistsError:  # a concurrent run made it
                        made = False
                    child = os.open(part, _DIR | _NOFOLLOW, dir_fd=fd)
                    if made and index == top:
                        _write_gitignore(child)
                os.close(fd)
                fd = child
        except OSError:  # ELOOP / ENOTDIR: a link or a file where a directory should be
            os.close(fd)
            return None
        return fd

    # -- reading

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = {}
            directory = self._open_dirs(create=False)
            if directory is not None:
                try:
                    self._entries = self._read(directory)
                finally:
                    os.close(directory)
        return self._entries

    def _read(self, directory: int) -> dict[str, Any]:
        try:
            fd = os.open(self.name, _READ, dir_fd=directory)
        except OSError:
            return {}
        try:
            with open(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return {}
                data = handle.read()
        except OSError:
            return {}
        mac, newline, payload = data.partition(b"\n")
        import hmac

        if not newline or not hmac.compare_digest(mac, self._mac(payload)):
            return {}  # not written by this user's dupguard: forged, copied or corrupt
        try:
            entries = json.loads(payload)
        except ValueError:
            return {}
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> list[Any] | None:
        entry = self._load().get(key)
        return entry if isinstance(entry, list) else None

    def diagnostics(self, key: str, filename: str) -> list[Diagnostic] | None:
        """The cached findings for ``key`` reported under ``filename``; None on a miss or an
        entry of the wrong shape (which the run then recomputes and overwrites)."""
        entry = self.get(key)
        if entry is None:
            return None
        try:
            return [_diagnostic(filename, item) for item in entry]
        except (TypeError, ValueError, KeyError, AttributeError):
            return None

    # -- writing

    def put(self, key: str, diagnostics: list[Any]) -> None:
        self._load()[key] = diagnostics
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        directory = self._open_dirs(create=True)
        if directory is None:
            return  # a read-only checkout, or a link in the way: it lints, it just does not cache
        try:
            payload = json.dumps(self._entries, separators=(",", ":")).encode()
            # a name no other process uses, then an atomic rename; not ``tempfile``, whose
            # import (shutil, random, bz2, lzma) costs more than the one-file run it serves
            tmp = f"{self.name}.{os.getpid()}.{id(self)}.tmp"
            fd = os.open(tmp, _NEW_FILE, 0o644, dir_fd=directory)
            try:
                with open(fd, "wb") as handle:
                    handle.write(self._mac(payload) + b"\n")
                    handle.write(payload)
                os.replace(tmp, self.name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=directory)
                except OSError:
                    pass
                raise
        except OSError:
            pass
        finally:
            os.close(directory)


def _write_gitignore(directory: int) -> None:
    """``*`` in a cache directory this run created (never through a link, never over a file)."""
    try:
        fd = os.open(".gitignore", _NEW_FILE, 0o644, dir_fd=directory)
    except OSError:
        return
    with open(fd, "w", encoding="utf-8") as handle:
        handle.write("*\n")
