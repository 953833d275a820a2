"""A small Redis client on the event loop, for :class:`~dupguard.runtime.RedisBackend`'s async methods.

Why it exists: every async operation of a backend made from a URL used to run redis-py's
blocking call in a worker thread (``asyncio.to_thread``). In a busy app the hop and the GIL
hand-over between the loop and the worker cost several times the command itself (~110 µs of
worker CPU and 1.7 ms of wall time per call under load, against 16 µs to send the command
and read the reply: ``bench/RESULTS.md``, "The helpers' overhead in the e2e apps"), and
redis-py's own asyncio client was measured no cheaper. This client writes one command and
reads its reply on the loop itself: an :class:`asyncio.Protocol` on one connection per event
loop, standard library only (redis-py stays the extra the sync methods need).

What it does, and nothing more:

* RESP2 (no ``HELLO``): the replies the backend's scripts and its eviction-policy check
  need (simple strings, errors, integers, bulk strings, arrays).
* Commands from many tasks share the connection and are **pipelined**: each command gets a
  future, replies come back in order and are handed to the futures in order. A caller that
  is cancelled while its command is in flight leaves its future behind; the reply, when it
  comes, is read into that cancelled future and dropped, so it can never be taken for the
  next command's.
* One timer per connection (not per command) fails the connection when the oldest command
  in flight has waited ``timeout`` seconds with no byte arriving (redis-py's ``socket_timeout``
  is the same bound on each read); a lost connection, a timeout or a reply that is
  not RESP fails every command in flight (the caller sees ``StoreError``) and the next
  command opens a new connection.
* ``redis://``, ``rediss://`` (TLS) and ``unix://`` URLs with a user name, a password and a
  database (:func:`parse_url`); a URL with anything else (other query options) is not
  handled here, and the backend keeps the worker-thread path for it.
* When the loop ends through :func:`asyncio.run` (or any runner that calls
  ``loop.shutdown_asyncgens()``), the connection closes with it: it registers an async
  generator with the loop whose ``finally`` closes the transport.
"""

from __future__ import annotations

import asyncio
import collections
import os
import ssl
from collections.abc import AsyncIterator
from typing import Any, NamedTuple
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["Connection", "ReplyError", "Target", "encode", "parse_url"]


class ReplyError(Exception):
    """An error reply (``-ERR …``, ``-NOSCRIPT …``): the command failed, the connection is fine."""


class Target(NamedTuple):
    """Where and how to connect, from a URL (:func:`parse_url`)."""

    host: str | None
    port: int
    path: str | None  # a unix socket
    db: int
    username: str | None
    password: str | None
    tls: ssl.SSLContext | None


_TLS_OPTIONS = {"ssl_cert_reqs", "ssl_check_hostname", "ssl_ca_certs"}
# ``protocol`` is how redis-py talks to the server; this client always speaks RESP2 on its
# own connection, and the replies it reads mean the same either way.
_OPTIONS = {"db", "protocol", "username", "password"} | _TLS_OPTIONS
_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


def parse_url(url: str) -> Target | None:
    """The connection a Redis URL names, as redis-py reads it, or ``None`` for a URL this client
    does not handle (a query option it does not know): the backend then stays on the thread path."""
    try:
        parts = urlsplit(url)
        query = {name: values[-1] for name, values in parse_qs(parts.query, keep_blank_values=True).items()}
        if set(query) - _OPTIONS:
            return None
        username = unquote(parts.username) if parts.username else query.get("username") or None
        password = unquote(parts.password) if parts.password else query.get("password") or None
        db_text = query.get("db")
        if parts.scheme == "unix":
            if not parts.path:
                return None
            return Target(None, 0, unquote(parts.path), int(db_text or 0), username, password, None)
        if parts.scheme not in ("redis", "rediss"):
            return None
        path_db = parts.path.lstrip("/")
        if path_db and db_text is None:
            db_text = path_db
        tls = None
        if parts.scheme == "rediss":
            tls = _tls_context(query)
        elif set(query) & _TLS_OPTIONS:
            return None
        host = unquote(parts.hostname) if parts.hostname else "localhost"
        return Target(host, parts.port or 6379, None, int(db_text or 0), username, password, tls)
    except ValueError:  # a port or db that is not a number, a bad option value
        return None


def _tls_context(query: dict[str, str]) -> ssl.SSLContext:
    """redis-py's defaults for ``rediss://``: certificates required and checked against the
    system's authorities (or ``ssl_ca_certs``), host name checked unless told otherwise."""
    reqs = query.get("ssl_cert_reqs", "required").lower()
    modes = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
    if reqs not in modes:
        raise ValueError(reqs)
    context = ssl.create_default_context(cafile=query.get("ssl_ca_certs") or None)
    check = query.get("ssl_check_hostname", "").lower()
    if check and check not in _TRUE | _FALSE:
        raise ValueError(check)
    context.check_hostname = reqs != "none" and check not in _FALSE
    context.verify_mode = modes[reqs]
    return context


def encode(*args: Any) -> bytes:
    """One command as a RESP array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n" % len(data))
        out.append(data)
        out.append(b"\r\n")
    return b"".join(out)


_MORE = object()  # the buffer does not hold a whole reply yet


def _parse(buf: bytearray, pos: int) -> tuple[Any, int]:
    """One reply from ``buf[pos:]``: ``(value, end)``, or ``(_MORE, pos)`` when it is incomplete.
    ``ValueError`` when the bytes are not RESP2."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        return _MORE, pos
    kind = buf[pos]
    if kind == 36:  # $ bulk string
        size = int(buf[pos + 1 : end])
        if size < 0:
            return None, end + 2
        stop = end + 2 + size
        if len(buf) < stop + 2:
            return _MORE, pos
        return bytes(buf[end + 2 : stop]), stop + 2
    if kind == 42:  # * array
        count = int(buf[pos + 1 : end])
        if count < 0:
            return None, end + 2
        items = []
        at = end + 2
        for _ in range(count):
            item, at = _parse(buf, at)
            if item is _MORE:
                return _MORE, pos
            items.append(item)
        return items, at
    if kind == 58:  # : integer
        return int(buf[pos + 1 : end]), end + 2
    if kind == 43:  # + simple string
        return bytes(buf[pos + 1 : end]), end + 2
    if kind == 45:  # - error
        return ReplyError(bytes(buf[pos + 1 : end]).decode("utf-8", "replace")), end + 2
    raise ValueError(f"not a RESP2 reply: {bytes(buf[pos : pos + 40])!r}")


class Connection(asyncio.Protocol):
    """One connection to Redis on one event loop; see the module docstring.

    :meth:`start` connects (once; concurrent first callers wait for the same attempt),
    :meth:`send` sends one command and returns a future of its reply (a :class:`ReplyError` for
    an error reply). Once the connection failed, :attr:`error` says why and every later
    :meth:`send` raises ``ConnectionError``: the owner makes a new connection.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, target: Target, timeout: float) -> None:
        self.loop = loop
        self.target = target
        self.timeout = timeout
        self.pid = os.getpid()
        self.error: BaseException | None = None
        self.opening: asyncio.Task | None = None
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._pending: collections.deque[tuple[asyncio.Future, float]] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None
        self._progress = 0.0  # when bytes last arrived: a long reply that keeps coming is not stuck
        self._guard: Any = None

    # ------------------------------------------------------------------ opening
    def start(self) -> None:
        """Start connecting (a task, so that a cancelled first caller does not abort it for the others)."""
        self.opening = self.loop.create_task(self._open())

    async def _open(self) -> None:
        try:
            await asyncio.wait_for(self._connect(), self.timeout)
        except BaseException as exc:  # reported to every caller through self.error
            if isinstance(exc, asyncio.TimeoutError):
                exc = TimeoutError(f"connecting took more than {self.timeout:g}s")
            elif isinstance(exc, asyncio.CancelledError):
                exc = ConnectionError("connecting was cancelled (the loop is ending)")
            self._fail(exc)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self.opening = None

    async def _connect(self) -> None:
        t = self.target
        if t.path is not None:
            await self.loop.create_unix_connection(lambda: self, t.path)
        else:
            await self.loop.create_connection(
                lambda: self, t.host or "localhost", t.port, ssl=t.tls, server_hostname=t.host if t.tls else None
            )
        hello: list[tuple[Any, ...]] = []
        if t.password is not None:
            hello.append(("AUTH", t.username, t.password) if t.username else ("AUTH", t.password))
        if t.db:
            hello.append(("SELECT", t.db))
        for reply in await asyncio.gather(*(self._send(encode(*command)) for command in hello)):
            if isinstance(reply, ReplyError):
                raise ConnectionError(f"the server refused the connection's set-up: {reply}")
        # closed with the loop: asyncio.run() closes every async generator before it closes the loop
        self._guard = self._closed_with_the_loop()
        await self._guard.__anext__()

    async def _closed_with_the_loop(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            self._guard = None
            if self.pid == os.getpid():  # a forked child must not touch its parent's loop (shared epoll)
                self.close()

    # ------------------------------------------------------------------ commands
    def send(self, *args: Any) -> asyncio.Future:
        """Send one command; the future gets its reply (a :class:`ReplyError` for an error reply)."""
        return self._send(encode(*args))

    def _send(self, data: bytes) -> asyncio.Future:
        if self.error is not None:
            raise self._lost()
        assert self._transport is not None
        future = self.loop.create_future()
        now = self.loop.time()
        self._pending.append((future, now))
        self._transport.write(data)
        if self._timer is None:
            self._timer = self.loop.call_at(now + self.timeout, self._check_timeout)
        return future

    def _check_timeout(self) -> None:
        self._timer = None
        if not self._pending or self.error is not None:
            return
        due = max(self._pending[0][1], self._progress) + self.timeout
        if self.loop.time() >= due:
            self._fail(TimeoutError(f"no reply within {self.timeout:g}s"))
        else:
            self._timer = self.loop.call_at(due, self._check_timeout)

    # ------------------------------------------------------------------ asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._progress = self.loop.time()
        buf = self._buffer
        buf += data
        pending = self._pending
        pos = 0
        try:
            while pending:
                value, end = _parse(buf, pos)
                if value is _MORE:
                    break
                pos = end
                future = pending.popleft()[0]
                if not future.done():  # a cancelled caller's reply is read and dropped here
                    future.set_result(value)
        except ValueError as exc:
            self._fail(ConnectionError(f"the server sent something that is not a reply: {exc}"))
            return
        if pos:
            del buf[:pos]
        if buf and not pending:
            self._fail(ConnectionError(f"the server sent a reply nobody asked for: {bytes(buf[:40])!r}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(exc or ConnectionError("the server closed the connection"))

    # ------------------------------------------------------------------ failing and closing
    def _fail(self, exc: BaseException) -> None:
        """The connection is unusable: every command in flight gets ``exc``, later ones too."""
        if self.error is None:
            self.error = exc
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, collections.deque()
        for future, _sent in pending:
            if not future.done():
                future.set_exception(self._lost())
        transport, self._transport = self._transport, None
        if transport is not None and not self.loop.is_closed():
            transport.abort()  # nothing more is read: a late reply must not reach anyone
        guard, self._guard = self._guard, None
        if guard is not None:
            _finish(guard)

    def _lost(self) -> ConnectionError:
        """A fresh error per caller (one shared instance would collect every caller's traceback)."""
        return ConnectionError(f"the connection to Redis failed: {self.error}")

    def close(self) -> None:
        """Close (from the loop's thread); commands in flight fail."""
        self._fail(ConnectionError("the backend was closed"))

    def forget(self) -> None:
        """Drop a connection whose loop is closed (it ended without ``shutdown_asyncgens``), or that a
        forked child inherited (its socket and the loop's selector are shared with the parent):
        nothing is scheduled on the loop nor removed from its selector; the child's copy of the
        socket closes when collected."""
        if self.error is None:
            self.error = ConnectionError("the event loop was closed")
        self._timer = None
        self._pending = collections.deque()
        self._transport = None
        guard, self._guard = self._guard, None
        if guard is not None:
            _finish(guard)


def _finish(guard: Any) -> None:
    """Run an async generator's ``finally`` now (it awaits nothing), not later in a finalizer
    that would schedule it on a loop that may be closed by then."""
    closing = guard.aclose()
    try:
        closing.send(None)
    except StopIteration:
        pass
