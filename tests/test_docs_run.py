"""Every fenced code block in README.md and docs/*.md runs or validates (issue 17, item 7).

A block is checked by the first word of its info string (the language) and the words after it
(a mode and ``key=value`` attributes). The conventions, for anyone writing docs:

``python``            a complete program, run alone in a fresh interpreter (cwd: an empty temp
                      dir; ``tests/docs_support`` on ``PYTHONPATH`` for the ``myapp`` stand-ins;
                      fake provider keys; no network); it must exit 0. ``python runnable`` is
                      a synonym. ``expect=CODES`` (optional) also lints it as below.
``python lint expect=DUP101,DUP102`` (or ``expect=none``)
                      code that cannot run alone (a served app, a worker): compiled; every
                      import must resolve in the installed framework versions, and the
                      attributes and keyword arguments used on imported names (and on objects
                      built from imported classes) must exist there; ``dupguard`` must report
                      exactly the codes in ``expect``. Imports from ``myapp`` (the reader's
                      application) are not resolved here; ``unpinned=a,b.c`` names frameworks
                      dupguard does not pin, whose imports are not resolved where they are not
                      installed.
``toml``              a complete dupguard configuration: as ``pyproject.toml`` when it has a
                      ``[tool.dupguard]`` table, else as ``dupguard.toml``, in an empty project
                      with an empty ``probe.py``; ``dupguard check --no-cache probe.py`` run in
                      that directory must exit 0. ``path=REL`` writes it at REL in one project
                      shared by every ``path=`` block of the page (monorepos, ``extend``); a
                      file that is neither ``pyproject.toml`` nor ``dupguard.toml`` is parsed
                      only (and its dupguard commands checked).
``sh`` ``console`` ``shell`` ``bash``
                      every command is checked, not run: dupguard's own CLI parser for
                      ``dupguard …``/``python -m dupguard …``, pip installs may only name
                      dupguard, its declared extras, dupguard-runtime or the block's
                      ``allow=a,b``; other programs must be in :data:`PROGRAMS`.
``yaml``              ``yaml.safe_load``; pre-commit configs may only use the hook ids of
                      ``.pre-commit-hooks.yaml``; GitHub workflows need ``on``, ``runs-on`` and
                      ``steps`` and may only pass the inputs ``action.yml`` declares; GitLab
                      jobs need ``script``. Commands naming dupguard are parsed.
``json`` ``jsonc``    parsed (jsonc: comments and trailing commas removed first); commands parsed.
``lua``               brackets balance outside strings and comments; ``{ "dupguard", … }``
                      commands parsed.
``text``              output and listings; lines that start with ``$ `` are commands, checked.
``sql``               must equal the DDL the runtime executes (``schema_sql()``).

Anything else (a block without a language, an unknown mode or attribute) fails: no block is
skipped. The rule pages (docs/rules/) are generated from rules/ and tested by test_rules.py.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from linthelpers import ROOT

SUPPORT = ROOT / "tests" / "docs_support"
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
OPEN_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")

#: programs a shell block may use besides dupguard, python and pip (checked only by name)
PROGRAMS = frozenset(
    {
        "apt-get",
        "cd",
        "celery",
        "code",
        "curl",
        "docker",
        "export",
        "flake8",
        "git",
        "hx",
        "nvim",
        "pre-commit",
        "pytest",
        "source",
        "uvicorn",
        ".",
    }
)
PYTHONS = frozenset({"python", "python3"})
SHELL_LANGS = frozenset({"sh", "console", "shell", "bash"})
ATTRIBUTES = {"python": {"expect", "unpinned"}, "toml": {"path"}, **{lang: {"allow"} for lang in SHELL_LANGS}}
MODES = {"python": {"", "runnable", "lint"}}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence
    lang: str
    mode: str
    attrs: dict[str, str] = field(hash=False)
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def parse_blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file (CommonMark fences: ``` or ~~~, up to three
    spaces of indentation, closed by a fence of the same kind at least as long)."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = OPEN_FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, indent = match["fence"], len(match["indent"])
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            line = lines[j]
            body.append(line[indent:] if not line[:indent].strip() else line.lstrip())
            j += 1
        words = match["info"].split()
        lang = words[0].lower() if words else ""
        attrs = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        modes = [w for w in words[1:] if "=" not in w]
        blocks.append(Block(path, i + 1, lang, " ".join(modes), attrs, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for path in DOC_FILES for block in parse_blocks(path)]


BLOCKS = all_blocks()


def test_the_docs_have_blocks_of_every_kind_we_check() -> None:
    """The parser finds the README's blocks (a parser that found none would pass everything)."""
    readme = {b.lang for b in BLOCKS if b.path.name == "README.md"}
    assert {"python", "toml", "sh", "yaml"} <= readme, readme
    assert len(BLOCKS) >= 40


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_block(block: Block, tmp_path: Path) -> None:
    checker = CHECKERS.get(block.lang)
    assert checker is not None, (
        f"{block.where}: a ```{block.lang or '(no language)'} block is not covered by any check: "
        f"use one of {', '.join(sorted(c for c in CHECKERS if c))} (tests/test_docs_run.py)"
    )
    lang_key = "python" if block.lang == "python" else block.lang
    assert block.mode in MODES.get(lang_key, {""}), f"{block.where}: unknown mode {block.mode!r} for {block.lang}"
    unknown = set(block.attrs) - ATTRIBUTES.get(lang_key, set())
    assert not unknown, f"{block.where}: unknown attribute(s) {sorted(unknown)} for {block.lang}"
    checker(block, tmp_path)


# ------------------------------------------------------------------------------------- python


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SUPPORT), str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    # no real provider: fake keys, and a base URL nothing listens on (a block that reaches for a
    # real model fails at once instead of waiting on the network)
    env.update(
        OPENAI_API_KEY="sk-docs-fake",
        ANTHROPIC_API_KEY="sk-ant-docs-fake",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        OPENAI_AGENTS_DISABLE_TRACING="1",  # the Agents SDK would export traces to OpenAI
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("DUPGUARD_DEBUG", None)
    return env


def check_python(block: Block, tmp_path: Path) -> None:
    try:
        compile(block.code, block.where, "exec")
    except SyntaxError as exc:
        pytest.fail(f"{block.where}: not valid Python: {exc}")
    if block.mode == "lint":
        assert "expect" in block.attrs, f"{block.where}: a `python lint` block needs expect=CODES or expect=none"
        undefined = undefined_names(ast.parse(block.code))
        assert not undefined, (
            f"{block.where}: not a complete module: {', '.join(sorted(undefined))} used but never imported or defined"
        )
        check_api(block)
    else:
        run_python(block, tmp_path)
    if "expect" in block.attrs:
        check_findings(block, tmp_path)


def undefined_names(tree: ast.AST) -> set[str]:
    """Names read somewhere in the module and bound nowhere in it (nor builtins): what a
    fragment copied out of a larger file lacks. Scopes are not told apart, which can only hide
    a missing name, never report a defined one."""
    import builtins

    bound = set(dir(builtins)) | {"__file__", "__name__"}
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
    return loaded - bound


def run_python(block: Block, tmp_path: Path) -> None:
    script = tmp_path / f"{block.path.stem}_{block.line}.py"
    # line numbers in tracebacks are the page's
    script.write_text("\n" * block.line + block.code, encoding="utf-8")
    work = tmp_path / "cwd"
    work.mkdir()
    result = subprocess.run(
        [sys.executable, str(script)], cwd=work, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, (
        f"{block.where}: the block exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    )


def check_findings(block: Block, tmp_path: Path) -> None:
    from dupguard.config import Settings
    from dupguard.pipeline import lint_text

    expected = set() if block.attrs["expect"] == "none" else set(block.attrs["expect"].split(","))
    settings = Settings(root=str(tmp_path))
    found = lint_text(str(tmp_path / "app.py"), block.code, settings, settings.enabled_codes())
    codes = {d.code for d in found}
    assert codes == expected, (
        f"{block.where}: dupguard reports {sorted(codes) or 'nothing'}, the page says "
        f"expect={block.attrs['expect']}:\n" + "\n".join(f"  line {d.row}: {d.code} {d.message}" for d in found)
    )


# -- lint blocks: the framework API they use exists in the installed versions --------------


def _assigned_names(tree: ast.AST) -> dict[str, int]:
    """How many times each name is bound anywhere in the module (targets, parameters, imports,
    defs): a name bound more than once is not trusted for inference."""
    counts: dict[str, int] = {}

    def bump(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bump(node.id)
        elif isinstance(node, ast.arg):
            bump(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bump(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bump((alias.asname or alias.name).split(".")[0])
    return counts


def _distribution(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    top = str(module).split(".")[0]
    try:
        from importlib.metadata import packages_distributions, version

        dists = packages_distributions().get(top, [])
        return ", ".join(f"{d} {version(d)}" for d in dists) or top
    except Exception:
        return top


def _skipped(module: str, unpinned: set[str]) -> bool:
    """The reader's own application, or a framework the page marks as not pinned by dupguard
    that is not installed here."""
    if module == "myapp" or module.startswith("myapp."):
        return True
    for name in unpinned:
        if module == name or module.startswith(name + "."):
            try:
                return importlib.util.find_spec(name) is None
            except (ImportError, ValueError):  # a parent package is missing
                return True
    return False


def _resolve_imports(tree: ast.Module, where: str, unpinned: set[str]) -> dict[str, Any]:
    bound: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _skipped(alias.name, unpinned):
                    continue
                try:
                    module = importlib.import_module(alias.name)
                except ImportError as exc:
                    pytest.fail(f"{where}: line {node.lineno}: `import {alias.name}` fails here: {exc}")
                if alias.asname:
                    bound[alias.asname] = module
                else:
                    bound[alias.name.split(".")[0]] = importlib.import_module(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module is None or node.module == "__future__" or _skipped(node.module, unpinned):
                continue
            try:
                module = importlib.import_module(node.module)
            except ImportError as exc:
                pytest.fail(f"{where}: line {node.lineno}: `from {node.module} import …` fails here: {exc}")
            for alias in node.names:
                if alias.name == "*":
                    continue
                if hasattr(module, alias.name):
                    value = getattr(module, alias.name)
                else:
                    try:
                        value = importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        pytest.fail(
                            f"{where}: line {node.lineno}: `from {node.module} import {alias.name}`: "
                            f"{node.module} has no {alias.name} in {_distribution(module)}"
                        )
                bound[alias.asname or alias.name] = value
    return bound


def _has_attribute(cls: type, name: str) -> bool:
    """True when instances of ``cls`` can have ``name``: a class attribute, a declared field or
    annotation, or a class that answers any attribute (``__getattr__``)."""
    if hasattr(cls, name) or any(cls_has_dynamic(c) for c in cls.__mro__):
        return True
    fields = getattr(cls, "model_fields", None) or getattr(cls, "__fields__", None) or {}
    if name in fields:
        return True
    return any(name in getattr(c, "__annotations__", {}) for c in cls.__mro__)


def cls_has_dynamic(cls: type) -> bool:
    """A class whose instances answer attributes it does not declare. pydantic's ``BaseModel``
    defines ``__getattr__`` only for its private attributes, which are declared."""
    return "__getattr__" in vars(cls) and cls is not object and not cls.__module__.startswith("pydantic")


def _keywords_accepted(func: Any, keywords: list[str]) -> list[str]:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return []
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return [k for k in keywords if k not in names]


def check_api(block: Block) -> None:
    """The names a lint block takes from the installed frameworks exist there: imports,
    ``Imported.attr.attr`` chains, keyword arguments of calls on them, and methods called on an
    object built by ``x = ImportedClass(...)`` (or a parameter/def annotated with one)."""
    tree = ast.parse(block.code)
    unpinned = set(filter(None, block.attrs.get("unpinned", "").split(",")))
    bound = _resolve_imports(tree, block.where, unpinned)
    counts = _assigned_names(tree)
    instances: dict[str, type] = {}

    def resolve(node: ast.AST) -> tuple[bool, Any]:
        """(True, object) for an expression made of imported names and attributes."""
        if isinstance(node, ast.Name):
            if node.id in bound and counts.get(node.id, 0) == 1:
                return True, bound[node.id]
            return False, None
        if isinstance(node, ast.Attribute):
            known, base = resolve(node.value)
            if not known:
                return False, None
            if not hasattr(base, node.attr) and cls_has_dynamic(type(base)):
                return False, None  # a module or class that makes attributes up on access
            if not hasattr(base, node.attr):
                if inspect.ismodule(base):
                    try:
                        return True, importlib.import_module(f"{base.__name__}.{node.attr}")
                    except ImportError:
                        pass
                pytest.fail(
                    f"{block.where}: line {node.lineno}: `{ast.unparse(node)}`: "
                    f"{getattr(base, '__name__', base)!s} has no `{node.attr}` in {_distribution(base)}"
                )
            return True, getattr(base, node.attr)
        return False, None

    def annotation_class(node: ast.AST | None) -> type | None:
        if node is None:
            return None
        known, value = resolve(node)
        return value if known and isinstance(value, type) else None

    # objects of known classes: x = Cls(...), def f(x: Cls), def build() -> Cls; x = build()
    returns: dict[str, type] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cls = annotation_class(node.returns)
            if cls is not None and counts.get(node.name) == 1:
                returns[node.name] = cls
            for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
                cls = annotation_class(arg.annotation)
                if cls is not None and counts.get(arg.arg) == 1:
                    instances[arg.arg] = cls
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            value = node.value.value if isinstance(node.value, ast.Await) else node.value
            if counts.get(name) != 1 or not isinstance(value, ast.Call):
                continue
            if isinstance(value.func, ast.Name) and value.func.id in returns:
                instances[name] = returns[value.func.id]
                continue
            known, cls = resolve(value.func)
            if known and isinstance(cls, type):
                instances[name] = cls

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            resolve(node)
            if isinstance(node.value, ast.Name) and node.value.id in instances:
                cls = instances[node.value.id]
                assert _has_attribute(cls, node.attr), (
                    f"{block.where}: line {node.lineno}: `{ast.unparse(node)}`: `{node.value.id}` is a "
                    f"{cls.__module__}.{cls.__qualname__}, which has no `{node.attr}` in {_distribution(cls)}"
                )
        elif isinstance(node, ast.Call):
            keywords = [k.arg for k in node.keywords if k.arg]
            if not keywords:
                continue
            known, func = resolve(node.func)
            if not known and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                cls = instances.get(node.func.value.id)
                if cls is not None and callable(getattr(cls, node.func.attr, None)):
                    known, func = True, getattr(cls, node.func.attr)
            if known and callable(func):
                bad = _keywords_accepted(func, keywords)
                assert not bad, (
                    f"{block.where}: line {node.lineno}: `{ast.unparse(node.func)}` takes no "
                    f"{', '.join(bad)} in {_distribution(func)}"
                )


# --------------------------------------------------------------------------------------- toml


def _toml(text: str, where: str) -> dict[str, Any]:
    from dupguard.rulemeta import toml_loads

    try:
        return toml_loads(text)
    except ValueError as exc:
        pytest.fail(f"{where}: not valid TOML: {exc}")


def check_toml(block: Block, tmp_path: Path) -> None:
    data = _toml(block.code, block.where)
    check_embedded_commands(data, block.where)
    target = block.attrs.get("path")
    if target is None:
        name = "pyproject.toml" if "dupguard" in data.get("tool", {}) else "dupguard.toml"
        config = tmp_path / name
        config.write_text(block.code, encoding="utf-8")
    else:
        assert not Path(target).is_absolute() and ".." not in Path(target).parts, f"{block.where}: path= {target}"
        for other in parse_blocks(block.path):  # the page's whole project, in page order
            if other.lang == "toml" and "path" in other.attrs:
                (tmp_path / other.attrs["path"]).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / other.attrs["path"]).write_text(other.code, encoding="utf-8")
        config = tmp_path / target
        if config.name not in ("pyproject.toml", "dupguard.toml"):
            return
    probe = config.parent / "probe.py"
    probe.write_text("", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "dupguard", "check", "--no-cache", "probe.py"],
        cwd=config.parent,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (
        f"{block.where}: dupguard does not accept this configuration (exit {result.returncode}):\n"
        f"{result.stderr[-2000:]}{result.stdout[-1000:]}"
    )


# --------------------------------------------------------------------------------- commands


def _pyproject_extras(pyproject: Path = ROOT / "pyproject.toml") -> set[str]:
    data = _toml(pyproject.read_text(encoding="utf-8"), str(pyproject))
    return set(data["project"].get("optional-dependencies", {}))


def check_dupguard_argv(argv: list[str], where: str) -> None:
    """``argv`` (without the program) is a command line dupguard's parser accepts."""
    from dupguard.cli import build_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            args = build_parser().parse_args(argv)
    except SystemExit as exc:
        assert exc.code == 0, f"{where}: `dupguard {shlex.join(argv)}` is rejected: {err.getvalue().strip()}"
        return
    assert args.command is not None, f"{where}: `dupguard {shlex.join(argv)}` names no subcommand"


def check_pip_install(argv: list[str], allow: set[str], where: str) -> None:
    extras = _pyproject_extras()
    requirements = [a for a in argv if not a.startswith("-")]
    assert requirements, f"{where}: `pip install {shlex.join(argv)}` installs nothing"
    for requirement in requirements:
        match = re.fullmatch(r"(?P<name>[A-Za-z0-9_.\-/]+)(\[(?P<extras>[^\]]*)\])?(?P<spec>[<>=!~].*)?", requirement)
        assert match, f"{where}: cannot read the requirement {requirement!r}"
        name, wanted = match["name"], {e.strip() for e in (match["extras"] or "").split(",") if e.strip()}
        assert name in {"dupguard", ".", "dupguard-runtime", "./packaging/dupguard-runtime"} | allow, (
            f"{where}: `pip install {requirement}`: only dupguard, its extras and dupguard-runtime "
            f"(or the block's allow=) may be installed by the docs"
        )
        if name in {"dupguard-runtime", "./packaging/dupguard-runtime"}:
            runtime_extras = _pyproject_extras(ROOT / "packaging" / "dupguard-runtime" / "pyproject.toml")
            assert wanted <= runtime_extras, (
                f"{where}: {requirement}: unknown extra(s) {sorted(wanted - runtime_extras)}"
            )
        if name in {"dupguard", "."}:
            assert wanted <= extras, f"{where}: {requirement}: unknown extra(s) {sorted(wanted - extras)}"


def split_commands(script: str) -> list[list[str]]:
    """Shell text as simple commands (tokens), split at ``&&``, ``||``, ``;``, ``|``, ``&``,
    parentheses and newlines; comments, redirections (``> file``, ``2>&1``) dropped, ``\\``
    continuations joined."""
    commands: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        redirect = False
        for token in lexer:
            if redirect:  # the target of a redirection
                redirect = False
            elif token and set(token) <= set("<>&"):
                if token in ("&", "&&"):
                    commands.append(current)
                    current = []
                else:  # > >> < >& <<: drop the operator, its target, and an fd number before it
                    redirect = True
                    if current and current[-1].isdigit():
                        current.pop()
            elif token and set(token) <= set(";|()"):
                commands.append(current)
                current = []
            else:
                current.append(token)
        commands.append(current)
    return [c for c in commands if c]


def check_command(tokens: list[str], where: str, allow: set[str], *, only_dupguard: bool = False) -> None:
    while tokens and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[0]):  # FOO=bar cmd
        tokens = tokens[1:]
    if not tokens:
        return
    program, args = (tokens[0] if tokens[0] == "." else Path(tokens[0]).name), tokens[1:]
    if re.fullmatch(r"python3?(\.\d+)?", program):  # python3.11 as python
        program = "python"
    if program == "dupguard":
        check_dupguard_argv(args, where)
    elif program in PYTHONS and args[:1] == ["-m"] and len(args) > 1:
        module, rest = args[1], args[2:]
        if module == "dupguard":
            check_dupguard_argv(rest, where)
        elif module == "pip" and rest[:1] == ["install"]:
            check_pip_install(rest[1:], allow, where)
        elif not only_dupguard:
            assert importlib.util.find_spec(module.split(".")[0]) is not None, f"{where}: no module {module}"
    elif program == "pip" and args[:1] == ["install"]:
        check_pip_install(args[1:], allow, where)
    elif only_dupguard:
        return
    else:
        assert program in PROGRAMS | PYTHONS | {"pip"}, (
            f"{where}: `{program}` is not a command the docs may use (tests/test_docs_run.py PROGRAMS)"
        )


def check_shell(block: Block, tmp_path: Path) -> None:
    allow = set(filter(None, block.attrs.get("allow", "").split(",")))
    text = block.code
    if block.lang == "console":
        lines = [line[2:] for line in text.splitlines() if line.startswith("$ ")]
        assert lines, f"{block.where}: a console block shows commands after a `$ ` prompt"
        text = "\n".join(lines)
    commands = split_commands(text)
    assert commands, f"{block.where}: an empty shell block"
    for tokens in commands:
        check_command(tokens, block.where, allow)


def check_text(block: Block, tmp_path: Path) -> None:
    for line in block.code.splitlines():
        if line.startswith("$ "):
            for tokens in split_commands(line[2:]):
                check_command(tokens, block.where, set())


def check_embedded_commands(data: Any, where: str) -> None:
    """dupguard command lines inside a configuration (an editor's ``command``/``cmd`` plus its
    ``args``, ``…Command`` plus ``…Arguments`` keys, a pre-commit ``entry``, a CI ``run``/``script``)
    must parse."""
    if isinstance(data, dict):
        keys = {str(k).lower(): k for k in data}
        commands = [k for low, k in keys.items() if low == "cmd" or low.endswith("command")]
        arguments = [k for low, k in keys.items() if low.endswith(("args", "arguments"))]
        for key in commands:
            command = data[key]
            if isinstance(command, str):
                command = shlex.split(command)
            if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
                continue
            if Path(command[0]).name != "dupguard":
                continue
            extra = next((data[k] for k in arguments if isinstance(data[k], list)), [])
            check_dupguard_argv([*command[1:], *map(str, extra)], where)
        for key, value in data.items():
            if key in ("run", "script", "entry") and isinstance(value, (str, list)):
                lines = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]
                for tokens in (t for line in lines for t in split_commands(line)):
                    check_command(tokens, where, set(), only_dupguard=True)
            else:
                check_embedded_commands(value, where)
    elif isinstance(data, list):
        for item in data:
            check_embedded_commands(item, where)


# --------------------------------------------------------------------------------- yaml, json


def _hooks() -> dict[str, dict]:
    import yaml

    return {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}


GITLAB_RESERVED = {
    "stages",
    "variables",
    "default",
    "include",
    "workflow",
    "image",
    "services",
    "before_script",
    "after_script",
    "cache",
}


def check_yaml(block: Block, tmp_path: Path) -> None:
    import yaml

    try:
        data = yaml.safe_load(block.code)
    except yaml.YAMLError as exc:
        pytest.fail(f"{block.where}: not valid YAML: {exc}")
    assert data is not None, f"{block.where}: an empty YAML block"
    check_embedded_commands(data, block.where)
    if not isinstance(data, dict):
        return
    if "repos" in data:  # .pre-commit-config.yaml
        for repo in data["repos"]:
            assert isinstance(repo, dict) and "repo" in repo and "hooks" in repo, f"{block.where}: {repo!r}"
            if "dupguard" in str(repo["repo"]):
                assert "rev" in repo, f"{block.where}: a remote pre-commit repo needs `rev`"
                hooks = _hooks()
                for hook in repo["hooks"]:
                    assert hook["id"] in hooks, (
                        f"{block.where}: unknown hook id {hook['id']!r} (.pre-commit-hooks.yaml)"
                    )
                    # the command pre-commit runs: the hook's entry, its args (or the user's), then files
                    entry = shlex.split(hooks[hook["id"]]["entry"])
                    args = hook.get("args", hooks[hook["id"]].get("args", []))
                    check_command([*entry, *map(str, args)], block.where, set())
    jobs = data.get("jobs")
    if isinstance(jobs, dict):  # a GitHub workflow; YAML 1.1 reads the key `on` as True
        assert "on" in data or True in data, f"{block.where}: a workflow needs `on:`"
        for name, job in jobs.items():
            if "uses" in job:  # a reusable workflow
                continue
            assert "runs-on" in job and "steps" in job, f"{block.where}: job {name} needs runs-on and steps"
            for step in job["steps"]:
                check_action_step(step, block.where)
    elif any(isinstance(v, dict) and "script" in v for v in data.values()) or "stages" in data:  # GitLab CI
        for name, job in data.items():
            if name in GITLAB_RESERVED or str(name).startswith(".") or not isinstance(job, dict):
                continue
            assert {"script", "extends", "trigger"} & set(job), f"{block.where}: GitLab job {name} needs `script`"


def check_action_step(step: dict, where: str) -> None:
    import yaml

    uses = str(step.get("uses", ""))
    if not (uses.startswith("dupguard/dupguard") or uses in ("./", ".")):
        return
    action = ROOT / "action.yml"
    assert action.is_file(), f"{where}: the step uses dupguard's action, but there is no action.yml"
    try:
        declared = yaml.safe_load(action.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        pytest.fail(f"{where}: the step uses dupguard's action, and action.yml is not valid YAML: {exc}")
    inputs = set(declared.get("inputs") or {})
    given = set(step.get("with") or {})
    assert given <= inputs, f"{where}: action.yml declares no input(s) {sorted(given - inputs)}"


def _strip_jsonc(text: str) -> str:
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.DOTALL)
    return re.sub(r",(\s*[}\]])", r"\1", text)


def check_json(block: Block, tmp_path: Path) -> None:
    text = _strip_jsonc(block.code) if block.lang == "jsonc" else block.code
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        pytest.fail(f"{block.where}: not valid {block.lang.upper()}: {exc}")
    check_embedded_commands(data, block.where)


# ---------------------------------------------------------------------------------- lua, sql


def check_lua(block: Block, tmp_path: Path) -> None:
    code = re.sub(r"--\[\[.*?\]\]|--[^\n]*", "", block.code, flags=re.DOTALL)
    strings = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|\[\[.*?\]\]', re.DOTALL)
    for found in re.finditer(r"\{\s*\"dupguard\"((?:\s*,\s*\"[^\"]*\")*)\s*,?\s*\}", code):
        check_dupguard_argv(re.findall(r"\"([^\"]*)\"", found.group(1)), block.where)
    stack: list[str] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for char in strings.sub('""', code):
        if char in "([{":
            stack.append(char)
        elif char in pairs:
            assert stack and stack.pop() == pairs[char], f"{block.where}: unbalanced {char!r} in Lua"
    assert not stack, f"{block.where}: unclosed {''.join(stack)!r} in Lua"


def _normal_sql(text: str) -> str:
    return " ".join(re.sub(r"--[^\n]*", "", text).split())


def check_sql(block: Block, tmp_path: Path) -> None:
    from dupguard.runtime.backends.postgres import schema_sql

    assert _normal_sql(block.code) == _normal_sql(schema_sql()), (
        f"{block.where}: the SQL differs from the DDL the runtime executes (schema_sql()):\n{schema_sql()}"
    )


CHECKERS = {
    "python": check_python,
    "toml": check_toml,
    **dict.fromkeys(SHELL_LANGS, check_shell),
    "yaml": check_yaml,
    "json": check_json,
    "jsonc": check_json,
    "lua": check_lua,
    "text": check_text,
    "sql": check_sql,
}


# ------------------------------------------------------------- the checks reject bad blocks


def _block(lang: str, code: str, info: str = "") -> Block:
    words = info.split()
    attrs = dict(w.split("=", 1) for w in words if "=" in w)
    mode = " ".join(w for w in words if "=" not in w)
    return Block(ROOT / "README.md", 1, lang, mode, attrs, code)


# the README's configuration block before issue 17: extend-* keys inside the per-file-ignores table
OLD_README_CONFIG = """[tool.dupguard]
select = ["DUP"]

[tool.dupguard.per-file-ignores]
"tests/*" = ["DUP1"]

# teach dupguard about your own classes (qualified names)
extend-stateful-agents = ["mycompany.bots.SupportBot"]
"""

# the README's before/after example before issue 17: llama-index-core 0.12's API
OLD_README_EXAMPLE = """from llama_index.core.agent import ReActAgent

agent = ReActAgent.from_tools(tools=[], memory=None)
"""


@pytest.mark.parametrize(
    "block",
    [
        _block("toml", OLD_README_CONFIG),
        _block("toml", '[tool.dupguard]\nselect = ["DUP"\n'),
        _block("python", OLD_README_EXAMPLE, "lint expect=none"),
        _block(
            "python",
            "from llama_index.core.agent.workflow import FunctionAgent\n\nFunctionAgent(tool=[])\n",
            "lint expect=none",
        ),
        _block(
            "python",
            "from llama_index.core.agent.workflow import FunctionAgent\n\n"
            "agent = FunctionAgent(tools=[])\n\n\nasync def f():\n    return await agent.achat('hi')\n",
            "lint expect=none",
        ),
        _block("python", "import json\n", "lint"),
        _block("python", "agent = ReActAgent.from_tools(tools=my_tools)\n", "lint expect=none"),
        _block("python", "import sys\n\nsys.exit(3)\n"),
        _block("sh", "dupguard chek src/\n"),
        _block("sh", "dupguard check --no-such-flag src/\n"),
        _block("sh", "pip install 'dupguard[no-such-extra]'\n"),
        _block("sh", "pip install 'dupguard-runtime[fuzzy]'\n"),
        _block("sh", "rm -rf build\n"),
        _block("sh", "dupguard check --output-format nope . > report.txt 2>&1\n"),
        _block("text", "$ dupguard check --output-format xml app.py\n"),
        _block(
            "yaml",
            "repos:\n  - repo: https://github.com/dupguard/dupguard\n    rev: v1\n    hooks:\n      - id: nope\n",
        ),
        _block("yaml", "on: push\njobs:\n  lint:\n    steps: []\n"),
        _block("json", '{"command": "dupguard", "args": ["serve"],}'),
        _block(
            "jsonc",
            '{\n  // the server\n  "glspc.serverCommand": "dupguard",\n  "glspc.serverCommandArguments": ["serve"],\n}',
        ),
        _block("lua", 'require("lspconfig").dupguard.setup({ cmd = { "dupguard", "serve" } })\n'),
        _block("lua", "vim.lsp.start({ name = 'dupguard' \n"),
        _block("sql", "CREATE TABLE dupguard_records (key text);\n"),
        _block("", "anything\n"),
        _block("python", "print(1)\n", "runnable expect"),
    ],
    ids=lambda b: f"{b.lang or 'nolang'}-{b.mode or 'run'}-{b.code.splitlines()[0][:30]}",
)
def test_a_bad_block_fails(block: Block, tmp_path: Path) -> None:
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        test_block(block, tmp_path)


def test_python_lint_counts_the_findings(tmp_path: Path) -> None:
    shared = (
        "from fastapi import FastAPI\nfrom llama_index.core.memory import ChatMemoryBuffer\n"
        "from llama_index.core.agent.workflow import FunctionAgent\n\n"
        "app = FastAPI()\nagent = FunctionAgent(tools=[])\nmemory = ChatMemoryBuffer.from_defaults()\n\n\n"
        "@app.post('/chat')\nasync def chat(payload: dict):\n    return await agent.run(payload['m'], memory=memory)\n"
    )
    with pytest.raises(AssertionError, match="DUP102"):
        test_block(_block("python", shared, "lint expect=none"), tmp_path)
    test_block(_block("python", shared, "lint expect=DUP102"), tmp_path)
