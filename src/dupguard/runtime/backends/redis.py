"""``RedisBackend``: records in Redis, shared by processes on many hosts.

Each operation is **one Lua script**, so Redis runs the check and the write as one step. The
scripts read the store's clock with ``redis.call('TIME')``: lease ends and fences are
measured on the server, never on the callers' clocks, which may disagree between hosts.
This is a single-instance design (one primary, optionally replicated); it is not Redlock.

Keys are ``<prefix>{<key>}`` (records) and ``<prefix>{<key>}:n`` (counters): the hash tag
puts everything about one key on one Redis Cluster slot. A prefix may not contain braces, so
the text before the first ``{`` is always the prefix and the last characters tell records
from counters: two (prefix, key, kind) triples never share a Redis key, even across prefixes.
Records carry a Redis expiry equal to their logical end, so Redis itself deletes finished
leases and results.

Redis must not **evict** records: a server with ``maxmemory`` and an evicting
``maxmemory-policy`` (``allkeys-lru``, ``volatile-ttl``… every record has a TTL, so the
``volatile-*`` policies evict them too) silently drops completed records, and every key runs
again. The first operation therefore reads the policy (``CONFIG GET maxmemory-policy``, or
``INFO memory`` where ``CONFIG`` is disabled, as on most managed Redis services) and, unless it
is ``noeviction``, raises :class:`~dupguard.runtime.errors.StoreConfigError` before anything
runs (``on_eviction="raise"``, the default) or warns once and goes on (``"warn"``). When the
server answers neither command, the backend warns once (``RuntimeWarning``) that it could not
verify the policy and goes on; ``on_eviction="ignore"`` skips the check (and the warning) for a
server you know is set up right. Job queues built on Redis make the same demand.

What is durable is what Redis persists. With persistence off (``save ''``, no AOF) a restart
forgets every record: keys completed before the restart may run again. An owner that was
running across the restart re-creates its record under its fence when it renews or
completes (see :mod:`dupguard.runtime.backends`), so its key is not run twice unless another
claimant reaches the empty server first. Use ``appendonly yes`` (``appendfsync always`` for
no loss at all) when completed keys must survive a restart.

``client_or_url`` is a URL (``redis://host:port/db``), a ``redis.Redis`` client, or a
``redis.asyncio.Redis`` client. With a URL the async methods run on the event loop, no worker
thread: each loop gets a connection of its own from :mod:`._resp`, a small standard-library
client that pipelines the loop's commands (see there for cancellation, timeouts and the end
of a loop), so the async path needs no redis-py at all. It understands ``redis://``,
``rediss://`` and ``unix://`` URLs with a user name, password and database (and redis-py's
``ssl_cert_reqs``/``ssl_check_hostname``/``ssl_ca_certs``); a URL with any other query option
keeps the worker-thread path below. With a sync client the async methods run the sync ones
in worker threads, which works from any number of event loops. With an asyncio client the
async methods are native and the sync ones raise ``TypeError`` (an asyncio client belongs to
one loop). The sync methods of a backend made from a URL use redis-py with a socket timeout
and no transparent retries, and send the scripts on one connection per thread, made with the
client's settings, instead of a pool round per call (a third of the CPU per operation); every
connection or server error surfaces as ``StoreError``, on either path. The scripts are
written so that a retried call is harmless anyway (a claim is recognised by its token, a
completion by its fence), except ``incr``, which may count twice if a client retries it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
import threading
import warnings
from typing import Any, Literal

from ..errors import StoreConfigError, StoreError
from . import (
    Backend,
    Claim,
    Record,
    _resp,
    _seconds,
    check_duration,
    check_key,
    check_payload,
    decode_result,
    duration_us,
    encode_result,
    keep_us,
    lease_lost,
)

log = logging.getLogger("dupguard.runtime")

__all__ = ["RedisBackend"]

_PRELUDE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
local function pexpire(us) redis.call('PEXPIRE', KEYS[1], math.ceil(us / 1000) + 1) end
local rec = redis.call('HMGET', KEYS[1], 's', 'f', 'e', 'p', 'r', 'o', 'k', 'x')
local state, fence, e = rec[1], tonumber(rec[2]) or 0, tonumber(rec[3]) or 0
local live = state and e > now
local kept = tonumber(rec[7]) or 0
"""

_SCRIPTS = {
    # ARGV: lease_us, payload, token, keep_us, take_abandoned ('1' or '0')
    "claim": """
if live then
  if state == 'pending' and rec[6] == ARGV[3] then
    return {'acquired', rec[2], fmt(e - now), rec[4] or '', '', rec[8] or ''}
  end
  if state == 'done' then return {'done', rec[2], fmt(e - now), rec[4] or '', rec[5] or ''} end
  return {'busy', rec[2], fmt(e - now), rec[4] or ''}
end
local abandoned = state == 'pending' and e + kept > now
if abandoned and ARGV[5] == '0' then return {'abandoned', rec[2], fmt(e + kept - now), rec[4] or ''} end
local from = ''
if abandoned then from = rec[2] end
local nf = math.max(fence + 1, now)
local lease, keep = tonumber(ARGV[1]), tonumber(ARGV[4])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'pending', 'f', fmt(nf), 'e', fmt(now + lease), 'p', ARGV[2], 'o', ARGV[3],
  'k', ARGV[4], 'x', from)
pexpire(lease + keep)
return {'acquired', fmt(nf), ARGV[1], ARGV[2], '', from}
""",
    # ARGV: fence, result, ttl_us
    "complete": """
local mine = tonumber(ARGV[1])
if live and fence ~= mine then return {'lost', state, rec[2]} end
if live and state == 'done' then return {'ok'} end
local payload = ''
if state and fence == mine then payload = rec[4] or '' end
local ttl = tonumber(ARGV[3])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'done', 'f', ARGV[1], 'e', fmt(now + ttl), 'p', payload, 'r', ARGV[2])
pexpire(ttl)
return {'ok'}
""",
    # ARGV: fence, lease_us
    "renew": """
local mine = tonumber(ARGV[1])
if live and (fence ~= mine or state ~= 'pending') then return {'lost', state, rec[2]} end
local lease = tonumber(ARGV[2])
if state == 'pending' and fence == mine then
  redis.call('HSET', KEYS[1], 'e', fmt(now + lease))
  pexpire(lease + kept)
  return {'ok'}
end
local payload = ''
if state and fence == mine then payload = rec[4] or '' end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'pending', 'f', ARGV[1], 'e', fmt(now + lease), 'p', payload)
pexpire(lease)
return {'ok'}
""",
    # ARGV: fence
    "release": """
if not state then return {'absent'} end
local mine = tonumber(ARGV[1])
if state == 'pending' and fence == mine then
  redis.call('DEL', KEYS[1])
  return {'released'}
end
if live and fence ~= mine then return {'lost', state, rec[2]} end
return {'noop'}
""",
    "get": """
if not live then return {} end
return {state, rec[2], fmt(e - now), rec[4] or '', rec[5] or ''}
""",
}

# counters need no record: their own tiny script (ARGV: amount, ttl_ms or '')
_INCR = """
local existed = redis.call('EXISTS', KEYS[1])
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if existed == 0 and ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v
"""

_LUA = {name: _PRELUDE + body for name, body in _SCRIPTS.items()}
_LUA["incr"] = _INCR
_SHA = {name: hashlib.sha1(lua.encode()).hexdigest() for name, lua in _LUA.items()}


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else ("" if value is None else str(value))


_ON_EVICTION = ("raise", "warn", "ignore")


def _policy_from(reply: Any, field: str) -> str | None:
    """The eviction policy in a ``CONFIG GET`` or ``INFO memory`` reply (a dict), if present."""
    if not isinstance(reply, dict):
        return None
    for name, value in reply.items():
        if _s(name) == field:
            return _s(value)
    return None


class RedisBackend(Backend):
    """A store in Redis: atomic Lua scripts, the server's clock, fencing; many hosts."""

    def __init__(
        self,
        client_or_url: Any,
        *,
        prefix: str = "dupguard:",
        socket_timeout: float = 5.0,
        on_eviction: Literal["raise", "warn", "ignore"] = "raise",
    ) -> None:
        if not isinstance(prefix, str) or "{" in prefix or "}" in prefix:
            raise ValueError(f"prefix must be a str without braces (they would split the hash tag), not {prefix!r}")
        if prefix:
            check_key(prefix)
        socket_timeout = check_duration(socket_timeout, "socket_timeout")
        if on_eviction not in _ON_EVICTION:
            raise ValueError(f"on_eviction must be one of {_ON_EVICTION}, not {on_eviction!r}")
        self.on_eviction = on_eviction
        self._policy_ok = on_eviction == "ignore"  # set once the server's policy was judged
        # a URL this package's own client understands: async methods run on the loop (see _anative)
        self._target = _resp.parse_url(client_or_url) if isinstance(client_or_url, str) else None
        try:
            import redis
            import redis.asyncio
        except ImportError as exc:
            if self._target is None:
                raise ImportError("RedisBackend needs the redis package: pip install 'dupguard[redis]'") from exc
            redis = None  # type: ignore[assignment]  # async methods only: the sync ones say what to install
        if redis is not None:
            self._errors: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
            self._noscript: type[BaseException] = redis.exceptions.NoScriptError
            self._refused: tuple[type[BaseException], ...] = (
                redis.exceptions.ResponseError,
                redis.exceptions.AuthorizationError,
            )
        else:
            self._errors, self._noscript, self._refused = (OSError,), _resp.ReplyError, (_resp.ReplyError,)
        self.prefix = prefix
        self.socket_timeout = socket_timeout
        self._owns_client = isinstance(client_or_url, str)
        # URL-built: each thread sends its scripts on a connection of its own (see _direct)
        self._local = threading.local()
        self._direct_conns: list[tuple[threading.Thread, Any]] = []
        self._direct_lock = threading.Lock()
        # and each event loop on a connection of its own (see _anative)
        self._aconns: dict[asyncio.AbstractEventLoop, _resp.Connection] = {}
        self._closed = False
        self._sync: Any = None
        self._async: Any = None
        if isinstance(client_or_url, str):
            if redis is not None:
                from redis.backoff import NoBackoff
                from redis.retry import Retry

                self._sync = redis.Redis.from_url(
                    client_or_url,
                    socket_timeout=socket_timeout,
                    socket_connect_timeout=socket_timeout,
                    retry=Retry(NoBackoff(), 0),
                    retry_on_error=[],
                )
            self.channel = f"redis:{client_or_url}:{prefix}"
        elif redis is not None and isinstance(client_or_url, redis.asyncio.Redis):
            self._async = client_or_url
            self.channel = f"redis:{id(client_or_url)}:{prefix}"
        elif hasattr(client_or_url, "evalsha"):
            self._sync = client_or_url
            self.channel = f"redis:{id(client_or_url)}:{prefix}"
        else:
            raise TypeError(f"RedisBackend needs a redis URL or client, not {type(client_or_url).__name__}")
        # how the async methods reach the server: on the loop (ours or redis.asyncio's) or None (threads)
        self._ascript: Any = (
            self._anative if self._target is not None else self._acall if self._async is not None else None
        )

    def __repr__(self) -> str:
        return f"RedisBackend(prefix={self.prefix!r})"

    def _key(self, key: str) -> str:
        return f"{self.prefix}{{{key}}}"

    def _counter(self, key: str) -> str:
        return f"{self.prefix}{{{key}}}:n"

    # ------------------------------------------------------------------ eviction policy
    def _judge(self, policy: str | None) -> None:
        """Refuse or warn about an evicting server (see the module docstring); once judged
        acceptable (or warned about), the backend does not ask again."""
        if policy == "noeviction":
            self._policy_ok = True
            return
        if policy is None:
            message = (
                "dupguard: RedisBackend could not read the server's maxmemory-policy (CONFIG GET and INFO "
                "were refused); if it evicts keys, completed records vanish and their keys run again. Make "
                "sure it is 'noeviction', then pass on_eviction='ignore' to skip this check"
            )
        else:
            message = (
                f"dupguard: the Redis server's maxmemory-policy is {policy!r}: it may evict records, and an "
                "evicted record lets its key run again. Set 'maxmemory-policy noeviction' on that server "
                "(or give dupguard a server of its own)"
            )
            if self.on_eviction == "raise":
                raise StoreConfigError(message + "; on_eviction='warn' accepts it with a warning")
        self._policy_ok = True
        log.warning("%s", message)
        warnings.warn(message, RuntimeWarning, stacklevel=4)

    def _check_policy(self) -> None:
        if self._owns_client:
            try:
                policy = self._direct_policy()
            except self._errors as exc:
                raise StoreError(f"redis: reading maxmemory-policy failed: {exc}") from exc
            self._judge(policy)
            return
        try:
            try:
                policy = _policy_from(self._sync.config_get("maxmemory-policy"), "maxmemory-policy")
            except self._refused:  # CONFIG disabled, renamed or not permitted: managed Redis
                policy = None
            if policy is None:
                try:
                    policy = _policy_from(self._sync.info("memory"), "maxmemory_policy")
                except self._refused:
                    policy = None
        except self._errors as exc:
            raise StoreError(f"redis: reading maxmemory-policy failed: {exc}") from exc
        self._judge(policy)

    async def _acheck_policy(self) -> None:
        try:
            try:
                policy = _policy_from(await self._async.config_get("maxmemory-policy"), "maxmemory-policy")
            except self._refused:
                policy = None
            if policy is None:
                try:
                    policy = _policy_from(await self._async.info("memory"), "maxmemory_policy")
                except self._refused:
                    policy = None
        except self._errors as exc:
            raise StoreError(f"redis: reading maxmemory-policy failed: {exc}") from exc
        self._judge(policy)

    # ------------------------------------------------------------------ transport
    def _call(self, name: str, key: str, *args: Any) -> Any:
        if self._sync is None:
            if self._target is not None:
                raise ImportError(
                    "RedisBackend's sync methods need the redis package (pip install 'dupguard[redis]'); "
                    "without it only the async ones (aclaim, acomplete, …) work"
                )
            raise TypeError(
                "this RedisBackend wraps a redis.asyncio client: use the async methods "
                "(aclaim, acomplete, …) or give it a URL or a sync client"
            )
        if not self._policy_ok:
            self._check_policy()
        if self._owns_client:
            return self._direct(name, key, *args)
        try:
            try:
                return self._sync.evalsha(_SHA[name], 1, key, *args)
            except self._noscript:  # a restarted or flushed server forgot the script
                return self._sync.eval(_LUA[name], 1, key, *args)
        except self._errors as exc:
            raise StoreError(f"redis {name} failed for {key!r}: {exc}") from exc

    async def _acall(self, name: str, key: str, *args: Any) -> Any:
        if not self._policy_ok:
            await self._acheck_policy()
        try:
            try:
                return await self._async.evalsha(_SHA[name], 1, key, *args)
            except self._noscript:
                return await self._async.eval(_LUA[name], 1, key, *args)
        except self._errors as exc:
            raise StoreError(f"redis {name} failed for {key!r}: {exc}") from exc

    async def _anative(self, name: str, key: str, *args: Any) -> Any:
        """One script on this event loop's own connection (:mod:`._resp`), no worker thread.

        The async methods of a backend made from a URL used to run the sync call in a worker
        thread; in an app that hop and the GIL hand-over around it cost several times the
        command (``bench/RESULTS.md``, "The helpers' overhead in the e2e apps"). The command is
        written and its reply read on the loop instead: the same scripts, keys and fences as
        :meth:`_direct`, only the transport differs. A connection that fails (lost, timed out)
        fails the calls in flight with ``StoreError`` and the next call connects again.
        """
        if not self._policy_ok:
            await self._anative_policy()
        try:
            reply = await self._aexecute("EVALSHA", _SHA[name], 1, key, *args)
            if isinstance(reply, _resp.ReplyError) and str(reply).startswith("NOSCRIPT"):
                reply = await self._aexecute("EVAL", _LUA[name], 1, key, *args)  # a restarted server forgot it
        except OSError as exc:  # ConnectionError, TimeoutError: the connection is gone
            raise StoreError(f"redis {name} failed for {key!r}: {exc}") from exc
        if isinstance(reply, _resp.ReplyError):
            raise StoreError(f"redis {name} failed for {key!r}: {reply}")
        return reply

    def _aexecute(self, *command: Any) -> Any:
        """The reply to ``command`` on this loop's connection (an awaitable), connecting first if needed."""
        loop = asyncio.get_running_loop()
        conn = self._aconns.get(loop)
        if conn is None or conn.error is not None or conn.pid != os.getpid():
            conn = self._aconnect(loop)
        if conn.opening is not None:
            return self._aexecute_opened(conn, command)
        return conn.send(*command)

    @staticmethod
    async def _aexecute_opened(conn: _resp.Connection, command: tuple) -> Any:
        opening = conn.opening
        if opening is not None:  # shared by every first caller: one caller's cancellation must not stop it
            await asyncio.shield(opening)
        return await conn.send(*command)

    def _aconnect(self, loop: asyncio.AbstractEventLoop) -> _resp.Connection:
        """A new connection for ``loop``, replacing a failed one; connections of closed loops and
        of the parent process (after a fork) are dropped."""
        if self._closed:
            raise StoreError("RedisBackend is closed")
        assert self._target is not None
        pid = os.getpid()
        conn = _resp.Connection(loop, self._target, self.socket_timeout)
        with self._direct_lock:
            for other_loop, other in list(self._aconns.items()):
                # inherited from the parent (its socket and selector are the parent's), or its loop
                # ended without closing it (no asyncio.run): drop it without touching either
                if other.pid != pid or other_loop.is_closed():
                    other.forget()
                    del self._aconns[other_loop]
            self._aconns[loop] = conn
        conn.start()
        return conn

    async def _anative_policy(self) -> None:
        """:meth:`_check_policy` on this loop's connection."""
        try:
            reply = await self._aexecute("CONFIG", "GET", "maxmemory-policy")
            policy = None
            if isinstance(reply, list):  # RESP2: names and values, flat
                policy = _policy_from(dict(zip(reply[::2], reply[1::2])), "maxmemory-policy")
            if policy is None:  # CONFIG disabled, renamed or not permitted: managed Redis
                info = await self._aexecute("INFO", "memory")
                if isinstance(info, bytes):
                    lines = info.decode("utf-8", "replace").splitlines()
                    policy = _policy_from(dict(line.split(":", 1) for line in lines if ":" in line), "maxmemory_policy")
        except OSError as exc:
            raise StoreError(f"redis: reading maxmemory-policy failed: {exc}") from exc
        self._judge(policy)

    def _close_aconns(self) -> None:
        """Close every loop's connection, each from its own loop's thread."""
        with self._direct_lock:
            conns, self._aconns = self._aconns, {}
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for loop, conn in conns.items():
            if conn.pid != os.getpid() or loop.is_closed():
                conn.forget()
            elif loop is running or not loop.is_running():
                conn.close()
            else:
                try:
                    loop.call_soon_threadsafe(conn.close)
                except RuntimeError:  # the loop closed meanwhile
                    conn.forget()

    def _direct(self, name: str, key: str, *args: Any) -> Any:
        """One script on this thread's own connection (a client made from a URL, so ours).

        The client's own path (``evalsha``) takes a connection from the pool, checks it, runs
        the command through its retry and instrumentation layers and gives it back: about
        three times what sending the command and reading the reply costs (``bench/e2e/
        helpers_cost.py``), paid on every claim and completion. Each thread (a worker thread of
        ``asyncio.to_thread`` included) keeps one connection instead, made with the client's
        settings (timeouts, no retries, credentials, TLS); redis-py drops it on a connection
        error or timeout, so a late reply is never read as the next one, and the next command
        connects again.
        """
        try:
            try:
                return self._command("EVALSHA", _SHA[name], 1, key, *args)
            except self._noscript:  # a restarted or flushed server forgot the script
                return self._command("EVAL", _LUA[name], 1, key, *args)
        except self._errors as exc:
            raise StoreError(f"redis {name} failed for {key!r}: {exc}") from exc

    def _command(self, *args: Any) -> Any:
        """Send one command on this thread's connection and read its reply (see :meth:`_direct`)."""
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is None or local.pid != os.getpid():
            conn = self._new_direct()
        try:
            conn.send_command(*args)
            return conn.read_response()
        except self._errors:
            raise  # redis-py disconnected it if the connection is in doubt (an error reply is not)
        except BaseException:  # interrupted between the command and its reply: never reuse it
            conn.disconnect()
            raise

    def _direct_policy(self) -> str | None:
        """:meth:`_check_policy` over this thread's connection (no connection of the pool's)."""
        try:
            reply = self._command("CONFIG", "GET", "maxmemory-policy")
            if isinstance(reply, list):  # RESP2: a flat list of names and values
                reply = dict(zip(reply[::2], reply[1::2]))
            policy = _policy_from(reply, "maxmemory-policy")
        except self._refused:  # CONFIG disabled, renamed or not permitted: managed Redis
            policy = None
        if policy is None:
            try:
                lines = _s(self._command("INFO", "memory")).splitlines()
                policy = _policy_from(dict(line.split(":", 1) for line in lines if ":" in line), "maxmemory_policy")
            except self._refused:
                policy = None
        return policy

    def _new_direct(self) -> Any:
        if self._closed:
            raise StoreError("RedisBackend is closed")
        pool = self._sync.connection_pool
        conn = pool.connection_class(**pool.connection_kwargs)
        self._local.conn, self._local.pid = conn, os.getpid()
        with self._direct_lock:
            # connections of finished threads are closed here, so thread churn cannot leak them
            alive = []
            for thread, other in self._direct_conns:
                if thread.is_alive():
                    alive.append((thread, other))
                else:
                    other.disconnect()
            alive.append((threading.current_thread(), conn))
            self._direct_conns = alive
        return conn

    def close(self) -> None:
        if self._owns_client:
            self._closed = True
            self._close_aconns()
        if self._owns_client and self._sync is not None:
            with self._direct_lock:
                conns, self._direct_conns = self._direct_conns, []
            for _thread, conn in conns:
                conn.disconnect()
            self._local = threading.local()
            self._sync.close()

    # ------------------------------------------------------------------ decoding
    @staticmethod
    def _claim(reply: list) -> Claim:
        status, fence, remaining, payload = (_s(x) for x in reply[:4])
        result = decode_result(_s(reply[4])) if status == "done" else None
        taken_from = _s(reply[5]) if len(reply) > 5 else ""
        return Claim(
            status,  # type: ignore[arg-type]
            int(fence),
            _seconds(int(remaining)),
            payload or None,
            result,
            expired_holder=int(taken_from) if taken_from else None,
        )

    @staticmethod
    def _checked(key: str, fence: int, reply: list) -> str:
        status = _s(reply[0])
        if status == "lost":
            raise lease_lost(key, fence, f"{_s(reply[1])} under fence {_s(reply[2])}")
        return status

    @staticmethod
    def _record(reply: list) -> Record | None:
        if not reply:
            return None
        state, fence, remaining, payload, result = (_s(x) for x in reply)
        value = decode_result(result) if state == "done" else None
        return Record(state, int(fence), _seconds(int(remaining)), payload or None, value)  # type: ignore[arg-type]

    @staticmethod
    def _incr_args(amount: int, ttl: float | None) -> tuple:
        return amount, "" if ttl is None else max(1, duration_us(ttl, "ttl") // 1000)

    def _claim_args(self, key: str, lease: float, payload: str | None, keep: float, take_abandoned: bool) -> tuple:
        lease_us = duration_us(lease, "lease")
        keep_for = keep_us(keep)
        take = 1 if take_abandoned else 0
        return self._key(check_key(key)), lease_us, check_payload(payload) or "", secrets.token_hex(8), keep_for, take

    def _complete_args(self, key: str, fence: int, result: Any, ttl: float) -> tuple:
        ttl_us = duration_us(ttl, "ttl")
        return self._key(check_key(key)), fence, encode_result(result), ttl_us

    # ------------------------------------------------------------------ contract
    def claim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        return self._claim(self._call("claim", *self._claim_args(key, lease, payload, keep, take_abandoned)))

    def complete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        self._checked(key, fence, self._call("complete", *self._complete_args(key, fence, result, ttl)))
        self.waiters.notify(key)

    def release(self, key: str, fence: int) -> bool:
        check_key(key)
        released = self._checked(key, fence, self._call("release", self._key(key), fence)) == "released"
        if released:
            self.waiters.notify(key)
        return released

    def renew(self, key: str, fence: int, *, lease: float) -> float:
        lease_us = duration_us(lease, "lease")
        self._checked(key, fence, self._call("renew", self._key(check_key(key)), fence, lease_us))
        return lease

    def get(self, key: str) -> Record | None:
        return self._record(self._call("get", self._key(check_key(key))))

    def incr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        return int(self._call("incr", self._counter(check_key(key)), *self._incr_args(amount, ttl)))

    # ------------------------------------------------------------------ async
    async def aclaim(
        self, key: str, *, lease: float, payload: str | None = None, keep: float = 0, take_abandoned: bool = True
    ) -> Claim:
        if self._ascript is None:
            return await super().aclaim(key, lease=lease, payload=payload, keep=keep, take_abandoned=take_abandoned)
        args = self._claim_args(key, lease, payload, keep, take_abandoned)
        return self._claim(await self._ascript("claim", *args))

    async def acomplete(self, key: str, fence: int, result: Any = None, *, ttl: float) -> None:
        if self._ascript is None:
            return await super().acomplete(key, fence, result, ttl=ttl)
        reply = await self._ascript("complete", *self._complete_args(key, fence, result, ttl))
        self._checked(key, fence, reply)
        self.waiters.notify(key)

    async def arelease(self, key: str, fence: int) -> bool:
        if self._ascript is None:
            return await super().arelease(key, fence)
        reply = await self._ascript("release", self._key(check_key(key)), fence)
        released = self._checked(key, fence, reply) == "released"
        if released:
            self.waiters.notify(key)
        return released

    async def arenew(self, key: str, fence: int, *, lease: float) -> float:
        if self._ascript is None:
            return await super().arenew(key, fence, lease=lease)
        lease_us = duration_us(lease, "lease")
        self._checked(key, fence, await self._ascript("renew", self._key(check_key(key)), fence, lease_us))
        return lease

    async def aget(self, key: str) -> Record | None:
        if self._ascript is None:
            return await super().aget(key)
        return self._record(await self._ascript("get", self._key(check_key(key))))

    async def aincr(self, key: str, amount: int = 1, *, ttl: float | None = None) -> int:
        if self._ascript is None:
            return await super().aincr(key, amount, ttl=ttl)
        return int(await self._ascript("incr", self._counter(check_key(key)), *self._incr_args(amount, ttl)))
