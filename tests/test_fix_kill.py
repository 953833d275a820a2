"""``dupguard fix`` killed with SIGKILL at random moments leaves each file entirely old or
entirely new (issue 18): ``fixer.write_atomic`` writes a complete temporary file, flushes it
to disk and renames it over the old one, so there is no moment at which a file holds part of
its new content.

The tree: every rule's fixable ``bad.py``, each padded with a 300 KB string (so that a write
takes a while). One uninterrupted run in a copy of the tree gives each file's new content
and the run's duration; then, 20 times (``DUPGUARD_FIX_KILLS=200`` for the long run), the
tree is reset, ``fix`` is started (one process, or a pool of two) and its process group is
killed: a third of the time after a random delay over the whole run, otherwise a random
0-5 ms after its k-th file was replaced (k random), which is when a kill can hurt. The counts
are printed (``pytest -s``).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from dupguard.rulemeta import all_rules
from linthelpers import rule_folders

# the normal suite kills 20 times (about a minute); DUPGUARD_FIX_KILLS=200 is the long run
# whose figures bench/RESULTS.md records
KILLS = int(os.environ.get("DUPGUARD_FIX_KILLS", "20") or 20)
COPIES = 1
PADDING = 'PADDING = """' + ("padding " * 40_000) + '"""\n'  # ~300 KB in one token
COMMAND = [sys.executable, "-m", "dupguard", "fix", "--isolated", "--unsafe-fixes"]


def _tree() -> dict[str, bytes]:
    files = {}
    for folder in rule_folders():
        if all_rules()[folder.name[:6]].fix == "none" or not (folder / "fixed.py").exists():
            continue
        text = re.sub(r"[ \t]*#\s*error:.*", "", (folder / "bad.py").read_text(encoding="utf-8"))
        for copy in range(COPIES):
            files[f"pkg{copy}/{folder.name.replace('-', '_')}.py"] = (text + "\n\n" + PADDING).encode()
    return files


def _reset(root: Path, files: dict[str, bytes]) -> int:
    """Every file back to its old content; leftover temporary files removed and counted."""
    leftovers = 0
    for path in root.rglob("*"):
        if path.is_file() and path.name.endswith(".dupguard"):
            path.unlink()
            leftovers += 1
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return leftovers


@pytest.mark.timeout(max(600, 30 * KILLS))  # runs of the command line: minutes on a loaded machine
def test_fix_killed_at_random_moments_leaves_each_file_old_or_new(tmp_path: Path) -> None:
    old = _tree()
    reference = tmp_path / "reference"
    _reset(reference, old)
    start = time.monotonic()
    done = subprocess.run([*COMMAND, "--jobs", "2", "."], cwd=reference, capture_output=True, timeout=600)
    duration = time.monotonic() - start
    assert done.returncode in (0, 1), done.stderr.decode()
    new = {name: (reference / name).read_bytes() for name in old}
    changed = [name for name in old if new[name] != old[name]]
    assert len(changed) >= 8, "the tree must have files fix changes"

    work = tmp_path / "work"
    rng = random.Random(1818)
    outcomes: Counter[str] = Counter()
    leftovers = 0
    for _ in range(KILLS):
        leftovers += _reset(work, old)
        inodes = {name: (work / name).stat().st_ino for name in changed}
        jobs = rng.choice(["1", "2"])
        proc = subprocess.Popen(
            [*COMMAND, "--jobs", jobs, "."],
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: the workers die with it
        )
        if rng.random() < 1 / 3:
            time.sleep(rng.uniform(0, duration))
        else:  # right after the k-th file was replaced
            wanted = rng.randint(1, len(changed) - 1)
            deadline = time.monotonic() + 4 * duration
            while proc.poll() is None and time.monotonic() < deadline:
                if sum((work / name).stat().st_ino != inode for name, inode in inodes.items()) >= wanted:
                    break
                time.sleep(0.0005)
            time.sleep(rng.uniform(0, 0.005))
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it had finished
        proc.wait()
        states: Counter[str] = Counter()
        for name in old:
            now = (work / name).read_bytes()
            assert now in (old[name], new[name]), f"{name} is neither its old nor its new content"
            states["new" if now == new[name] and name in changed else "old"] += 1
        if (sum(outcomes.values()) + 1) % 20 == 0:  # a long run says how far it got (pytest -s)
            print(
                f"fix kill test: {sum(outcomes.values()) + 1} kills, all old or new so far", file=sys.stderr, flush=True
            )
        if states["new"] == 0:
            outcomes["no file written yet"] += 1
        elif states["new"] == len(changed):
            outcomes["every file written"] += 1
        else:
            outcomes["killed while writing"] += 1
    leftovers += _reset(work, old)
    print(
        f"\nfix kill test: {KILLS} kills, run {duration:.2f} s, {len(old)} files; {dict(outcomes)}; "
        f"temporary files left behind: {leftovers}"
    )
    assert sum(outcomes.values()) == KILLS
    shutil.rmtree(work)
