"""Exactly-once under SIGKILL: 16 worker processes over 200 keys, killed at random moments.

The driver (``kill_driver.py``) forks 16 workers that run every key through
``Idempotency(store, on_abandoned=policy).run`` with a side effect appended, with ``fsync``,
to an append-only file, SIGKILLs random workers at random moments and restarts them, on
SQLite and on Redis. A worker killed after its side effect and before its completion was
recorded (milliseconds: the ``fsync`` and one store write) leaves a key whose effect happened
but is not recorded; the next claim learns, atomically, that the key's holder stopped
(``Claim.expired_holder``), and the policy decides. Afterwards, for every key:

``reconcile`` (exactly once)
    the new holder asks the effects file, the side effect's own record, whether the key's
    effect happened (``reconcile(key)``) and records what it found, or runs the key when it
    did not: **every key has exactly one effect, and its stored result is that effect**
    (0 duplicates, 0 missing).
``raise`` (at most once)
    a killed holder's key is never run again (``OutcomeUnknown``): **no key has two effects**;
    a completed key's stored result is its one effect; the keys whose outcome is unknown are
    counted, with and without an effect.
``rerun`` (at least once, the default)
    the completed run's effect is the key's last; every earlier effect belongs to a worker
    that was SIGKILLed and never recorded that key (counted, ``rerun_after_kill``); any other
    second effect (two live holders, a run after completion, a lost completion) fails.

The normal suite runs one short round per backend and policy. The long version runs rounds of
fresh keys for ``DUPGUARD_KILL_SECONDS`` seconds per backend and prints its figures::

    DUPGUARD_KILL_SECONDS=150 python -m pytest tests/runtime/test_kill.py -s -q -k "reconcile or raise"

Figures of such runs are in ``bench/RESULTS.md`` ("Hardening runs (issue 18)").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from dupguard.runtime import Idempotency, OutcomeUnknown

DRIVER = Path(__file__).with_name("kill_driver.py")
LONG = float(os.environ.get("DUPGUARD_KILL_SECONDS", "0") or 0)


def lines(path: Path) -> list[tuple[str, str]]:
    if not path.exists():
        return []
    return [tuple(line.split(" ")) for line in path.read_text().splitlines()]  # type: ignore[misc]


FILES = ("effects", "completions", "lost", "unknown", "reconciled")


def audit(store, figures: dict, policy: str = "rerun", **logs: list) -> dict:
    """Check every key (see the module docstring); returns the counts, raises on a violation.

    ``logs`` are the driver's files as lists of ``(key, value)`` lines (missing ones: empty)."""
    effects, completions = logs.get("effects", []), logs.get("completions", [])
    killed = set(figures["killed"])
    recorded = {nonce for _key, nonce in completions}
    per_key: dict[str, list[str]] = defaultdict(list)
    for key, nonce in effects:
        per_key[key].append(nonce)
    assert set(per_key) <= set(figures["keys"]), "an effect for a key nobody asked for"
    # the audit never runs a key: an abandoned one raises OutcomeUnknown instead
    idem = Idempotency(store, on_abandoned="raise")
    counts = {"rerun_after_kill": 0, "unknown_with_effect": 0, "unknown_without_effect": 0}
    violations = []

    def never(key: str):
        def fn():
            raise AssertionError(f"key {key!r} had not completed: it ran again")

        return fn

    for key in figures["keys"]:
        ran = per_key.get(key, [])
        try:
            stored = idem.run(key, never(key))  # a replay: every key completed ...
        except OutcomeUnknown:  # ... or, at most once, its holder was killed before recording it
            if policy != "raise" or len(ran) > 1:
                violations.append(f"{key}: outcome unknown under {policy!r}, effects {ran}")
            counts["unknown_with_effect" if ran else "unknown_without_effect"] += 1
            continue
        if not ran or ran[-1] != stored:
            violations.append(f"{key}: stored {stored!r}, effects {ran}")
            continue
        for nonce in ran[:-1]:
            pid = int(nonce.split("-")[0])
            if policy == "rerun" and pid in killed and nonce not in recorded:
                counts["rerun_after_kill"] += 1  # killed between its effect and its record: at least once
            else:
                violations.append(f"{key}: effect {nonce} of a live or completed run, then {ran[-1]}")
    assert not violations, "side effects ran twice (or never):\n" + "\n".join(violations[:20])
    reconciled = logs.get("reconciled", [])
    return {
        "policy": policy,
        "rounds": figures["rounds"],
        "keys": len(figures["keys"]),
        "kills": len(killed),
        "effects": len(effects),
        "duplicates": len(violations),
        "missing": sum(1 for key in figures["keys"] if not per_key.get(key)) - counts["unknown_without_effect"],
        **counts,
        "unknown_reported": len(logs.get("unknown", [])),
        "reconciled_found": sum(1 for _key, nonce in reconciled if nonce != "-"),
        "reconciled_missing": sum(1 for _key, nonce in reconciled if nonce == "-"),
        "lease_lost": len(logs.get("lost", [])),
        "seconds": figures["elapsed"],
    }


def test_audit_catches_a_second_run(tmp_path):
    """The audit is not vacuous: a key run twice by live workers, or never completed, fails it."""
    from dupguard.runtime import MemoryBackend

    store = MemoryBackend()
    Idempotency(store).run("k", lambda: "1-1")
    figures = {"rounds": 1, "keys": ["k"], "killed": [], "elapsed": 0}
    with pytest.raises(AssertionError, match="ran twice"):
        audit(store, figures, effects=[("k", "2-1"), ("k", "1-1")], completions=[("k", "1-1"), ("k", "2-1")])
    with pytest.raises(AssertionError, match="ran twice"):  # an effect after the completion
        audit(store, figures, effects=[("k", "1-1"), ("k", "2-1")], completions=[("k", "1-1")])
    figures["killed"] = [2]
    counts = audit(store, figures, effects=[("k", "2-1"), ("k", "1-1")], completions=[("k", "1-1")])
    assert counts["rerun_after_kill"] == 1
    for policy in ("reconcile", "raise"):  # exactly once, at most once: a re-run after a kill is a duplicate
        with pytest.raises(AssertionError, match="ran twice"):
            audit(store, figures, policy, effects=[("k", "2-1"), ("k", "1-1")], completions=[("k", "1-1")])
    with pytest.raises(AssertionError, match="had not completed"):
        audit(store, {**figures, "keys": ["k", "never-ran"]}, effects=[("k", "1-1")], completions=[("k", "1-1")])
    # a key whose holder was killed before recording it: unknown at most once, a failure otherwise
    from dupguard.runtime.backends import compose_key

    store.claim(compose_key("idem", "u"), lease=0.01, keep=60)
    import time

    time.sleep(0.02)
    unknown = {**figures, "keys": ["k", "u"]}
    counts = audit(store, unknown, "raise", effects=[("k", "1-1"), ("u", "2-1")], unknown=[("u", "7")])
    assert counts["unknown_with_effect"] == 1 and counts["unknown_reported"] == 1 and counts["missing"] == 0
    with pytest.raises(AssertionError, match="outcome unknown"):
        audit(store, unknown, "reconcile", effects=[("k", "1-1"), ("u", "2-1")])


@pytest.mark.timeout(max(300, 3 * LONG + 120))
@pytest.mark.parametrize("policy", ["rerun", "reconcile", "raise"])
def test_16_workers_200_keys_random_sigkills(shared_backend, tmp_path, policy):
    store, spec = shared_backend
    files = {name: tmp_path / f"{name}.log" for name in FILES}
    spec = {
        **spec,
        **{name: str(path) for name, path in files.items()},
        "policy": policy,
        "workers": 16,
        "keys": 200,
        "lease": 2.0,  # a killed holder's key is taken over after 2 s
        # work long enough that the round outlasts many kill intervals even on a loaded machine
        "work": 0.05 if not LONG else 0.01,
        "kill_every": 0.02 if not LONG else 0.1,
        "kill_for": 2.0 if not LONG else 20.0,
        "round_timeout": 60.0,
        "seconds": LONG,
        "seed": uuid.uuid4().int & 0xFFFF,
    }
    run = subprocess.run(
        [sys.executable, str(DRIVER), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=max(240, 2 * LONG + 120),
    )
    assert run.returncode == 0, run.stderr[-4000:]
    figures = json.loads(run.stdout)
    assert figures["failures"] == [], (figures["failures"], run.stderr[-4000:])
    counts = audit(store, figures, policy, **{name: lines(path) for name, path in files.items()})
    print(f"\nkill test on {spec['kind']}: {json.dumps(counts)}")
    assert counts["kills"] >= 3, counts  # the workers really were killed while working
    assert counts["duplicates"] == 0 and counts["missing"] == 0, counts
    if policy == "reconcile":  # exactly once
        assert counts["effects"] == counts["keys"], counts
    elif policy == "raise":  # at most once: every key without an effect is one of the unknown
        assert counts["effects"] == counts["keys"] - counts["unknown_without_effect"], counts
        assert counts["unknown_reported"] >= counts["unknown_with_effect"] + counts["unknown_without_effect"], counts
    else:
        assert counts["effects"] >= counts["keys"]
