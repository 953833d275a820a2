"""``IdempotencyMiddleware``: the ``Idempotency-Key`` HTTP header for any ASGI app.

It follows the IETF draft *The Idempotency-Key HTTP Header Field*
(draft-ietf-httpapi-idempotency-key-header): a client sends a unique key with a request that
is not idempotent by nature (``POST``, ``PATCH``) and may retry it with the same key; the
server runs the request once and answers every retry with the first response. Plain ASGI
and the standard library only, so it wraps Starlette, FastAPI or any other ASGI app without
importing any of them::

    app.add_middleware(IdempotencyMiddleware, store=RedisBackend(url), principal=user_of)

For each request with a key, in any worker or host sharing ``store``:

* the **first** one claims ``(principal, key)`` with one atomic store operation and runs
  under a lease that a heartbeat renews (a worker that dies stops renewing; after ``lease``
  seconds another request with the key runs it);
* a **duplicate while it runs** waits for it and then gets its response
  (``on_in_progress="wait"``, at most ``wait_timeout`` seconds; if the first one fails and
  gives the key back, the waiting duplicate runs the request itself), or gets
  ``409 Conflict`` with ``Retry-After`` (``"conflict"``);
* a **duplicate after it finished** gets the stored status, headers and body, byte for byte,
  plus ``Idempotent-Replayed: true``, for ``ttl`` seconds;
* the same key with a **different request** (method, path, query string and body are
  fingerprinted with SHA-256) gets ``422 Unprocessable Content``: a client bug;
* a **missing key** passes through, or gets ``400`` when ``required=True``; a malformed one
  (not a Structured Field string or a bare token of visible ASCII, or longer than
  ``max_key_length``) gets ``400``.

Which responses are kept: a ``5xx`` always releases the key, so the client's retry runs the
request again (the server failed; the draft leaves the retry to the client). A ``4xx`` is
released too unless ``keep_response(status)`` says otherwise: by default only responses below
400 are stored. A ``4xx`` almost always means the handler refused the request before doing
anything (validation, authentication, a missing resource), and a retry may succeed once the
client fixed its credentials or the resource exists; replaying the refusal would make that
key useless. An API whose ``4xx`` can follow an effect (a ``402`` after a declined charge
was recorded) passes ``keep_response=lambda status: status < 500``.

The decision is made when the response's last body chunk is ready and *before* it is sent:
a client that has read the whole response can retry at once and always finds it stored (or
released). Responses are captured in full (at most ``max_response_bytes``; a larger one is
still sent, but duplicates then get ``409`` saying the response could not be kept) and
stored as JSON (the body base64-encoded) through the backend contract of
:mod:`dupguard.runtime.backends`, so every backend works: ``MemoryBackend`` for one process,
``SQLiteBackend`` for workers on one host, ``RedisBackend`` for several hosts.

Keys are scoped per principal when ``principal(scope)`` returns one (a user id from your
authentication middleware, an API key id): two users sending the same key never meet, and
one user can never receive another's stored response. ``principal`` may be sync or async and
runs after the middlewares outside this one, so put this middleware *inside* the one that
authenticates. Without it (or when it returns ``None``) keys are global.

Store failures answer ``503`` with ``Retry-After: 1`` before the request runs (fail closed:
running it without the guard could run it twice). If the store fails *after* the request
ran, the response is sent after a second of trying to record it, and the middleware goes on
trying until ``lease`` seconds have passed; if it never succeeds the failure is logged and
the key runs again once its lease expires.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import inspect
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Literal

from . import _waiters
from .backends import Backend, Claim
from .backends.memory import default_backend
from .errors import LeaseLost, StoreError
from .lease import Lease

__all__ = ["IdempotencyMiddleware", "parse_idempotency_key", "request_fingerprint"]

log = logging.getLogger("dupguard.runtime")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_VERSION = 1  # layout of a stored response, so a later layout can tell old records apart


def parse_idempotency_key(values: Iterable[bytes], *, max_length: int = 255) -> str | None:
    """The key from the header's raw values, or ``None`` when it is malformed.

    The draft makes the field a Structured Field *String* (RFC 8941): ``"8e03978e-40d5"``,
    printable ASCII between double quotes, ``\\"`` and ``\\\\`` the only escapes; parameters
    after it are ignored. Many clients send the bare value instead (``8e03978e-40d5``), so a
    token of visible ASCII without quotes, commas or spaces is accepted too. The header given
    twice (two lines, or a comma-joined list) is malformed: which key would count?
    """
    values = list(values)
    if len(values) != 1:
        return None
    try:
        text = values[0].decode("ascii").strip(" \t")
    except UnicodeDecodeError:
        return None
    if text.startswith('"'):
        out: list[str] = []
        i = 1
        while i < len(text):
            char = text[i]
            if char == "\\":
                if i + 1 < len(text) and text[i + 1] in '"\\':
                    out.append(text[i + 1])
                    i += 2
                    continue
                return None
            if char == '"':
                rest = text[i + 1 :]
                if rest and not rest.startswith(";"):
                    return None  # a list, or garbage after the string
                key = "".join(out)
                return key if 0 < len(key) <= max_length else None
            if not " " <= char <= "~":
                return None
            out.append(char)
            i += 1
        return None  # no closing quote
    if not text or len(text) > max_length:
        return None
    if any(not "!" <= char <= "~" or char in ',"' for char in text):
        return None
    return text


def request_fingerprint(scope: Scope, body: bytes) -> str:
    """SHA-256 (hex, 32 chars) of the method, path, query string and body: what makes two
    requests "the same payload" for the 422 check."""
    digest = hashlib.sha256()
    for part in (
        str(scope.get("method", "")).encode(),
        str(scope.get("path", "")).encode("utf-8", "surrogateescape"),
        bytes(scope.get("query_string", b"")),
    ):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    digest.update(body)
    return digest.hexdigest()[:32]


def _keep_below_400(status: int) -> bool:
    return status < 400


class _Capture:
    """What the app sent, while it is sent: the status, headers and body of one response."""

    __slots__ = ("body", "finished", "headers", "oversize", "size", "started", "status")

    def __init__(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.size = 0
        self.started = False
        self.finished = False
        self.oversize = False


class IdempotencyMiddleware:
    """Run each ``Idempotency-Key`` once; replay its response to retries (see the module).

    ``app`` is the ASGI app to wrap (first, so ``app.add_middleware(IdempotencyMiddleware,
    store=...)`` works in Starlette and FastAPI). ``store`` is any runtime backend (default:
    the process-wide ``MemoryBackend``, one process only). ``ttl`` is how long a response is
    replayed, ``lease`` how long a request whose worker stopped renewing keeps its key.
    """

    def __init__(
        self,
        app: ASGIApp,
        store: Backend | None = None,
        *,
        methods: Iterable[str] = ("POST", "PATCH"),
        required: bool = False,
        ttl: float = 86400.0,
        lease: float = 60.0,
        on_in_progress: Literal["wait", "conflict"] = "wait",
        wait_timeout: float | None = 60.0,
        principal: Callable[[Scope], str | None | Awaitable[str | None]] | None = None,
        keep_response: Callable[[int], bool] = _keep_below_400,
        header: str = "Idempotency-Key",
        replay_header: str = "Idempotent-Replayed",
        max_key_length: int = 255,
        max_request_bytes: int = 10 * 1024 * 1024,
        max_response_bytes: int = 10 * 1024 * 1024,
        namespace: str = "http",
    ) -> None:
        if on_in_progress not in ("wait", "conflict"):
            raise ValueError(f"on_in_progress must be 'wait' or 'conflict', not {on_in_progress!r}")
        if ttl <= 0 or lease <= 0:
            raise ValueError("ttl and lease must be positive")
        if wait_timeout is not None and wait_timeout < 0:
            raise ValueError("wait_timeout must be >= 0 or None")
        self.app = app
        self._store = store
        self.methods = frozenset(m.upper() for m in methods)
        self.required = required
        self.ttl = float(ttl)
        self.lease = float(lease)
        self.on_in_progress = on_in_progress
        self.wait_timeout = wait_timeout
        self.principal = principal
        self.keep_response = keep_response
        self.header = header.lower().encode("latin-1")
        self.replay_header = replay_header.lower().encode("latin-1")
        self.max_key_length = max_key_length
        self.max_request_bytes = max_request_bytes
        self.max_response_bytes = max_response_bytes
        self.namespace = namespace

    def __repr__(self) -> str:
        return (
            f"IdempotencyMiddleware({self.store!r}, methods={sorted(self.methods)}, required={self.required}, "
            f"on_in_progress={self.on_in_progress!r})"
        )

    @property
    def store(self) -> Backend:
        return self._store if self._store is not None else default_backend()

    # ------------------------------------------------------------------ entry point
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") not in self.methods:
            await self.app(scope, receive, send)
            return
        values = [value for name, value in scope.get("headers", ()) if name.lower() == self.header]
        if not values:
            if self.required:
                await _problem(send, 400, "Idempotency-Key required", f"{self._name} must be sent with this request")
                return
            await self.app(scope, receive, send)
            return
        key = parse_idempotency_key(values, max_length=self.max_key_length)
        if key is None:
            await _problem(
                send,
                400,
                "Malformed Idempotency-Key",
                f"{self._name} must be one string of at most {self.max_key_length} printable ASCII characters",
            )
            return
        body = await self._read_body(receive, send)
        if body is None:
            return
        who = self.principal(scope) if self.principal is not None else None
        if inspect.isawaitable(who):
            who = await who
        skey = self._store_key(who, key)
        fingerprint = request_fingerprint(scope, body)
        claim = await self._claim(skey, fingerprint, send)
        if claim is None:
            return
        await self._execute(scope, _replaying(body, receive), send, skey, claim.fence)

    @property
    def _name(self) -> str:
        return self.header.decode("latin-1").title()

    def _store_key(self, principal: str | None, key: str) -> str:
        # a digest keeps the principal out of the store's key names and makes the scoping
        # injective: no principal text can make two scopes' keys meet
        who = "-" if principal is None else hashlib.sha256(str(principal).encode()).hexdigest()[:32]
        return f"{self.namespace}:{who}:{key}"

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        """The whole request body (needed for the fingerprint before anything runs); ``None``
        when the client left or the body is too large (then a 413 was sent)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            if message["type"] != "http.request":
                continue
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_request_bytes:
                await _problem(
                    send,
                    413,
                    "Request too large for an idempotent request",
                    f"bodies sent with {self._name} are kept to at most {self.max_request_bytes} bytes",
                )
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    # ------------------------------------------------------------------ claiming
    async def _claim(self, skey: str, fingerprint: str, send: Send) -> Claim | None:
        """Take the key, or answer the request (replay, 409, 422, 503) and return ``None``."""
        store = self.store
        waiters = store.waiters if self.on_in_progress == "wait" else None
        deadline = None if self.wait_timeout is None else time.monotonic() + self.wait_timeout
        step = 0.01
        while True:
            fut = waiters.register(skey) if waiters is not None else None
            try:
                try:
                    claim = await store.aclaim(skey, lease=self.lease, payload=fingerprint)
                except StoreError as exc:
                    log.warning("dupguard: idempotency store unavailable: %s", exc)
                    await _problem(
                        send, 503, "Idempotency store unavailable", "retry shortly", headers=[(b"retry-after", b"1")]
                    )
                    return None
                if claim.acquired:
                    return claim
                if claim.payload and claim.payload != fingerprint:
                    await _problem(
                        send,
                        422,
                        "Idempotency-Key reused",
                        f"this {self._name} was already used for a different request (method, path or body)",
                    )
                    return None
                if claim.status == "done":
                    await self._replay(send, claim.result)
                    return None
                now = time.monotonic()
                if fut is None or (deadline is not None and now >= deadline):
                    retry = str(max(1, math.ceil(claim.remaining)))
                    await _problem(
                        send,
                        409,
                        "Request in progress",
                        f"a request with this {self._name} is being processed; retry later",
                        headers=[(b"retry-after", retry.encode())],
                    )
                    return None
                # in-process completions wake us through ``fut``; other processes are polled
                # with a growing interval, never past the holder's lease or our deadline
                pause = claim.remaining + 0.002
                if not store.local_only:
                    pause = min(pause, step)
                    step = min(step * 1.5, 0.25)
                if deadline is not None:
                    pause = min(pause, deadline - now)
                await _waiters.await_(fut, pause)
            finally:
                if fut is not None:
                    waiters.unregister(skey, fut)  # type: ignore[union-attr]

    async def _replay(self, send: Send, stored: Any) -> None:
        if not isinstance(stored, dict) or stored.get("v") != _VERSION:
            await _problem(send, 500, "Unreadable stored response", "the stored response has an unknown layout")
            return
        if stored.get("unstored"):
            await _problem(
                send,
                409,
                "Response not kept",
                f"the request with this {self._name} was processed, but its response was too large to keep",
            )
            return
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in stored["headers"]]
        headers.append((self.replay_header, b"true"))
        await send({"type": "http.response.start", "status": stored["status"], "headers": headers})
        await send({"type": "http.response.body", "body": base64.b64decode(stored["body"]), "more_body": False})

    # ------------------------------------------------------------------ running
    async def _execute(self, scope: Scope, receive: Receive, send: Send, skey: str, fence: int) -> None:
        lease = Lease(self.store, skey, fence, ttl=self.lease, max_run=self.ttl).astart()
        capture = _Capture()

        async def capturing_send(message: Message) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                capture.started = True
                capture.status = int(message["status"])
                capture.headers = [(bytes(n), bytes(v)) for n, v in message.get("headers", ())]
            elif kind == "http.response.body" and capture.started and not capture.finished:
                chunk = message.get("body", b"")
                capture.size += len(chunk)
                if capture.size > self.max_response_bytes:
                    capture.oversize = True
                    capture.body = []
                elif not capture.oversize:
                    capture.body.append(bytes(chunk))
                if not message.get("more_body", False):
                    capture.finished = True
                    # before the last chunk leaves, so a client holding the whole response finds
                    # it stored; a store that does not answer within a second does not hold the
                    # response back: the recording goes on after it was sent
                    record = await self._settle(lease, capture)
                    if record is not None:
                        await send(message)
                        await self._record(lease, record, time.monotonic() + self.lease)
                        return
            await send(message)

        try:
            await self.app(scope, receive, capturing_send)
        except BaseException:
            if not capture.finished:
                await self._give_back(lease)
            raise
        if not capture.finished:  # the app returned without completing a response
            await self._give_back(lease)

    async def _settle(self, lease: Lease, capture: _Capture) -> dict[str, Any] | None:
        """Store the response for replay, or release the key so a retry runs again. Returns the
        record when the store did not take it within a second (the caller keeps trying)."""
        status = capture.status
        if status >= 500 or not self.keep_response(status):
            await self._give_back(lease)
            return None
        if capture.oversize:
            record: dict[str, Any] = {"v": _VERSION, "status": status, "unstored": True}
        else:
            record = {
                "v": _VERSION,
                "status": status,
                "headers": [[n.decode("latin-1"), v.decode("latin-1")] for n, v in capture.headers],
                "body": base64.b64encode(b"".join(capture.body)).decode("ascii"),
            }
        await lease.astop()
        if await self._record(lease, record, time.monotonic() + min(1.0, self.lease), final=False):
            return None
        return record

    async def _record(self, lease: Lease, record: dict[str, Any], deadline: float, *, final: bool = True) -> bool:
        """Complete the key with ``record``, retrying store failures until ``deadline`` (the
        request ran: its response must be found by retries). True once settled either way."""
        delay = 0.05
        while True:
            try:
                await lease.backend.acomplete(lease.key, lease.fence, record, ttl=self.ttl)
                return True
            except LeaseLost as exc:  # another worker took over after our lease ran out
                log.warning("dupguard: response for %r not stored: %s", lease.key, exc)
                return True
            except TypeError as exc:  # the store refused the record (its size): keep the key done
                if record.get("unstored"):
                    log.warning("dupguard: response for %r not stored: %s", lease.key, exc)
                    return True
                record = {"v": _VERSION, "status": record["status"], "unstored": True}
            except StoreError as exc:
                if time.monotonic() + delay > deadline:
                    if final:
                        log.error("dupguard: response for %r not stored, the key may run again: %s", lease.key, exc)
                    return final
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    @staticmethod
    async def _give_back(lease: Lease) -> None:
        try:
            await lease.arelease()
        except (LeaseLost, StoreError) as exc:
            log.warning("dupguard: releasing %r failed: %s", lease.key, exc)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then the client's messages."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _problem(
    send: Send, status: int, title: str, detail: str, *, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """An RFC 9457 problem-details response, the format the draft's examples use."""
    body = json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/problem+json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
