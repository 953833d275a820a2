"""DUP105 stateful-toolkit-shared: a toolkit that keeps one user's account, built once and used
by per-request code that serves many users.

Which toolkits keep a user's credentials, client or data on the instance is catalog data
(``Entry.user_state_kwargs``, read in each framework's source): agno's Google toolkits cache
the first caller's OAuth credentials and API client, ``ZepTools`` fixes one Zep user and
thread, ``Mem0Tools(user_id=...)`` pins one user's memories (agno-agi/agno PR #7377: one
user's Gmail token used for another). Read-only toolkits, search clients and toolkits
configured with the application's own key are not in that list and are never reported.

Reported when the toolkit is built once — at module level (alone, in a list, or inside a
module-level agent's ``tools=``), in a cached factory, or in ``__init__`` of the single
module-level instance of a class — and a function that runs per request uses it (or the agent
or list holding it) while knowing whose request it is: a user or session parameter, or a
``user_id=``/``session_id=`` passed on. A single-user assistant, whose handlers know no user,
shares its one account by design and is not reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ...semantic.catalog import Entry, Kind
from ...semantic.lifetimes import _cached, module_instances
from ...semantic.model import Call, Function, Model
from ...semantic.nodes import names_in
from ...semantic.request_state import PerRequest, per_request, reads_names, reads_request_value
from ..registry import Finding, RuleContext, rule

USER_WORDS = ("user", "session", "tenant", "account", "customer", "member", "owner")


@dataclass(frozen=True)
class SharedToolkit:
    call: Call
    entry: Entry
    built: str  # "at module level", "in the cached factory `get_tools()`"…
    user: Function
    why: PerRequest
    via: str  # the name the per-request code reads


def _holds_user_state(entry: Entry | None, call: Call) -> bool:
    if entry is None or entry.kind is not Kind.TOOL or not entry.user_state_kwargs:
        return False
    return entry.user_state_kwargs == ("*",) or any(call.kw(k) is not None for k in entry.user_state_kwargs)


def _module_holders(model: Model, call: Call) -> set[str]:
    """Module-level names that hold the toolkit: the binding of its statement, and the
    module-level bindings built from those (``TOOLS = [gmail]``, ``agent = Agent(tools=TOOLS)``)."""
    holders = {
        b.target for b in model.bindings if b.scope == "module" and b.function is None and b.statement is call.statement
    }
    if not holders:
        return set()
    module_level = [b for b in model.bindings if b.scope == "module" and b.function is None and not b.in_main]
    for _ in range(3):
        grown = {b.target for b in module_level if b.target not in holders and names_in(b.value) & holders}
        if not grown:
            break
        holders |= grown
    return holders


def _built_once(model: Model, call: Call) -> tuple[set[str], str] | None:
    """(names per-request code reaches the toolkit by, how it was built once)."""
    if call.in_main:
        return None
    fn = call.function
    if fn is None:
        if model.is_streamlit:
            return None  # a Streamlit script's module code re-runs per session
        holders = _module_holders(model, call)
        return (holders, "built once at module level") if holders else None
    if _cached(fn) and fn.parent is None:
        if _cached_per_user(model, fn, call):
            return None
        return {fn.name}, f"built once by the cached factory `{fn.name}()`"
    if fn.name == "__init__" and fn.class_name in module_instances(model):
        instances = {
            b.target
            for b in model.bindings
            if b.scope == "module" and b.value_call is not None and b.value_call.func == fn.class_name
        }
        return instances, f"built once in `{fn.class_name}.__init__` (one module-level instance)"
    return None


def _cached_per_user(model: Model, fn: Function, call: Call) -> bool:
    """Is the cache keyed by the user whose credentials build the toolkit?

    ``@lru_cache def gmail_for(user_id): return GmailTools(creds=stored_creds(user_id))`` keeps
    one toolkit per user, which is the remedy (one per user, that user's account), not the
    defect. It counts only when a user or session parameter reaches the toolkit's arguments,
    directly or through the factory's local bindings: a cache keyed by user that still builds
    ``GmailTools()`` from the server's token file hands every user the same account.
    (A registry of such per-user factories: OmniGPT-Official/dev-team-poc
    services/tool_providers.py@1465970edb45cdb50c8fb77081674ad0fd26e9e8.)"""
    user_params = {p for p in fn.params if any(word in p.lower() for word in USER_WORDS)}
    if not user_params:
        return False
    local = {b.target: b.value for b in model.bindings if b.function is fn}
    read: set[str] = set()
    for arg in call.args:
        read |= names_in(arg.node)
    frontier = set(read)
    for _ in range(3):  # a few hops of ``creds = load(user_id)``; more is not worth following
        reached = set().union(*(names_in(local[name]) for name in frontier if name in local)) - read
        if not reached:
            break
        read |= reached
        frontier = reached
    return bool(read & user_params)


def _knows_its_user(model: Model, fn: Function) -> bool:
    """Does the function serve an identified user: a user/session parameter, or a
    ``user_id=``/``session_id=`` it passes on with a value from the request?"""
    if any(any(word in p.lower() for word in USER_WORDS) for p in fn.params):
        return True
    for call in fn.calls:
        for arg in call.args:
            if (
                arg.keyword
                and any(word in arg.keyword.lower() for word in USER_WORDS)
                and reads_request_value(model, fn, arg.node)
            ):
                return True
    return False


def shared_toolkits(model: Model) -> Iterator[SharedToolkit]:
    for call in model.calls:
        entry = model.entry_for_call(call)
        if not _holds_user_state(entry, call):
            continue
        once = _built_once(model, call)
        if once is None:
            continue
        names, built = once
        for fn in model.functions:
            why = per_request(model, fn)
            if why is None:
                continue
            via = reads_names(fn, names)
            if via is not None and _knows_its_user(model, fn):
                assert entry is not None
                yield SharedToolkit(call, entry, built, fn, why, via)
                break


@rule("DUP105", name="stateful-toolkit-shared")
def stateful_toolkit_shared(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for shared in shared_toolkits(model):
        entry = shared.entry
        yield Finding(
            shared.call.node,
            f"`{shared.call.func}(...)` keeps one user's account on the instance ({entry.version}, "
            f"`{entry.source}`) and is {shared.built}; `{shared.user.name}` "
            f"({shared.why.describe()}) serves each user through `{shared.via}`, so every user acts "
            "with the credentials, client or memories of whoever used it first; build the toolkit per "
            "user or per request with that user's credentials (or `user_id=`)",
        )
