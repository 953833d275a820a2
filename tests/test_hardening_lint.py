"""Issue 18, linter and fix: what a repository dupguard did not write can do to it.

dupguard runs in CI on code it did not write, often as root, and ``fix`` rewrites files.
Each test builds the hostile input for real (committed caches, symbolic links, FIFOs, hard
links, read-only files, another user) and runs the real command line, or the pipeline in
this process where a moment has to be chosen exactly.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dupguard import __version__
from dupguard.config import Settings
from linthelpers import RULES_DIR, SHARED_AGENT, run_cli

# an agent file without findings: it passes the prefilter, so its result is cached
CLEAN_AGENT = "from strands import Agent\n\n\ndef handler(text):\n    return Agent().run(text)\n"
FINDING = ("app.py", 5, "DUP101")

DUP301 = RULES_DIR / "DUP301-duplicate-tool"
FIXABLE = re.sub(r"[ \t]*#\s*error:.*", "", (DUP301 / "bad.py").read_text())
FIXED = (DUP301 / "fixed.py").read_text()

NOBODY = 65534


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def _findings(proc: subprocess.CompletedProcess) -> list[tuple[str, int, str]]:
    assert b"Traceback" not in proc.stderr and b"internal error" not in proc.stderr, proc.stderr.decode()
    return sorted((Path(d["filename"]).name, d["location"]["row"], d["code"]) for d in json.loads(proc.stdout))


def _errors(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.decode().splitlines() if line.startswith("dupguard: error: ")]


def _user_cache(tmp_path: Path) -> dict[str, str]:
    """The user's cache directory (where the cache key lives) for this test only."""
    return {"XDG_CACHE_HOME": str(tmp_path / "user-cache")}


def _run(
    args: list[str], cwd: Path, *, env: dict | None = None, timeout: float = 120, **kwargs
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("DUPGUARD_DEBUG", None)
    return subprocess.run(args, cwd=cwd, env=full_env, capture_output=True, timeout=timeout, **kwargs)


def _dupguard(*args: str) -> list[str]:
    return [sys.executable, "-m", "dupguard", *args]


def _as_nobody() -> list[str]:
    """Run as an unprivileged user (uid/gid 65534, no supplementary groups)."""
    if os.geteuid() != 0:
        pytest.skip("switching to another user needs root")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv is not installed")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can enter (pytest's tmp_path is private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="dupguard-hardening-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# the settings of ``check --isolated --output-format json`` (a report that carries the fixes)
JSON_SETTINGS = Settings(with_fixes=True)


def _cache_file(project: Path) -> Path:
    return project / ".dupguard_cache" / f"v{__version__}" / f"{JSON_SETTINGS.lint_hash()}.json"


def _cache_key(data: str) -> str:
    from dupguard.cache import Cache

    return Cache(Path("unused"), "h", "v", b"k" * 32).key(data.encode(), Settings().enabled_codes())


# ----------------------------------------------------------------------------- 1: a cache written elsewhere


def _forge(project: Path, entries: dict, form: str) -> None:
    """A cache as a repository could commit it: as older releases wrote it, or in the current
    format under a key that is not this user's."""
    path = _cache_file(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    if form == "plain":
        path.write_text(json.dumps(entries))
        return
    from dupguard.cache import Cache

    cache = Cache(project / ".dupguard_cache", JSON_SETTINGS.lint_hash(), __version__, b"\x01" * 32, base=project)
    for key, value in entries.items():
        cache.put(key, value)
    cache.save()
    assert path.read_bytes().split(b"\n", 1)[1].startswith(b"{")


@pytest.mark.parametrize("form", ["plain", "another-key"])
def test_a_committed_cache_can_neither_hide_nor_invent_findings(tmp_path: Path, form: str) -> None:
    project = _write(tmp_path / "project", {"app.py": SHARED_AGENT, "clean.py": CLEAN_AGENT})
    forged = {
        _cache_key(SHARED_AGENT): [],  # "no findings" for the file that has one
        _cache_key(CLEAN_AGENT): [[1, 0, 1, 4, "DUP101", "invented", None]],
    }
    _forge(project, forged, form)
    env = _user_cache(tmp_path)
    args = ("check", "--isolated", "--output-format", "json", ".")
    first = run_cli(*args, cwd=project, env=env)
    assert first.returncode == 1 and _findings(first) == [FINDING]
    # the cache now holds this user's own results, and they are used
    assert run_cli(*args, cwd=project, env=env).stdout == first.stdout
    key = tmp_path / "user-cache" / "dupguard" / "key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32


def test_a_cache_copied_from_another_user_is_ignored(tmp_path: Path) -> None:
    """The same project, linted by one user (CI restoring someone else's cache): the other
    user's cache file, genuine for them, is not believed by this one."""
    project = _write(tmp_path / "project", {"app.py": SHARED_AGENT})
    args = ("check", "--isolated", "--output-format", "json", ".")
    assert run_cli(*args, cwd=project, env={"XDG_CACHE_HOME": str(tmp_path / "them")}).returncode == 1
    text = _cache_file(project).read_text()
    _cache_file(project).write_text(text.replace('"DUP101"', '"DUP102"'))  # their file, edited
    proc = run_cli(*args, cwd=project, env=_user_cache(tmp_path))
    assert _findings(proc) == [FINDING]


@pytest.mark.parametrize(
    "entry",
    [
        [[1, 0]],
        "not a list",
        [None],
        [["a", "b", "c", "d", "DUP101", "m", None]],
        [[-1, 0, 1, 1, "DUP101", "m", None]],
        [[5, 0, 5, 1, "DUP101", "m", {"edits": 5}]],
        [[5, 0, 5, 1, "DUP101", "m", {"applicability": "safe", "message": "m", "edits": [{"content": 1}]}]],
        {"a": 1},
    ],
    ids=["short", "string", "null", "strings", "negative", "bad-fix", "bad-edit", "object"],
)
def test_a_wrongly_shaped_cache_entry_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry) -> None:
    """Item 10: a cache entry of the wrong shape (even one with a valid MAC, as a bug or an
    older release could write) is a miss, never an internal error."""
    from dupguard.cache import Cache, linter_build, user_key

    project = _write(tmp_path / "project", {"app.py": SHARED_AGENT})
    env = _user_cache(tmp_path)
    args = ("check", "--isolated", "--output-format", "json", ".")
    _forge(project, {_cache_key(SHARED_AGENT): entry}, "plain")  # the form older releases read
    assert _findings(run_cli(*args, cwd=project, env=env)) == [FINDING]
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    key = user_key()
    assert key is not None
    cache = Cache(
        project / ".dupguard_cache", JSON_SETTINGS.lint_hash(), __version__, key, base=project, build=linter_build()
    )
    cache.put(_cache_key(SHARED_AGENT), entry)
    cache.save()
    proc = run_cli(*args, cwd=project, env=env)
    assert proc.returncode == 1 and _findings(proc) == [FINDING]


@pytest.mark.parametrize("same_build", [True, False], ids=["this-build", "another-build"])
def test_results_of_another_build_of_the_linter_are_not_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same_build: bool
) -> None:
    """This user's own cache, written by another build of dupguard with the same version number
    (an editable install before an edit to a rule, a pre-commit environment of an earlier commit):
    its results are not this build's and are recomputed. With this build's fingerprint the same
    entry is believed, which is what shows the fingerprint is what excludes it."""
    from dupguard.cache import Cache, linter_build, user_key

    project = _write(tmp_path / "project", {"app.py": SHARED_AGENT})
    env = _user_cache(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    key = user_key()
    assert key is not None
    build = linter_build() if same_build else "an-earlier-build"
    cache = Cache(project / ".dupguard_cache", JSON_SETTINGS.lint_hash(), __version__, key, base=project, build=build)
    cache.put(_cache_key(SHARED_AGENT), [])  # "no findings", as a build without the rule would say
    cache.save()
    proc = run_cli("check", "--isolated", "--output-format", "json", ".", cwd=project, env=env)
    assert _findings(proc) == ([] if same_build else [FINDING])


def test_without_a_private_place_for_the_key_there_is_no_cache(shared_dir: Path) -> None:
    """A read-only home: no key can be kept, so nothing is cached (rather than a cache anyone
    could have written); linting is unaffected."""
    project = _write(shared_dir / "project", {"app.py": SHARED_AGENT})
    os.chown(project, NOBODY, NOBODY)
    home = shared_dir / "home"
    home.mkdir(mode=0o755)  # root's: read-only for nobody
    env = {"HOME": str(home), "XDG_CACHE_HOME": ""}
    proc = _run([*_as_nobody(), *_dupguard("check", "--isolated", "--output-format", "json", ".")], project, env=env)
    assert proc.returncode == 1 and _findings(proc) == [FINDING]
    assert not (project / ".dupguard_cache").exists()
    assert not (home / ".cache").exists()


# ----------------------------------------------------------------------------- 2: no file created through a link


def test_a_committed_dangling_link_in_the_cache_creates_nothing(tmp_path: Path) -> None:
    project = _write(tmp_path / "project", {"app.py": SHARED_AGENT})
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / ".dupguard_cache").mkdir()
    (project / ".dupguard_cache" / ".gitignore").symlink_to(outside / "gitignore")
    version = project / ".dupguard_cache" / f"v{__version__}"
    version.mkdir()
    (version / f"{Settings().lint_hash()}.json").symlink_to(outside / "cache.json")
    proc = run_cli("check", "--isolated", "app.py", cwd=project, env=_user_cache(tmp_path))
    assert proc.returncode == 1
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("where", ["cache directory", "version directory", "cache directory's parent"])
def test_a_linked_cache_directory_is_not_written_through(tmp_path: Path, where: str) -> None:
    project = _write(tmp_path / "project", {"app.py": SHARED_AGENT})
    outside = tmp_path / "outside"
    outside.mkdir()
    config = None
    if where == "cache directory":
        (project / ".dupguard_cache").symlink_to(outside, target_is_directory=True)
    elif where == "version directory":
        (project / ".dupguard_cache").mkdir()
        (project / ".dupguard_cache" / f"v{__version__}").symlink_to(outside, target_is_directory=True)
    else:
        (project / "build").symlink_to(outside, target_is_directory=True)
        config = 'cache-dir = "build/cache"'
    if config:
        _write(project, {"pyproject.toml": f"[tool.dupguard]\n{config}\n"})
    env = _user_cache(tmp_path)
    for _ in range(2):
        proc = run_cli("check", "--output-format", "json", "app.py", cwd=project, env=env)
        assert proc.returncode == 1 and _findings(proc) == [FINDING]
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{tmp}/elsewhere", "is absolute"),
        ("../elsewhere", "leads out of the project"),
        ("cache/../../elsewhere", "leads out of the project"),
    ],
)
def test_a_config_file_cache_dir_stays_inside_the_project(tmp_path: Path, value: str, problem: str) -> None:
    value = value.replace("{tmp}", str(tmp_path))
    project = _write(
        tmp_path / "project", {"app.py": SHARED_AGENT, "pyproject.toml": f'[tool.dupguard]\ncache-dir = "{value}"\n'}
    )
    proc = run_cli("check", "app.py", cwd=project, env=_user_cache(tmp_path))
    assert proc.returncode == 2
    assert _errors(proc) == [_errors(proc)[0]] and "cache-dir" in _errors(proc)[0] and problem in _errors(proc)[0]
    assert proc.stdout == b""
    assert not (tmp_path / "elsewhere").exists()


def test_a_cache_dir_inside_the_project_through_dotdot_is_fine(tmp_path: Path) -> None:
    project = _write(
        tmp_path / "project",
        {"app.py": SHARED_AGENT, "pyproject.toml": '[tool.dupguard]\ncache-dir = "tools/../.cache"\n'},
    )
    assert run_cli("check", "app.py", cwd=project, env=_user_cache(tmp_path)).returncode == 1
    assert not (project / "tools").exists()
    assert (project / ".cache" / f"v{__version__}").is_dir()


def test_a_cache_dir_on_the_command_line_may_point_anywhere(tmp_path: Path) -> None:
    project = _write(tmp_path / "project", {"app.py": SHARED_AGENT})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere, target_is_directory=True)
    env = _user_cache(tmp_path)
    for _ in range(2):
        proc = run_cli(
            "check", "--isolated", "--cache-dir", str(linked), "--output-format", "json", ".", cwd=project, env=env
        )
        assert _findings(proc) == [FINDING]
    assert (elsewhere / f"v{__version__}").is_dir() and not (elsewhere / ".gitignore").exists()
    # relative to the working directory, like every path on the command line
    sub = project / "sub"
    sub.mkdir()
    assert run_cli("check", "--isolated", "--cache-dir", "../here", "../app.py", cwd=sub, env=env).returncode == 1
    assert (project / "here" / f"v{__version__}").is_dir() and (project / "here" / ".gitignore").read_text() == "*\n"


# ----------------------------------------------------------------------------- 3: a cache dir that holds the files


@pytest.mark.parametrize(("value", "named"), [(".", "would hold the whole project"), ("src", "src/app.py")])
def test_a_cache_dir_holding_the_linted_files_is_refused(tmp_path: Path, value: str, named: str) -> None:
    project = _write(
        tmp_path / "project",
        {"src/app.py": SHARED_AGENT, "pyproject.toml": f'[tool.dupguard]\ncache-dir = "{value}"\n'},
    )
    env = _user_cache(tmp_path)
    proc = run_cli("check", ".", cwd=project, env=env)
    errors = _errors(proc)
    assert proc.returncode == 2 and len(errors) == 1 and "cache-dir" in errors[0] and named in errors[0], errors
    assert not (project / ".gitignore").exists() and not (project / "src" / ".gitignore").exists()
    # without the cache the same tree is linted as ever
    assert run_cli("check", "--no-cache", ".", cwd=project, env=env).returncode == 1


def test_no_gitignore_is_written_into_a_directory_the_cache_did_not_create(tmp_path: Path) -> None:
    """``cache-dir = "docs"``: the directory is the user's; a ``*`` there would hide new docs from git."""
    project = _write(
        tmp_path / "project",
        {
            "app.py": SHARED_AGENT,
            "docs/index.md": "# docs\n",
            "pyproject.toml": '[tool.dupguard]\ncache-dir = "docs"\n',
        },
    )
    env = _user_cache(tmp_path)
    for _ in range(2):
        proc = run_cli("check", "--output-format", "json", ".", cwd=project, env=env)
        assert _findings(proc) == [FINDING]
    assert not (project / "docs" / ".gitignore").exists()
    assert (project / "docs" / f"v{__version__}").is_dir()


# ----------------------------------------------------------------------------- 4: fix stays in the tree


def test_fix_does_not_follow_links_out_of_the_tree(tmp_path: Path) -> None:
    outside = _write(tmp_path / "outside", {"victim.py": FIXABLE, "pkg/deep.py": FIXABLE})
    project = _write(tmp_path / "project", {"pkg/real.py": FIXABLE})
    (project / "link.py").symlink_to(outside / "victim.py")
    (project / "linked_dir").symlink_to(outside / "pkg", target_is_directory=True)
    (project / "alias.py").symlink_to(project / "pkg" / "real.py")  # inside: followed
    for command in (("check", "--no-cache"), ("fix",)):
        proc = run_cli(*command, "--isolated", "--select", "DUP301", ".", cwd=project)
        assert b"victim" not in proc.stdout + proc.stderr and b"deep" not in proc.stdout + proc.stderr
    assert (outside / "victim.py").read_text() == FIXABLE and (outside / "pkg" / "deep.py").read_text() == FIXABLE
    assert (project / "pkg" / "real.py").read_text() == FIXED and (project / "alias.py").is_symlink()


def test_a_link_named_on_the_command_line_is_followed_only_into_the_project(tmp_path: Path) -> None:
    outside = _write(tmp_path / "outside", {"victim.py": FIXABLE})
    project = _write(tmp_path / "project", {"pkg/real.py": FIXABLE})
    (project / "link.py").symlink_to(outside / "victim.py")
    (project / "linked_dir").symlink_to(outside, target_is_directory=True)
    (project / "alias.py").symlink_to(project / "pkg" / "real.py")
    for path in ("link.py", "linked_dir", "linked_dir/victim.py"):
        for command in (("check", "--no-cache"), ("fix",)):
            proc = run_cli(*command, "--isolated", "--select", "DUP301", path, cwd=project)
            assert proc.returncode == 1
            assert _errors(proc) == [
                f"dupguard: error: {path}: symbolic link to a path outside the project, not followed"
            ]
    assert (outside / "victim.py").read_text() == FIXABLE
    proc = run_cli("fix", "--isolated", "--select", "DUP301", "alias.py", cwd=project)
    assert proc.returncode == 0, proc.stderr.decode()
    assert (project / "pkg" / "real.py").read_text() == FIXED and (project / "alias.py").is_symlink()
    # a path outside the project named without a link is the user's to name
    assert run_cli("fix", "--isolated", "--select", "DUP301", str(outside / "victim.py"), cwd=project).returncode == 0
    assert (outside / "victim.py").read_text() == FIXED


# ----------------------------------------------------------------------------- 5: fix and concurrent edits

EDIT_WHILE_WRITING = """
import os, sys
from pathlib import Path

target = Path(sys.argv[1])
armed = [True]


def editor(event, args):
    # the first file opened for writing in the target's directory is fix's new content: an
    # editor saves the file at that very moment, between fix's check and its rename
    if event != "open" or not armed[0] or not isinstance(args[2], int):
        return
    path = os.fsdecode(args[0]) if isinstance(args[0], (str, bytes)) else ""
    if args[2] & (os.O_WRONLY | os.O_RDWR) and str(target.parent) in (path, os.path.dirname(path)):
        armed[0] = False
        with open(target, "a") as handle:
            handle.write("# saved in the editor\\n")


sys.addaudithook(editor)
from dupguard.config import Settings
from dupguard.fixer import fix_paths

result = fix_paths([target], Settings(select=("DUP301",)), unsafe=False, write=True)
print([str(error) for error in result.errors])
"""


def test_an_edit_saved_while_fix_writes_is_not_lost(tmp_path: Path) -> None:
    target = _write(tmp_path, {"app.py": FIXABLE}) / "app.py"
    proc = _run([sys.executable, "-c", EDIT_WHILE_WRITING, str(target)], tmp_path, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr.decode()
    assert target.read_text() == FIXABLE + "# saved in the editor\n"
    assert proc.stdout.decode().strip() == f"['{target}: changed while it was being fixed; not written']"
    assert [p.name for p in tmp_path.iterdir()] == ["app.py"]  # no temporary file left


def test_fix_refuses_a_file_replaced_with_the_same_content(tmp_path: Path) -> None:
    """The status counts, not only the content: a file saved again (a new inode, as editors
    save) since it was read is not overwritten from the old read."""
    from dupguard.fixer import WriteRefused, write_atomic

    target = _write(tmp_path, {"app.py": FIXABLE}) / "app.py"
    before = target.stat()
    _write(tmp_path, {"saved.py": FIXABLE})
    os.replace(tmp_path / "saved.py", target)
    with pytest.raises(WriteRefused, match="^changed while it was being fixed; not written$"):
        write_atomic(target, FIXED.encode(), FIXABLE.encode(), before)
    assert target.read_text() == FIXABLE


def test_fix_refuses_a_read_only_file(tmp_path: Path) -> None:
    target = _write(tmp_path, {"app.py": FIXABLE}) / "app.py"
    target.chmod(0o444)
    proc = run_cli("fix", "--isolated", "--select", "DUP301", "app.py", cwd=tmp_path)
    assert proc.returncode == 1 and _errors(proc) == ["dupguard: error: app.py: is read-only; not written"]
    assert target.read_text() == FIXABLE and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_fix_refuses_a_file_this_user_cannot_write(shared_dir: Path) -> None:
    """Another user's file in a directory this user may write: a rename would replace it (and
    take it over); it is refused instead."""
    project = _write(shared_dir / "project", {"app.py": FIXABLE})
    os.chown(project, NOBODY, NOBODY)
    target = project / "app.py"
    target.chmod(0o644)  # root's
    proc = _run([*_as_nobody(), *_dupguard("fix", "--isolated", "--select", "DUP301", "app.py")], project)
    assert proc.returncode == 1 and _errors(proc) == ["dupguard: error: app.py: is read-only; not written"]
    assert target.read_text() == FIXABLE and target.stat().st_uid == 0


def test_fix_removes_what_a_killed_fix_left_behind_and_nothing_else(tmp_path: Path) -> None:
    """A ``fix`` killed between naming the new content and renaming it over the file leaves
    ``.<name>.<pid>.<n>.dupguard`` beside it (the long kill test counted 63 after 200 kills,
    bench/RESULTS.md). The next ``fix`` of that file removes those whose process is gone; a live
    process's, another file's and look-alikes stay."""
    _write(tmp_path, {"app.py": FIXABLE})
    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "30"])
    try:
        stale = [tmp_path / f".app.py.{gone.pid}.0.dupguard", tmp_path / f".app.py.{gone.pid}.3.dupguard"]
        kept = [
            tmp_path / f".app.py.{alive.pid}.0.dupguard",  # a fix still running
            tmp_path / f".other.py.{gone.pid}.0.dupguard",  # another file's
            tmp_path / f".app.py.{gone.pid}.x.dupguard",  # not a name dupguard makes
        ]
        for path in stale + kept:
            path.write_text("partial")
        (tmp_path / f".app.py.{gone.pid}.1.dupguard").symlink_to(tmp_path / "app.py")
        kept.append(tmp_path / f".app.py.{gone.pid}.1.dupguard")  # a link is never removed through
        proc = run_cli("fix", "--isolated", "--select", "DUP301", "app.py", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
        assert (tmp_path / "app.py").read_text() == FIXED
        assert [p.name for p in stale if os.path.lexists(p)] == []
        assert [p.name for p in kept if not os.path.lexists(p)] == []
    finally:
        alive.kill()
        alive.wait()


def test_fix_keeps_hard_links_one_file(tmp_path: Path) -> None:
    target = _write(tmp_path, {"pkg/app.py": FIXABLE}) / "pkg" / "app.py"
    other = tmp_path / "other.py"
    os.link(target, other)
    target.chmod(0o640)
    proc = run_cli("fix", "--isolated", "--select", "DUP301", "pkg/app.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert target.read_text() == other.read_text() == FIXED
    assert os.path.samefile(target, other) and target.stat().st_nlink == 2
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_fix_keeps_mode_and_writes_through_a_link_inside_the_project(tmp_path: Path) -> None:
    target = _write(tmp_path, {"pkg/app.py": FIXABLE}) / "pkg" / "app.py"
    target.chmod(0o750)
    (tmp_path / "alias.py").symlink_to("pkg/app.py")
    assert run_cli("fix", "--isolated", "--select", "DUP301", "alias.py", cwd=tmp_path).returncode == 0
    assert target.read_text() == FIXED and stat.S_IMODE(target.stat().st_mode) == 0o750
    assert (tmp_path / "alias.py").is_symlink()
    assert sorted(p.name for p in (tmp_path / "pkg").iterdir()) == ["app.py"]


# ----------------------------------------------------------------------------- 6: deep nesting, crashing workers

AGENT_HEADER = "from strands import Agent\n\nagent = Agent()\n"
# nesting without brackets that libcst's parser cannot survive on an 8 MB stack (or, the
# last one, takes minutes over before it meets the syntax error after it)
UNBRACKETED = {
    "and": "x = " + "a and " * 10_000 + "y\n",  # one flat BoolOp for Python: its parser takes it
    "dotted import": "import " + ".".join(["a"] * 8_000) + "\n",  # a flat name for Python
    "attribute chain, then a syntax error": "x = y" + ".a" * 8_000 + "\nif x:\nfoo\n",
    "not": "x = " + "not " * 10_000 + "y\n",
    "minus": "x = " + "-" * 10_000 + "y\n",
    "attribute": "x = y" + ".a" * 8_000 + "\n",
    "call": "x = y" + "()" * 8_000 + "\n",
    "plus": "x = " + "a + " * 8_000 + "y\n",
    "elif": "if a:\n    pass\n" + "elif b:\n    pass\n" * 9_000,
    "lambda": "x = " + "lambda: " * 10_000 + "y\n",
}


@pytest.mark.parametrize("kind", sorted(UNBRACKETED))
def test_nesting_without_brackets_is_an_error_not_a_crash(tmp_path: Path, kind: str) -> None:
    _write(tmp_path, {"deep.py": AGENT_HEADER + UNBRACKETED[kind], "app.py": SHARED_AGENT})
    for command in (("check", "--no-cache"), ("fix",), ("fix", "--diff")):
        proc = run_cli(*command, "--isolated", "--select", "DUP101", "--jobs", "1", ".", cwd=tmp_path)
        assert proc.returncode == 1, (command, proc.returncode, proc.stderr.decode()[-300:])
        assert _errors(proc) == ["dupguard: error: deep.py: too deeply nested to parse"], command
        assert b"app.py:5:1: DUP101" in proc.stdout + proc.stderr


def test_the_flake8_plugin_and_fix_reparse_refuse_deep_nesting_too() -> None:
    from dupguard.pipeline import SourceError, check_nesting, lint_text

    for text in UNBRACKETED.values():
        with pytest.raises(SourceError, match="too deeply nested to parse"):
            lint_text("deep.py", AGENT_HEADER + text, Settings(), Settings().enabled_codes())
        with pytest.raises(SourceError):
            check_nesting(text)  # what fix runs on each pass's output before re-parsing it
    check_nesting(AGENT_HEADER + "x = " + "-" * 1000 + "y\n")  # Python's parser takes this: so does dupguard


def test_a_long_conditional_chain_before_a_syntax_error_is_reported_by_python_not_parsed(monkeypatch) -> None:
    """A 36 KB file whose 3,000-level ``a if b else …`` chain is followed by a syntax error:
    libcst's parser took 3 s (14 s niced, in the long fuzz run: bench/RESULTS.md) to say
    "syntax error at line 35"; Python says it in milliseconds, and dupguard now does too,
    without calling libcst's parser at all (not timed: the parser is replaced by a failure)."""
    import dupguard.parsing
    from dupguard.pipeline import SourceError, lint_text, parse

    def never(*args, **kwargs):
        raise AssertionError("libcst's parser was called")

    monkeypatch.setattr(dupguard.parsing, "parse_module", never)
    text = AGENT_HEADER + "import os\n" * 30 + "y = " + "a if b else " * 3_000 + "c\n" + "x = = 1\n"
    assert text.count("\n") == 35 and len(text) > 36_000
    expected = "syntax error at line 35, column 5: invalid syntax"
    with pytest.raises(SourceError) as info:
        parse(text)
    assert str(info.value) == expected
    with pytest.raises(SourceError, match=f"^{expected}$"):
        lint_text("chain.py", text, Settings(), Settings().enabled_codes())
    # a chain of 1,000 (Python's parser and libcst take it) still goes to libcst, as before
    shorter = AGENT_HEADER + "y = " + "a if b else " * 1_000 + "c\n"
    with pytest.raises(AssertionError, match="libcst's parser was called"):
        parse(shorter)


def _crash_on_marker(job, settings):
    """A task that dies like a native crash on one file (a real SIGSEGV), and lints the rest."""
    from dupguard.pipeline import lint_job

    if "CRASH HERE" in job[1]:
        import faulthandler

        faulthandler.disable()  # pytest's handler would print the crash; the parent reports it
        os.kill(os.getpid(), signal.SIGSEGV)
    return lint_job(job, settings)


def test_a_crashing_worker_costs_only_its_file(tmp_path: Path) -> None:
    from dupguard.pipeline import PARALLEL_THRESHOLD, Task, run

    files = []
    for i in range(3 * PARALLEL_THRESHOLD):
        text = SHARED_AGENT + ("# CRASH HERE\n" if i in (0, 30) else "")
        files.append(_write(tmp_path, {f"m{i:02}.py": text}) / f"m{i:02}.py")
    task = Task("testing", _crash_on_marker)
    done = run(files, Settings(), task, jobs=2)
    crashed = {Path(e.filename).name: e.message for e in done.errors}
    assert crashed == {
        name: "dupguard crashed while testing this file (killed by SIGSEGV); please report it"
        for name in ("m00.py", "m30.py")
    }
    linted = [s for s in done.sources if s.error is None]
    assert len(linted) == len(files) - 2 and all(len(s.value) == 1 for s in linted)


def test_a_batch_submitted_after_the_pool_broke_runs_apart_too() -> None:
    """The pool breaks (a worker crashed on the first batch) while the parent is still
    reading: the next batch's ``submit`` raises ``BrokenProcessPool``, and that batch is run
    apart like the ones already submitted, instead of ending the run in an internal error."""
    from dupguard.pipeline import BATCH_FILES, PARALLEL_THRESHOLD, Task, _Runner

    settings = Settings()
    codes = settings.enabled_codes()
    runner = _Runner(Task("testing", _crash_on_marker), settings, jobs=2)
    names = [f"m{i:02}.py" for i in range(PARALLEL_THRESHOLD + BATCH_FILES)]
    for index, name in enumerate(names[:PARALLEL_THRESHOLD]):
        text = SHARED_AGENT + ("# CRASH HERE\n" if index == 0 else "")
        runner.add((name, text, "utf-8", codes, None), 4 * PARALLEL_THRESHOLD)  # files still to read
    assert runner.pool is not None and runner.futures, "the pool started and took a batch"
    assert runner.futures[0].exception(timeout=120) is not None  # the crash broke the pool
    for name in names[PARALLEL_THRESHOLD:]:  # the last one submits a batch to the broken pool
        runner.add((name, SHARED_AGENT, "utf-8", codes, None), 0)
    outcomes = runner.results()
    assert [error for _value, error in outcomes if error] == [
        "dupguard crashed while testing this file (killed by SIGSEGV); please report it"
    ]
    assert len(outcomes) == len(names) and sum(len(value) for value, error in outcomes if not error) == len(names) - 1


def test_a_real_parser_crash_in_a_worker_is_reported_for_its_file(tmp_path: Path) -> None:
    """On a 1 MB stack libcst overflows on nesting Python accepts (2,000 unary minuses): the
    worker dies of SIGSEGV, and only that file is lost."""
    from dupguard.pipeline import PARALLEL_THRESHOLD

    count = 2 * PARALLEL_THRESHOLD
    _write(tmp_path, {f"pkg/m{i:02}.py": SHARED_AGENT for i in range(count)})
    _write(tmp_path, {"pkg/m07x.py": AGENT_HEADER + "x = " + "-" * 2_000 + "y\n"})

    def small_stack() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (1024 * 1024, resource.getrlimit(resource.RLIMIT_STACK)[1]))

    proc = _run(
        _dupguard("check", "--no-cache", "--isolated", "--jobs", "2", "--output-format", "json", "."),
        tmp_path,
        preexec_fn=small_stack,
    )
    assert proc.returncode == 1
    assert _errors(proc) == [
        "dupguard: error: pkg/m07x.py: dupguard crashed while linting this file (killed by SIGSEGV); please report it"
    ]
    # every other file's finding, and the lost file as not processed (DUP000, docs/ci.md)
    found = _findings(proc)
    assert [f for f in found if f[2] == "DUP000"] == [("m07x.py", 1, "DUP000")]
    assert len(found) == count + 1


# ----------------------------------------------------------------------------- 7: CR-only line endings


def test_a_cr_only_file_is_reported_by_check_as_by_flake8(tmp_path: Path) -> None:
    from dupguard.prefilter import might_matter

    source = SHARED_AGENT.replace("\n", "\r")
    assert might_matter(source)
    (tmp_path / "app.py").write_bytes(source.encode())
    check = run_cli("check", "--no-cache", "--isolated", "--output-format", "json", "app.py", cwd=tmp_path)
    flake8 = _run([sys.executable, "-m", "flake8", "--isolated", "--select", "DUP", "app.py"], tmp_path)
    assert check.returncode == 1 and _findings(check) == [FINDING]
    assert flake8.stdout.decode().startswith("app.py:5:1: DUP101 ")
    # and a file-level noqa on a CR-only file is honoured, as on any other
    (tmp_path / "app.py").write_bytes(("import os\r# dupguard: noqa\r" + source).encode())
    assert run_cli("check", "--no-cache", "--isolated", "app.py", cwd=tmp_path).returncode == 0


# ----------------------------------------------------------------------------- 8: FIFOs, sockets, devices


def test_fifos_sockets_and_devices_are_skipped_unopened(tmp_path: Path) -> None:
    _write(tmp_path, {"pkg/app.py": SHARED_AGENT})
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "pkg" / "walked.py")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "pkg" / "sock.py"))
    expected = {
        "dupguard: error: pipe.py: not a regular file (a FIFO), skipped",
        "dupguard: error: /dev/null: not a regular file (a character device), skipped",
        "dupguard: error: pkg/sock.py: not a regular file (a socket), skipped",
        "dupguard: error: pkg/walked.py: not a regular file (a FIFO), skipped",
    }
    try:
        for command in (("check", "--no-cache"), ("fix",), ("fix", "--diff")):
            args = (*command, "--isolated", "--select", "DUP101", "pipe.py", "/dev/null", "pkg")
            proc = _run(_dupguard(*args), tmp_path, timeout=60)  # a FIFO read would block forever
            assert proc.returncode == 1 and set(_errors(proc)) == expected, (command, proc.stderr.decode())
            assert b"pkg/app.py:5:1: DUP101" in proc.stdout + proc.stderr
    finally:
        server.close()


def test_a_file_swapped_for_a_fifo_after_discovery_is_refused(tmp_path: Path) -> None:
    from dupguard.pipeline import SourceError, read

    target = tmp_path / "app.py"
    os.mkfifo(target)
    with pytest.raises(SourceError, match=r"^not a regular file \(a FIFO\), skipped$"):
        read(target)


# ----------------------------------------------------------------------------- 9: max-file-size


def test_files_over_max_file_size_are_skipped_and_reported(tmp_path: Path) -> None:
    big = SHARED_AGENT + "#" + "-" * 2_400_000 + "\n"  # 2.4 MB, one comment
    _write(tmp_path, {"big.py": big, "app.py": SHARED_AGENT})
    size = len(big.encode())
    line = f"dupguard: error: big.py: {size} bytes, larger than max-file-size (2097152 bytes), skipped"
    for command in (("check", "--no-cache"), ("fix",)):
        proc = run_cli(*command, "--isolated", "--select", "DUP101", ".", cwd=tmp_path)
        assert proc.returncode == 1 and _errors(proc) == [line], (command, proc.stderr.decode())
        assert b"app.py:5:1: DUP101" in proc.stdout
    proc = run_cli(
        "check", "--no-cache", "--isolated", "--max-file-size", "0", "--output-format", "json", ".", cwd=tmp_path
    )
    assert _findings(proc) == [FINDING, ("big.py", 5, "DUP101")]
    _write(tmp_path, {"pyproject.toml": '[tool.dupguard]\nmax-file-size = "200B"\n'})
    proc = run_cli("check", "--no-cache", "app.py", cwd=tmp_path)
    assert _errors(proc) == [
        f"dupguard: error: app.py: {len(SHARED_AGENT)} bytes, larger than max-file-size (200 bytes), skipped"
    ]
    assert run_cli("check", "--no-cache", "--max-file-size", "3MB", "app.py", cwd=tmp_path).returncode == 1
    proc = run_cli("check", "--no-cache", "-", "--stdin-filename", "app.py", stdin=SHARED_AGENT.encode(), cwd=tmp_path)
    assert proc.returncode == 1 and "larger than max-file-size (200 bytes)" in _errors(proc)[0]


# ----------------------------------------------------------------------------- 10: bad configuration values

DEEP_TOML = "[tool.dupguard]\nselect = " + "[" * 5_000 + "]" * 5_000 + "\n"


@pytest.mark.parametrize(
    ("filename", "content", "key"),
    [
        ("dupguard.toml", "tool = 5\n", "tool"),
        ("dupguard.toml", "[tool]\ndupguard = 5\n", "[tool.dupguard]"),
        ("pyproject.toml", '[tool.dupguard]\nextend-exclude = ["!"]\n', "extend-exclude"),
        ("pyproject.toml", '[tool.dupguard]\nextend-exclude = ["[z-a]"]\n', "extend-exclude"),
        ("pyproject.toml", '[tool.dupguard]\nexclude = ["\\\\"]\n', "exclude"),
        ("pyproject.toml", '[tool.dupguard]\ncache-dir = "a\\u0000b"\n', "cache-dir"),
        ("pyproject.toml", DEEP_TOML, "TOML"),
        ("pyproject.toml", '[tool.dupguard]\nmax-file-size = "lots"\n', "max-file-size"),
        ("pyproject.toml", "[tool.dupguard]\nmax-file-size = -1\n", "max-file-size"),
        ("pyproject.toml", "[tool.dupguard]\nmax-file-size = true\n", "max-file-size"),
    ],
    ids=lambda value: value if len(value) < 40 else value[:37] + "...",
)
def test_a_bad_config_value_is_one_line_naming_the_key(tmp_path: Path, filename: str, content: str, key: str) -> None:
    _write(tmp_path, {"app.py": SHARED_AGENT, filename: content})
    for command in (("check",), ("fix",)):
        proc = run_cli(*command, "app.py", cwd=tmp_path, env=_user_cache(tmp_path))
        lines = proc.stderr.decode().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, (command, proc.stderr.decode()[-500:])
        assert lines[0].startswith(f"dupguard: error: {tmp_path / filename}: ") and key in lines[0], lines
        assert "internal error" not in lines[0]


@pytest.mark.parametrize(
    ("option", "value"), [("--extend-exclude", "!"), ("--exclude", "[z-a]"), ("--max-file-size", "2XB")]
)
def test_a_bad_command_line_value_is_one_line_naming_the_option(tmp_path: Path, option: str, value: str) -> None:
    _write(tmp_path, {"app.py": SHARED_AGENT})
    proc = run_cli("check", "--isolated", option, value, "app.py", cwd=tmp_path)
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and option.lstrip("-") in lines[0], lines


def test_a_bad_gitignore_line_in_the_tree_does_not_stop_the_walk(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {"pkg/app.py": SHARED_AGENT, "pkg/.gitignore": "[z-a]\n!\nignored.py\n", "pkg/ignored.py": SHARED_AGENT},
    )
    proc = run_cli("check", "--no-cache", "--isolated", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1 and _findings(proc) == [FINDING]


def test_the_nesting_check_prints_no_warning_about_the_users_code(tmp_path: Path) -> None:
    """The nesting check compiles a deep file with Python's own parser, which warns about what
    it reads (an invalid escape such as ``"\\P"``: a DeprecationWarning before Python 3.12, a
    SyntaxWarning since). Found by the long fuzz run (bench/RESULTS.md, "Hardening runs"): those
    warnings reached stderr as ``<dupguard>:1: ...`` lines; they are about the user's code, not
    dupguard's, and the finding list is the place for what dupguard has to say."""
    _write(tmp_path, {"deep.py": AGENT_HEADER + 'PATTERN = "\\P"\nx = ' + "not " * 10_000 + "y\n"})
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-m", "dupguard", "check", "--isolated", "--no-cache", "deep.py"],
        cwd=tmp_path,
        capture_output=True,
    )
    assert proc.returncode == 1, proc.stderr.decode()[-300:]
    assert b"escape sequence" not in proc.stderr and b"<dupguard>" not in proc.stderr, proc.stderr.decode()[-300:]
