"""One home per rule: the ``@rule`` registry, the ``rules/<CODE>-<name>/`` folders, the generated
metadata (``dupguard._ruleindex``, ``docs/rules/``) and the codemod commands agree, and the
wheel ships what runs and no fixtures."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from dupguard.docgen import disagreements, render
from dupguard.rulemeta import all_rules, rule_codes
from dupguard.rules import Finding, Rule, RuleContext, load, rule
from linthelpers import ROOT, RULES_DIR, rule_folders


def test_folders_and_registry_agree() -> None:
    assert disagreements() == []
    assert sorted(load()) == sorted(f.name.partition("-")[0] for f in rule_folders())


def _folder(root: Path, name: str, toml: str, files: tuple[str, ...] = ("doc.md", "bad.py", "good.py")) -> None:
    folder = root / name
    folder.mkdir()
    (folder / "rule.toml").write_text(toml, encoding="utf-8")
    for file in files:
        (folder / file).write_text("", encoding="utf-8")


def test_disagreements_names_each_mismatch(tmp_path: Path) -> None:
    def check(model, ctx):
        return ()

    registry = {
        "DUP901": Rule("DUP901", "first", check, None, None),
        "DUP902": Rule("DUP902", "second", check, "some_fix", "safe"),
        "DUP903": Rule("DUP903", "third", check, None, None),
    }
    good_toml = 'summary = "s"\nruntime_fix = "r"\n'
    _folder(tmp_path, "DUP901-renamed", 'summary = "s"\nruntime_fix = "r"\nname = "first"\nseed = "000"\n')
    _folder(tmp_path, "DUP902-second", good_toml, ("doc.md", "bad.py"))  # no good.py, no fixed.py
    _folder(tmp_path, "DUP904-orphan", good_toml)
    _folder(tmp_path, "DUP903-third", good_toml, ("doc.md", "bad.py", "good.py", "fixed.py"))
    assert disagreements(tmp_path, registry) == sorted(
        [
            "rules/DUP901-renamed/ should be named DUP901-first (the name in its @rule)",
            (
                "rules/DUP901-renamed/rule.toml has keys ['name', 'runtime_fix', 'seed', 'summary'], "
                "expected ['runtime_fix', 'summary']"
            ),
            "rules/DUP902-second/good.py is missing",
            "rules/DUP902-second/ needs fixed.py: its fix is safe",
            "rules/DUP903-third/fixed.py exists but DUP903 declares no fix",
            "rules/DUP904-orphan/ has no @rule('DUP904', ...)",
        ]
    )
    assert disagreements(tmp_path, {**registry, "DUP905": Rule("DUP905", "x", check, None, None)})[0] == (
        "DUP905 is registered but has no rules/DUP905-<name>/ folder"
    )


def test_rule_toml_holds_only_what_the_code_does_not_declare() -> None:
    from dupguard.rulemeta import toml_loads

    for folder in rule_folders():
        keys = set(toml_loads((folder / "rule.toml").read_text(encoding="utf-8")))
        assert keys == {"summary", "runtime_fix"}, folder.name


def test_generated_index_is_up_to_date() -> None:
    name = "src/dupguard/_ruleindex.py"
    assert render()[name] == (ROOT / name).read_text(encoding="utf-8"), "run `python -m dupguard.docgen`"


def test_metadata_comes_from_the_registry_and_the_folders() -> None:
    registry = load()
    metas = all_rules()
    assert rule_codes() == tuple(sorted(registry)) == tuple(metas)
    for code, found in registry.items():
        meta = metas[code]
        assert (meta.name, meta.fix) == (found.name, found.safety or "none")
        folder = RULES_DIR / f"{code}-{found.name}"
        assert meta.doc == (folder / "doc.md").read_text(encoding="utf-8")


def test_every_rule_module_says_which_rules_it_defines() -> None:
    """A newcomer opens a rule's module and its docstring names the rule; the docs page names
    the module."""
    import importlib

    pages = render()
    for code, found in load().items():
        module = importlib.import_module(found.module)
        assert f"{code} {found.name}" in (module.__doc__ or ""), found.module
        path = "src/" + found.module.replace(".", "/") + ".py"
        assert (ROOT / path).is_file() and path in pages[f"docs/rules/{code}.md"]


def test_fix_and_safety_are_declared_together() -> None:
    with pytest.raises(ValueError, match="together"):
        rule("DUP999", name="x", fix="duplicate_tool")
    with pytest.raises(ValueError, match="together"):
        rule("DUP999", name="x", fix="duplicate_tool", safety="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="registered twice"):
        rule("DUP101", name="again")(lambda model, ctx: ())


def test_ctx_fix_names_the_running_rules_declared_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ctx.fix(*args)`` builds nothing: it names the fix of the rule being run (bound by the
    registry when ``rules[code](model, ctx)`` is called, as the pipeline does), and
    ``dupguard.codemods.<fix>.fix(fix_context, *args)`` runs only when the proposal is asked
    for; a rule that declares no fix gets a clear error."""
    import types

    import libcst as cst

    import dupguard.codemods  # noqa: F401  (the parent package of the probe below)
    from dupguard.fixes import FixContext, FixProposal
    from dupguard.semantic.positions import Positions

    calls = []
    probe = types.ModuleType("dupguard.codemods.probe_fix")
    probe.fix = lambda *args: calls.append(args) or FixProposal("fixed it")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dupguard.codemods.probe_fix", probe)
    module = cst.parse_module("x = 1\n")

    def check(model, ctx):
        yield Finding(module.body[0], f"from {ctx.rule.code}", fix=ctx.fix(model, "arg"))

    fixable = Rule("DUP990", "probe", check, "probe_fix", "unsafe")
    plain = Rule("DUP991", "plain", check, None, None)
    ctx = RuleContext(Positions(module))
    (finding,) = fixable("the model", ctx)
    assert finding.message == "from DUP990" and calls == []
    fix_context = FixContext(module, "the model", ctx.positions)  # type: ignore[arg-type]
    proposal = fix_context.propose(finding, fixable.safety)
    assert proposal == FixProposal("fixed it", applicability="unsafe")
    assert calls == [(fix_context, "the model", "arg")]
    assert fix_context.propose(finding, fixable.safety) is proposal and len(calls) == 1  # once per pass
    with pytest.raises(LookupError, match="DUP991 declares no fix"):
        list(plain("the model", ctx))


def test_codemod_commands_take_their_code_from_the_registry() -> None:
    import importlib

    from dupguard.codemods import COMMANDS

    fixable = {code: r for code, r in load().items() if r.fix}
    assert COMMANDS == {code: f"{r.fix}.{r.command}" for code, r in sorted(fixable.items())}
    for code, spec in COMMANDS.items():
        module, _, name = spec.rpartition(".")
        command = getattr(importlib.import_module(f"dupguard.codemods.{module}"), name)
        assert command.CODE == code and command.DESCRIPTION.startswith(f"{code}: ")
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "src/dupguard/codemods").glob("*.py"))
    assert 'CODE = "DUP' not in source


def test_a_command_no_rule_declares_is_refused() -> None:
    from dupguard.codemods._command import RuleCodemod

    with pytest.raises(LookupError, match="FixSomethingElse"):
        type("FixSomethingElse", (RuleCodemod,), {"__module__": "dupguard.codemods.duplicate_tool"})


def test_no_hard_coded_code_lists_in_bench_and_tests() -> None:
    """Code lists come from the registry: no file lists every code by hand."""
    codes = rule_codes()
    for path in [*ROOT.glob("bench/*.py"), *ROOT.glob("tests/*.py"), *ROOT.glob("src/dupguard/**/*.py")]:
        if path.name == "_ruleindex.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert sum(f'"{code}"' in text for code in codes) < len(codes) // 2, path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    wheels = list(out.glob("dupguard-*.whl"))
    if proc.returncode != 0 or not wheels:
        pytest.fail(f"could not build the wheel:\n{proc.stdout}\n{proc.stderr}")
    return wheels[0]


def test_wheel_ships_no_rule_fixtures(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "dupguard/_ruleindex.py" in names and "dupguard/rules/retries/queue_without_lease.py" in names
    shipped = [n for n in names if n.endswith((".toml", ".md")) or "/_rules/" in n or n.startswith("rules/")]
    assert shipped == []
    fixtures = {"bad.py", "good.py", "fixed.py"}
    assert [n for n in names if n.rpartition("/")[2] in fixtures] == []


def test_installed_wheel_shows_rule_docs(wheel: Path, tmp_path: Path) -> None:
    """``dupguard rules`` and ``dupguard rule DUP101`` from the wheel installed in a fresh venv
    (its dependencies taken from the test environment), run away from the checkout."""
    import libcst
    import pathspec

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {str(Path(m.__file__).resolve().parent.parent) for m in (libcst, pathspec)}
    (Path(site) / "deps.pth").write_text("\n".join(sorted(deps)) + "\n", encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    clean_env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    where = subprocess.run(
        [str(python), "-c", "import dupguard; print(dupguard.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        env=clean_env,
    )
    assert where.stdout.startswith(site), where.stdout + where.stderr  # the wheel, not the checkout
    shown = subprocess.run(
        [str(env_dir / "bin" / "dupguard"), "rule", "DUP101"], cwd=work, capture_output=True, text=True, env=clean_env
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# shared-agent-singleton (DUP101)\n\nFix: unsafe\n")
    assert "## What it does" in shown.stdout
    listed = subprocess.run(
        [str(env_dir / "bin" / "dupguard"), "rules"], cwd=work, capture_output=True, text=True, env=clean_env
    )
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == len(rule_codes()) + 1
