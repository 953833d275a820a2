#!/usr/bin/env python3
"""dupguard's speed, measured against its neighbours on the same files in the same run.

Why this exists: a linter that slows down pre-commit or CI gets switched off, and a
LibCST-based linter is easy to make slow (bench/RESULTS.md lists the targets). This script checks those
targets with numbers: irrelevant files cost a text search, relevant files cost little more than one
LibCST parse and one walk, workers scale, the cache works, the flake8 adapter is thin.

Usage (from the repository root, with the project's Python, where dupguard is installed)::

    .venv/bin/python bench/run.py [--quick] [--reps N] [--corpora a,b,c] [--no-write]

Everything large is prepared on the fly under ``bench/.corpora/`` (git-ignored):

* ``venv/``: a scratch virtualenv with ruff, fixit, flake8 (same version as the project's)
  and llama-index-core, installed from PyPI with pip on first use;
* ``stdlib/`` (corpus a): this Python's standard library (``sysconfig`` ``stdlib``), ``.py``
  files only, without ``site-packages`` and without test packages (``test``, ``tests``,
  ``idle_test``: they hold deliberately broken files that exercise error paths, not speed);
* ``agents/`` (corpus b): 2,000 agent-application files, copies of ``rules/*/bad.py``,
  ``rules/*/good.py`` and ``tests/corpus/**/*.py`` whose top-level names are renamed per copy
  (so neither the content-hash cache nor anything else can treat copies as one file);
* ``llama_index_core/`` (corpus c): the installed source of ``llama_index.core``.

In every corpus, files or directories whose name is in dupguard's default exclude list (which
ruff shares: ``build``, ``venv``, ...) are left out, so that every tool lints the same files;
the script checks the counts before timing.

Every tool runs as a subprocess (``os.wait4`` gives its CPU time and the peak RSS of the
largest process in its tree); wall time is ``time.perf_counter`` around it. Tools alternate
within each repetition (and the order rotates), so that load from elsewhere on the machine
hits them alike. Results: medians, min–max, the ratios of issue 6's targets with PASS/FAIL,
written between the markers in ``bench/RESULTS.md`` and in full to
``bench/.corpora/last-run.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CORPORA = BENCH / ".corpora"
VENV = CORPORA / "venv"
RESULTS = BENCH / "RESULTS.md"
BEGIN, END = "<!-- BEGIN GENERATED (bench/run.py) -->", "<!-- END GENERATED -->"
AGENT_FILES = 2000
TEST_DIRS = {"test", "tests", "idle_test"}


# --------------------------------------------------------------------------- preparation


def _excluded_names() -> set[str]:
    from dupguard.config import DEFAULT_EXCLUDE

    return set(DEFAULT_EXCLUDE) | {"__pycache__"}


def _parses(data: bytes) -> bool:
    import ast

    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    return True


def _copy_tree(src: Path, dst: Path, skip_dirs: set[str]) -> None:
    """Copy the ``.py`` files of ``src`` that every tool will lint (see the module doc)."""
    excluded = _excluded_names()
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in excluded and d not in skip_dirs)
        rel = Path(dirpath).relative_to(src)
        for name in sorted(filenames):
            if not name.endswith(".py") or name in excluded or name[:-3] in excluded:
                continue
            data = (Path(dirpath) / name).read_bytes()
            if not _parses(data):
                continue
            target = tmp / rel / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    shutil.rmtree(dst, ignore_errors=True)
    tmp.rename(dst)


def prepare_venv(log) -> None:
    """ruff, fixit, flake8 (without dupguard's plugin) and llama-index-core, from PyPI."""
    python = VENV / "bin" / "python"
    need = ["ruff", "fixit", "llama-index-core", f"flake8=={_version('flake8')}"]
    if python.exists():
        probe = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; print(m.version('flake8'))"],
            capture_output=True,
            text=True,
        )
        if (
            (VENV / "bin" / "ruff").exists()
            and (VENV / "bin" / "fixit").exists()
            and probe.stdout.strip() == _version("flake8")
            and (_llama_dir()).is_dir()
        ):
            return
    else:
        log(f"creating {VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    log("installing " + " ".join(need) + " (first run only)")
    subprocess.run([str(python), "-m", "pip", "install", "-q", *need], check=True)


def _llama_dir() -> Path:
    return (
        Path(next(iter((VENV / "lib").glob("python3*")), VENV / "lib" / "python3"))
        / "site-packages"
        / "llama_index"
        / "core"
    )


def _version(dist: str, python: Path | None = None) -> str:
    if python is None:
        import importlib.metadata

        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "?"
    out = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or "?"


def prepare_stdlib(log) -> Path:
    dst = CORPORA / "stdlib"
    if not dst.is_dir():
        src = Path(sysconfig.get_paths()["stdlib"])
        log(f"copying the standard library from {src}")
        _copy_tree(src, dst, TEST_DIRS | {"site-packages"})
    return dst


def prepare_llama(log) -> Path:
    dst = CORPORA / "llama_index_core"
    if not dst.is_dir():
        log(f"copying llama_index.core from {_llama_dir()}")
        _copy_tree(_llama_dir(), dst, set())
    return dst


def _rename(source: str, copy: int) -> str:
    """Rename the file's own top-level names (``def``/``class``/assignments at column 0).

    Dunder names, ``main`` and attribute uses (``x.name``) are left alone, so a copy keeps
    its meaning (and its findings) while its bytes, and most identifiers, differ.
    """
    import keyword

    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    defined: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME or tok.start[1] != 0:
            continue
        if tok.string in ("def", "class") and i + 1 < len(tokens):
            defined.add(tokens[i + 1].string)
        elif tok.string == "async" and i + 2 < len(tokens) and tokens[i + 1].string == "def":
            defined.add(tokens[i + 2].string)
        elif not keyword.iskeyword(tok.string) and i + 1 < len(tokens) and tokens[i + 1].string in ("=", ":"):
            defined.add(tok.string)
    defined = {n for n in defined if not (n.startswith("__") or n == "main" or keyword.iskeyword(n))}
    lines = source.splitlines(keepends=True)
    edits: dict[int, list[tuple[int, int, str]]] = {}
    prev = None
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.string in defined and not (prev is not None and prev.string == "."):
            row, col = tok.start
            edits.setdefault(row, []).append((col, tok.end[1], f"{tok.string}_c{copy}"))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            prev = tok
    for row, items in edits.items():
        line = lines[row - 1]
        for start, end, new in sorted(items, reverse=True):
            line = line[:start] + new + line[end:]
        lines[row - 1] = line
    return f"# bench copy {copy}\n" + "".join(lines)


def prepare_agents(log) -> Path:
    dst = CORPORA / "agents"
    marker = dst / ".complete"
    if marker.exists():
        return dst
    sources = sorted(
        [p for p in (ROOT / "rules").glob("*/*.py") if p.name in ("bad.py", "good.py")]
        + sorted((ROOT / "tests" / "corpus").rglob("*.py"))
    )
    log(f"generating {AGENT_FILES} agent files from {len(sources)} sources")
    texts = []
    for p in sources:
        text = p.read_text(encoding="utf-8")
        if _parses(text.encode()):
            stem = f"{p.parent.name}_{p.stem}" if p.parent.parent.name == "rules" else p.stem
            texts.append((stem, text))
    tmp = dst.with_name("agents.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for i in range(AGENT_FILES):
        copy, index = divmod(i, len(texts))
        stem, text = texts[index]
        out = _rename(text, copy)
        if not _parses(out.encode()):  # a rename that breaks the file: keep the original text
            out = f"# bench copy {copy}\n" + text
        target = tmp / f"c{copy:03d}" / f"{re.sub(r'[^A-Za-z0-9_]', '_', stem)}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(out, encoding="utf-8")
    (tmp / ".complete").write_text("", encoding="utf-8")
    shutil.rmtree(dst, ignore_errors=True)
    tmp.rename(dst)
    return dst


def prepare_fixit_files(key: str, corpus: Path, files: list[Path], whole: bool) -> Path:
    """The files fixit lints, in a directory of their own: the whole corpus in a full run (as
    issue 6 asks), a fixed part of it with ``--quick`` (fixit takes ≈ 0.1–0.2 s per file).

    The part: (b) the first copy of every source file (``c000``); (c) every fourth file. The
    dupguard runs the fixit ratio compares with lint the same directory. Why the whole corpus
    in the verdict: on 110 files dupguard's start-up (``import libcst``, ≈ 0.4 s) is a third
    of its time, a cost that does not grow with the number of files.
    """
    dst = CORPORA / f"fixit-{key}"
    if whole:
        chosen = files
    elif key == "b":
        chosen = [p for p in files if p.relative_to(corpus).parts[0] == "c000"]
    else:
        chosen = files[::4]
    # one level down: fixit puts its project root on sys.path, and llama_index.core has
    # top-level packages named like the standard library's (selectors/, types.py...)
    nest = Path("llama_index_core") if key == "c" else Path()
    want = {nest / p.relative_to(corpus) for p in chosen}
    have = {p.relative_to(dst) for p in corpus_files(dst)} if dst.is_dir() else set()
    if want != have:
        shutil.rmtree(dst, ignore_errors=True)
        for rel in want:
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(corpus / rel.relative_to(nest), dst / rel)
    return dst


def corpus_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if p.is_file())


def relevant_count(files: list[Path]) -> int:
    """Files that pass dupguard's prefilter, i.e. that it will parse."""
    from dupguard.config import Settings
    from dupguard.pipeline import decode, extra_modules
    from dupguard.prefilter import might_matter
    from dupguard.suppression import file_is_exempt

    extra = extra_modules(Settings())
    n = 0
    for p in files:
        try:
            text, _ = decode(p.read_bytes())
        except ValueError:
            continue
        if not file_is_exempt(text) and might_matter(text, extra):
            n += 1
    return n


# --------------------------------------------------------------------------- running tools


@dataclass
class Sample:
    wall: float
    cpu: float
    maxrss_kb: int
    rc: int


@dataclass
class Measure:
    name: str
    corpus: str
    argv: list[str]
    cwd: Path
    env: dict[str, str] | None = None
    before: list[str] | None = None  # a command run (untimed) before each sample
    group_with_previous: bool = False  # always run right after the measure before it
    keep_output: bool = False  # count stdout lines (findings) of the last sample
    output_lines: int | None = None
    samples: list[Sample] = field(default_factory=list)
    note: str = ""

    def stats(self, attr: str = "wall") -> tuple[float, float, float]:
        values = [getattr(s, attr) for s in self.samples]
        return statistics.median(values), min(values), max(values)


def tool_env(**extra: str) -> dict[str, str]:
    """The environment every tool runs in: bytecode caching on, as after ``pip install``.

    (Some shells here export PYTHONDONTWRITEBYTECODE=1; an editable checkout then recompiles
    all of dupguard's modules on every start, which no installed user ever pays.)
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env.update(extra)
    return env


def run_once(argv: list[str], cwd: Path, env: dict[str, str] | None = None, stdout=None) -> Sample:
    if env is None:
        env = tool_env()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=stdout or subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode)


def capture(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env or tool_env(), capture_output=True, text=True)


# --------------------------------------------------------------------------- the benchmark


def machine() -> dict[str, str]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))  # type: ignore[union-attr]
        ram = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, AttributeError):
        pass
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "ram": ram,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def tool_versions(dupguard_python: str) -> dict[str, str]:
    vpy = VENV / "bin" / "python"
    ruff = capture([str(VENV / "bin" / "ruff"), "--version"], ROOT).stdout.strip()
    return {
        "dupguard": _version("dupguard"),
        "libcst (dupguard's)": _version("libcst"),
        "flake8 (project venv, with DUP)": _version("flake8"),
        "pyflakes / pycodestyle (project venv)": f"{_version('pyflakes')} / {_version('pycodestyle')}",
        "flake8 (bench venv, no DUP)": _version("flake8", vpy),
        "pyflakes / pycodestyle (bench venv)": f"{_version('pyflakes', vpy)} / {_version('pycodestyle', vpy)}",
        "ruff": ruff.replace("ruff ", ""),
        "fixit": _version("fixit", vpy),
        "libcst (fixit's)": _version("libcst", vpy),
        "llama-index-core (corpus c)": _version("llama-index-core", vpy),
    }


def build_measures(
    corpora: dict[str, Path],
    fixit_dirs: dict[str, Path],
    scratch: Path,
    listfiles: dict[str, Path],
    quick: bool = False,
) -> list[Measure]:
    # -P: the corpora hold modules named like the standard library's (types.py, os.py...);
    # with cwd on sys.path, `python -m` would import those instead
    py = sys.executable
    # --no-respect-gitignore: the corpora live under bench/.corpora, which the repository's
    # .gitignore lists (ruff runs with it too)
    dg = [py, "-P", "-m", "dupguard", "check", "--isolated", "--no-respect-gitignore", "--exit-zero", "-q"]
    vbin = VENV / "bin"
    loops = str(BENCH / "loops.py")
    out: list[Measure] = []
    for key, path in corpora.items():
        lst = str(listfiles[key])
        m = lambda name, argv, **kw: out.append(Measure(name, key, argv, path, **kw))
        m("dupguard --jobs 1", [*dg, "--no-cache", "--jobs", "1", "."], keep_output=True)
        m("dupguard (all cores)", [*dg, "--no-cache", "."])
        m(
            "ruff ASYNC,B",
            [
                str(vbin / "ruff"),
                "check",
                "--no-cache",
                "--isolated",
                "--no-respect-gitignore",
                "--select",
                "ASYNC,B",
                "--exit-zero",
                "--quiet",
                ".",
            ],
        )
        if not (quick and key == "c"):  # --quick: flake8 only where a target needs it (a, b)
            m(
                "flake8 E9",
                [str(vbin / "python"), "-P", "-m", "flake8", "--isolated", "--select", "E9", "--exit-zero", "."],
            )
            m("flake8 E9,DUP", [py, "-P", "-m", "flake8", "--isolated", "--select", "E9,DUP", "--exit-zero", "."])
        if key in fixit_dirs:
            sub = fixit_dirs[key]
            out.append(Measure("fixit lint", key, [str(vbin / "fixit"), "lint", "."], sub))
            out.append(Measure("dupguard --jobs 1 (fixit's files)", key, [*dg, "--no-cache", "--jobs", "1", "."], sub))
            # context for the fixit ratio: fixit uses every core, and no LibCST linter beats parsing
            out.append(Measure("dupguard (all cores) (fixit's files)", key, [*dg, "--no-cache", "."], sub))
            out.append(
                Measure(
                    "libcst parse loop (fixit's files)",
                    key,
                    [py, loops, "cst-parse", str(listfiles[f"fixit-{key}"])],
                    sub,
                )
            )
        if key != "a":
            m("libcst parse loop", [py, loops, "cst-parse", lst])
            m("libcst parse + empty visitor", [py, loops, "cst-visit", lst])
        m("ast.parse loop", [py, loops, "ast-parse", lst])
        if key == "b":
            cache = scratch / "cache-b"
            cached = [*dg, "--cache-dir", str(cache), "."]
            m("dupguard cold cache (all cores)", cached, before=["rm", "-rf", str(cache)])
            # runs right after the cold run (same group), which leaves the cache full
            m("dupguard warm cache (all cores)", cached, group_with_previous=True)
    one = corpora["a"] / "colorsys.py" if "a" in corpora else Path("/nonexistent")
    dgexe = str(Path(py).parent / "dupguard")  # the console script, as pre-commit runs it
    if one.exists():
        # the pre-commit case: one irrelevant file, from the project root with its config
        out.append(
            Measure(
                "one irrelevant file (no cache)",
                "1",
                [dgexe, "check", "--force-exclude", "--no-respect-gitignore", "--no-cache", str(one)],
                ROOT,
            )
        )
        out.append(
            Measure(
                "one irrelevant file (warm cache)",
                "1",
                [
                    dgexe,
                    "check",
                    "--force-exclude",
                    "--no-respect-gitignore",
                    "--cache-dir",
                    str(scratch / "cache-1"),
                    str(one),
                ],
                ROOT,
            )
        )
        out.append(
            Measure(
                "ruff, one file",
                "1",
                [str(vbin / "ruff"), "check", "--no-cache", "--isolated", "--select", "ASYNC,B", str(one)],
                ROOT,
            )
        )
        out.append(Measure("python -c pass (interpreter floor)", "1", [py, "-c", "pass"], ROOT))
    return out


def check_counts(corpora: dict[str, Path], counts: dict[str, int], log) -> dict[str, dict[str, int]]:
    """Make sure every tool lints the same files before timing anything."""
    seen: dict[str, dict[str, int]] = {}
    for key, path in corpora.items():
        ruff = capture(
            [str(VENV / "bin" / "ruff"), "check", "--isolated", "--no-respect-gitignore", "--show-files", "."], path
        )
        n_ruff = sum(1 for line in ruff.stdout.splitlines() if line.strip().endswith(".py"))
        n_dg = _dg_count(path)
        seen[key] = {"files": counts[key], "ruff": n_ruff, "dupguard": n_dg}
        if len({counts[key], n_ruff, n_dg}) != 1:
            log(f"WARNING: corpus {key}: files={counts[key]} ruff sees {n_ruff}, dupguard sees {n_dg}")
    return seen


def _dg_count(path: Path) -> int:
    code = (
        "import sys; from dupguard.config import Settings; from dupguard.discovery import discover;"
        "print(len(discover(['.'], Settings(respect_gitignore=False)).files))"
    )
    return int(capture([sys.executable, "-P", "-c", code], path).stdout.strip() or -1)


def libcst_imported(argv: list[str], cwd: Path) -> bool:
    proc = capture(argv, cwd, tool_env(PYTHONPROFILEIMPORTTIME="1"))
    return bool(re.search(r"\|\s*libcst$", proc.stderr, re.MULTILINE))


def fmt(v: float) -> str:
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="2 repetitions instead of 5, no flake8 on corpus c, fixit on a subset of b and c",
    )
    ap.add_argument("--reps", type=int, help="repetitions per measurement (default 5, --quick 2)")
    ap.add_argument("--corpora", default="a,b,c", help="which corpora (a=stdlib, b=agents, c=llama_index.core)")
    ap.add_argument("--only", help="regex: run only measurements whose name matches")
    ap.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    ap.add_argument("--label", default="", help="a label for this run in RESULTS.md (e.g. 'before: ...')")
    args = ap.parse_args(argv)
    reps = args.reps or (2 if args.quick else 5)
    t0 = time.perf_counter()
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.1f}s] {msg}", file=sys.stderr, flush=True)

    try:
        import dupguard
    except ImportError:
        print(
            "run this with the Python where dupguard is installed (e.g. .venv/bin/python bench/run.py)", file=sys.stderr
        )
        return 2
    CORPORA.mkdir(parents=True, exist_ok=True)
    prepare_venv(log)
    # byte-compile dupguard once, as pip does on install (see tool_env)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(dupguard.__file__).parent)],
        env=tool_env(),
        stdout=subprocess.DEVNULL,
    )
    wanted = set(args.corpora.split(","))
    builders = {"a": prepare_stdlib, "b": prepare_agents, "c": prepare_llama}
    corpora = {k: builders[k](log) for k in ("a", "b", "c") if k in wanted}
    for path in corpora.values():
        # a project root for fixit (trailrunner stops at the first pyproject.toml and would
        # otherwise apply this repository's .gitignore, which hides bench/.corpora); the
        # other tools run with --isolated and ignore it
        (path / "pyproject.toml").write_text("[tool.fixit]\nroot = true\n", encoding="utf-8")
    files = {k: corpus_files(p) for k, p in corpora.items()}
    counts = {k: len(v) for k, v in files.items()}
    relevant = {k: relevant_count(v) for k, v in files.items()}
    sizes = {k: sum(p.stat().st_size for p in v) for k, v in files.items()}
    listfiles = {}
    for k, v in files.items():
        listfiles[k] = CORPORA / f"files-{k}.txt"
        listfiles[k].write_text("".join(f"{p}\n" for p in v), encoding="utf-8")
    fixit_dirs = {
        k: prepare_fixit_files(k, corpora[k], files[k], whole=not args.quick) for k in ("b", "c") if k in corpora
    }
    for k, path in fixit_dirs.items():
        (path / "pyproject.toml").write_text("[tool.fixit]\nroot = true\n", encoding="utf-8")
        listfiles[f"fixit-{k}"] = CORPORA / f"files-fixit-{k}.txt"
        listfiles[f"fixit-{k}"].write_text("".join(f"{p}\n" for p in corpus_files(path)), encoding="utf-8")
    seen = check_counts(corpora, counts, log)
    for k in corpora:
        log(f"corpus {k}: {counts[k]} files, {sizes[k] / 1e6:.1f} MB, {relevant[k]} pass the prefilter; {seen[k]}")

    scratch = Path(tempfile.mkdtemp(prefix="dupguard-bench-"))
    measures = build_measures(corpora, fixit_dirs, scratch, listfiles, quick=args.quick)
    if args.only:
        measures = [m for m in measures if re.search(args.only, m.name)]
    groups: list[list[Measure]] = []
    for m in measures:
        if m.group_with_previous and groups:
            groups[-1].append(m)
        else:
            groups.append([m])
    for rep in range(reps):
        # rotate, and reverse every other repetition, so no tool always follows the same one
        shift = rep % len(groups)
        order = groups[shift:] + groups[:shift]
        if rep % 2:
            order.reverse()
        for group in order:
            for m in group:
                if m.before:
                    subprocess.run(m.before, cwd=m.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if m.keep_output:
                    with tempfile.TemporaryFile() as out:
                        m.samples.append(run_once(m.argv, m.cwd, m.env, stdout=out))
                        out.seek(0)
                        m.output_lines = out.read().count(b"\n")
                else:
                    m.samples.append(run_once(m.argv, m.cwd, m.env))
        log(f"repetition {rep + 1}/{reps} done")

    # untimed facts: does libcst get imported, do the tools agree on the findings count
    facts: dict[str, object] = {}
    if "a" in corpora:
        facts["libcst imported on corpus a"] = libcst_imported(
            [
                sys.executable,
                "-P",
                "-m",
                "dupguard",
                "check",
                "--isolated",
                "--no-respect-gitignore",
                "--no-cache",
                "--exit-zero",
                "-q",
                ".",
            ],
            corpora["a"],
        )
        one = corpora["a"] / "colorsys.py"
        facts["libcst imported for one irrelevant file"] = libcst_imported(
            [
                str(Path(sys.executable).parent / "dupguard"),
                "check",
                "--force-exclude",
                "--no-respect-gitignore",
                "--no-cache",
                str(one),
            ],
            ROOT,
        )
    for m in measures:
        if m.keep_output and m.output_lines is not None:
            facts[f"dupguard findings on corpus {m.corpus}"] = m.output_lines
    shutil.rmtree(scratch, ignore_errors=True)

    data = {
        "label": args.label,
        "reps": reps,
        "machine": dict(machine(), loadavg_start=load_start),
        "versions": tool_versions(sys.executable),
        "corpora": {
            k: {
                "path": str(corpora[k].relative_to(ROOT)),
                "files": counts[k],
                "bytes": sizes[k],
                "relevant": relevant[k],
                "seen": seen[k],
            }
            for k in corpora
        },
        "fixit_files": {
            k: {"path": str(p.relative_to(ROOT)), "files": len(corpus_files(p)), "whole": not args.quick}
            for k, p in fixit_dirs.items()
        },
        "facts": facts,
        "measures": [
            {"name": m.name, "corpus": m.corpus, "argv": m.argv, "samples": [s.__dict__ for s in m.samples]}
            for m in measures
        ],
        "loadavg_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "seconds": time.perf_counter() - t0,
    }
    (CORPORA / "last-run.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    report = render(data, measures)
    print(report)
    if not args.no_write and not args.only and wanted == {"a", "b", "c"}:
        write_results(report)
    log("done")
    return 0


# --------------------------------------------------------------------------- report


def render(data: dict, measures: list[Measure]) -> str:
    by = {(m.corpus, m.name): m for m in measures}
    names = {"a": "stdlib", "b": "agents", "c": "llama_index.core", "1": "single file"}

    def med(corpus: str, name: str, attr: str = "wall") -> float | None:
        m = by.get((corpus, name))
        return m.stats(attr)[0] if m and m.samples else None

    lines = [BEGIN, ""]
    mc = data["machine"]
    lines.append(
        f"Run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        + (f" — {data['label']}" if data["label"] else "")
        + f"; {data['reps']} repetitions; whole run {data['seconds']:.0f} s."
    )
    lines.append(
        f"Machine: {mc['cpu']}, {mc['cores']} cores, {mc['ram']} RAM, {mc['os']}, Python {mc['python']}; "
        f"load average at start {mc['loadavg_start']}, at end {data['loadavg_end']} "
        "(other engineers' test suites share this machine)."
    )
    lines.append("")
    lines.append("Versions: " + "; ".join(f"{k} {v}" for k, v in data["versions"].items()) + ".")
    lines.append("")
    lines.append("| corpus | files | MB | pass the prefilter | ruff / dupguard see |")
    lines.append("|---|---|---|---|---|")
    for k, c in data["corpora"].items():
        lines.append(
            f"| {k}: {names[k]} (`{c['path']}`) | {c['files']} | {c['bytes'] / 1e6:.1f} | {c['relevant']} | "
            f"{c['seen']['ruff']} / {c['seen']['dupguard']} |"
        )
    for k, sub in data["fixit_files"].items():
        lines.append(
            f"fixit's files in {k}: `{sub['path']}`, {sub['files']} files "
            f"({'the whole corpus' if sub['whole'] else 'a fixed subset (--quick)'}, copied; the dupguard runs "
            "fixit is compared with lint the same copy)."
        )
    lines.append("")
    lines.append(
        "Wall seconds (median, min–max) and CPU seconds (median, user+sys of the whole process tree), "
        "peak RSS of the largest process in the tree (MB, max over samples):"
    )
    lines.append("")
    lines.append("| corpus | measurement | wall median | wall min–max | CPU median | peak RSS MB |")
    lines.append("|---|---|---|---|---|---|")
    for m in measures:
        if not m.samples:
            continue
        w, lo, hi = m.stats()
        c = m.stats("cpu")[0]
        rss = max(s.maxrss_kb for s in m.samples) / 1024
        lines.append(f"| {m.corpus} | {m.name} | {fmt(w)} | {fmt(lo)}–{fmt(hi)} | {fmt(c)} | {rss:.0f} |")
    lines.append("")
    facts = data["facts"]
    lines.append("Facts: " + "; ".join(f"{k}: {v}" for k, v in facts.items()) + ".")
    lines.append("")

    rows: list[tuple[str, str, str, bool | None]] = []

    def ratio(label: str, target: str, value: float | None, ok) -> None:
        if value is None:
            rows.append((label, target, "n/a", None))
        else:
            rows.append((label, target, f"{value:.3g}", bool(ok(value))))

    def div(a, b):
        return None if a is None or b is None or b == 0 else a / b

    ratio(
        "1. (a) dupguard (all cores) / ruff, wall",
        "≤ 2",
        div(med("a", "dupguard (all cores)"), med("a", "ruff ASYNC,B")),
        lambda v: v <= 2,
    )
    rows.append(
        (
            "1. (a) libcst imported",
            "never",
            str(facts.get("libcst imported on corpus a")),
            facts.get("libcst imported on corpus a") is False,
        )
    )
    for k in ("b", "c"):
        ratio(
            f"2. ({k}) dupguard --jobs 1 / (libcst parse + empty visitor), wall",
            "≤ 1.3",
            div(med(k, "dupguard --jobs 1"), med(k, "libcst parse + empty visitor")),
            lambda v: v <= 1.3,
        )
        sub = data["fixit_files"].get(k, {})
        ratio(
            f"2. ({k}) fixit lint / dupguard --jobs 1, wall, on fixit's {sub.get('files', '?')} files",
            "≥ 10",
            div(med(k, "fixit lint"), med(k, "dupguard --jobs 1 (fixit's files)")),
            lambda v: v >= 10,
        )
    ratio(
        "3. (b) dupguard --jobs 1 / --jobs 2 (all cores), wall",
        "≥ 1.7",
        div(med("b", "dupguard --jobs 1"), med("b", "dupguard (all cores)")),
        lambda v: v >= 1.7,
    )
    ratio(
        "4. (b) warm cache / cold cache, wall",
        "≤ 0.05",
        div(med("b", "dupguard warm cache (all cores)"), med("b", "dupguard cold cache (all cores)")),
        lambda v: v <= 0.05,
    )
    fa, fad = med("a", "flake8 E9"), med("a", "flake8 E9,DUP")
    ratio(
        "5. (a) flake8 E9,DUP / flake8 E9 − 1, wall",
        "≤ 0.10",
        None if fa is None or fad is None else fad / fa - 1,
        lambda v: v <= 0.10,
    )
    fb, fbd, dgb = med("b", "flake8 E9"), med("b", "flake8 E9,DUP"), med("b", "dupguard (all cores)")
    ratio(
        "5. (b) (flake8 E9,DUP − flake8 E9) / dupguard (all cores), per relevant file",
        "≤ 1.5",
        None if None in (fb, fbd, dgb) else (fbd - fb) / dgb,
        lambda v: v <= 1.5,
    )  # type: ignore[operator]
    one = med("1", "one irrelevant file (no cache)")
    rows.append(
        (
            "6. one irrelevant file, wall (no cache)",
            "≤ 80 ms",
            "n/a" if one is None else f"{one * 1000:.0f} ms",
            None if one is None else one <= 0.080,
        )
    )
    rows.append(
        (
            "6. one irrelevant file, libcst imported",
            "no",
            str(facts.get("libcst imported for one irrelevant file")),
            facts.get("libcst imported for one irrelevant file") is False,
        )
    )
    rss = [
        s.maxrss_kb / 1024
        for name in ("dupguard --jobs 1", "dupguard (all cores)")
        for s in (by[("b", name)].samples if ("b", name) in by else [])
    ]
    rows.append(
        (
            "7. (b) peak RSS per process",
            "≤ 200 MB",
            f"{max(rss):.0f} MB" if rss else "n/a",
            max(rss) <= 200 if rss else None,
        )
    )
    lines.append("| target | bound | measured | |")
    lines.append("|---|---|---|---|")
    for label, bound, value, ok in rows:
        lines.append(f"| {label} | {bound} | {value} | {'PASS' if ok else ('n/a' if ok is None else 'FAIL')} |")
    cpu_rows = []
    for k in ("b", "c"):
        r = div(med(k, "dupguard --jobs 1", "cpu"), med(k, "libcst parse + empty visitor", "cpu"))
        if r is not None:
            cpu_rows.append(f"({k}) dupguard --jobs 1 / parse+visit = {r:.3g}")
        r = div(med(k, "fixit lint", "cpu"), med(k, "dupguard --jobs 1 (fixit's files)", "cpu"))
        if r is not None:
            cpu_rows.append(f"({k}) fixit / dupguard --jobs 1 = {r:.3g}")
        r = div(med(k, "fixit lint"), med(k, "dupguard (all cores) (fixit's files)"))
        if r is not None:
            cpu_rows.append(f"({k}) wall, both tools on every core: fixit / dupguard = {r:.3g}")
        r = div(med(k, "fixit lint"), med(k, "libcst parse loop (fixit's files)"))
        if r is not None:
            cpu_rows.append(f"({k}) wall, fixit / a bare libcst.parse_module loop on fixit's files = {r:.3g}")
    r = div(med("a", "dupguard (all cores)", "cpu"), med("a", "ruff ASYNC,B", "cpu"))
    if r is not None:
        cpu_rows.append(f"(a) dupguard / ruff = {r:.3g}")
    if cpu_rows:
        lines.append("")
        lines.append(
            "The same ratios on CPU seconds (less sensitive to the machine's load), and context for the "
            "fixit ratio (wall): " + "; ".join(cpu_rows) + "."
        )
    lines.append("")
    lines.append(END)
    return "\n".join(lines)


def write_results(block: str) -> None:
    text = (
        RESULTS.read_text(encoding="utf-8")
        if RESULTS.exists()
        else "# Benchmark results\n\n" + BEGIN + "\n" + END + "\n"
    )
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        text = head + block + tail
    else:
        text += "\n" + block + "\n"
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
