"""DUP103 constant-session-key: literal ``thread_id`` / ``session_id`` values reached from
per-request code.

A checkpointer or session store keyed by a constant is one conversation for every user: the
graph resumes the previous user's pending tool calls. Literal keys count when they appear in
a handler or worker, or in a module-level config dict that a handler passes to a call. The
model records the literal keys (``Model.constant_keys``); this module decides which of them
per-request code reaches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...semantic.model import Call, ConstantKey, Model
from ..registry import Finding, RuleContext, rule


def constant_session_keys(model: Model) -> Iterator[tuple[ConstantKey, Call | None]]:
    """(literal key, the per-request call that uses it, when it is not where the key is)."""
    module_configs: dict[str, ConstantKey] = {}
    for key in model.constant_keys:
        if key.in_main:
            continue
        if key.function is not None:
            if model.is_concurrent_context(key.function):
                yield key, None
            continue
        for b in model.bindings:
            if b.scope == "module" and b.statement is key.statement:
                module_configs.setdefault(b.target, key)
    yield from _positional_keys(model)
    if not module_configs:
        return
    reported: set[int] = set()
    for call in model.calls:
        if not model.is_concurrent_context(call.function, call.in_main):
            continue
        for arg in call.args:
            configured = module_configs.get(arg.dotted or "")
            if configured is None or id(configured) in reported:
                continue
            binding = model.local_binding(arg.dotted or "", call.function)
            if binding is not None and binding.scope == "module":
                reported.add(id(configured))
                yield configured, call


def _positional_keys(model: Model) -> Iterator[tuple[ConstantKey, Call | None]]:
    """A literal passed where the catalog says a constructor takes its key positionally
    (``session_kwargs`` holding an index: ``SQLiteSession("whatsapp", "chats.db")``)."""
    import libcst as cst

    for call in model.calls:
        entry = model.entry_for_call(call)
        if entry is None or call.in_main or not model.is_concurrent_context(call.function):
            continue
        names = [k for k in entry.session_kwargs if not k.isdigit()] or ["session key"]
        for key in (k for k in entry.session_kwargs if k.isdigit()):
            arg = call.arg(key)
            if arg is not None and isinstance(arg.node, (cst.SimpleString, cst.Integer)):
                yield (
                    ConstantKey(
                        key=names[0],
                        value=arg.node,
                        function=call.function,
                        statement=call.statement,
                        call=call,
                        in_main=False,
                    ),
                    None,
                )


@rule("DUP103", name="constant-session-key")
def constant_session_key(model: Model, ctx: RuleContext) -> Iterable[Finding]:
    for key, use in constant_session_keys(model):
        fn = use.function if use is not None else key.function
        where = f"`{fn.name if fn else 'module code'}`"
        if use is not None:
            where += f", line {ctx.line(use.node)}"
        yield Finding(
            key.value,
            f"`{key.key}` is the constant {getattr(key.value, 'value', 'string')} in code that runs per "
            f"request ({where}): every user shares one conversation and replays its tool calls; derive "
            f"`{key.key}` from the request (user or session id)",
        )
