"""A runtime-only install: ``dupguard-runtime`` in a fresh virtual environment, no linter deps.

Builds both wheels from this checkout (``dupguard`` and ``packaging/dupguard-runtime``),
installs ``dupguard-runtime`` alone with ``pip install --no-index`` (so nothing can come from
anywhere else), and runs an ``Idempotency`` call there with neither libcst nor pathspec
present. Then checks the split: no file is shipped by both distributions, ``dupguard``
requires ``dupguard-runtime`` at its own version, and removing ``dupguard`` from an
environment with both leaves the runtime intact.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import dupguard

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_PROJECT = ROOT / "packaging" / "dupguard-runtime"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT), str(RUNTIME_PROJECT)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.insert(4, "--no-build-isolation")  # the build backend is here: no download needed
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    found = {w.name.split("-")[0]: w for w in out.glob("*.whl")}
    if proc.returncode != 0 or set(found) != {"dupguard", "dupguard_runtime"}:
        pytest.fail(f"could not build the wheels:\n{proc.stdout}\n{proc.stderr}")
    return {"linter": found["dupguard"], "runtime": found["dupguard_runtime"]}


def names(wheel: Path) -> set[str]:
    return set(zipfile.ZipFile(wheel).namelist())


def metadata(wheel: Path) -> str:
    archive = zipfile.ZipFile(wheel)
    return archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()


def test_the_runtime_wheel_is_the_runtime_package_and_nothing_else(wheels):
    shipped = {n for n in names(wheels["runtime"]) if ".dist-info/" not in n}
    sources = {
        "dupguard/runtime/" + p.relative_to(ROOT / "src" / "dupguard" / "runtime").as_posix()
        for p in (ROOT / "src" / "dupguard" / "runtime").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert shipped == sources | {"dupguard/runtime/py.typed"}
    meta = metadata(wheels["runtime"])
    assert "Name: dupguard-runtime" in meta
    assert [line for line in meta.splitlines() if line.startswith("Requires-Dist") and "extra ==" not in line] == []


def test_the_two_wheels_share_no_file_and_pin_one_version(wheels):
    runtime = {n for n in names(wheels["runtime"]) if ".dist-info/" not in n}
    linter = {n for n in names(wheels["linter"]) if ".dist-info/" not in n}
    assert runtime.isdisjoint(linter)
    assert "dupguard/__init__.py" in linter and not any(n.startswith("dupguard/runtime/") for n in linter)
    assert f"Requires-Dist: dupguard-runtime=={dupguard.__version__}" in metadata(wheels["linter"]).splitlines()
    runtime_version = re.search(r"^Version: (.+)$", metadata(wheels["runtime"]), re.MULTILINE).group(1)  # type: ignore[union-attr]
    project = (ROOT / "pyproject.toml").read_text()
    assert runtime_version == dupguard.__version__
    assert re.search(r'^version = "(.+)"$', project, re.MULTILINE).group(1) == dupguard.__version__  # type: ignore[union-attr]


PROBE = r"""
import importlib.util, json, sys
import dupguard.runtime
from dupguard.runtime import Idempotency, IdempotencyMiddleware, SQLiteBackend, session_lease

runs = []
idem = Idempotency(SQLiteBackend(sys.argv[1]), ttl=60)
first = idem.run("order-50", lambda: runs.append(1) or {"charged": 50})
again = idem.run("order-50", lambda: runs.append(1) or {"charged": 50})
import dupguard
print(json.dumps({
    "results": [first, again], "runs": len(runs),
    "absent": [m for m in ("libcst", "pathspec") if importlib.util.find_spec(m) is None],
    "runtime": dupguard.runtime.__file__, "package": getattr(dupguard, "__file__", None),
}))
"""


def install(env_dir: Path, wheel_dir: Path, *requirements: str, no_deps: bool = False) -> None:
    cmd = [sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "install", "-q"]
    cmd += ["--no-index", "--find-links", str(wheel_dir), *(["--no-deps"] if no_deps else []), *requirements]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def probe(env_dir: Path, tmp_path: Path) -> dict:
    work = tmp_path / "elsewhere"
    work.mkdir(exist_ok=True)
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH: only the venv counts
    store = tmp_path / f"idem-{len(list(tmp_path.glob('idem-*')))}.sqlite3"
    proc = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", PROBE, str(store)],
        cwd=work,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_fresh_venv_with_only_the_runtime_runs_an_idempotent_call(wheels, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    install(env_dir, wheels["runtime"].parent, "dupguard-runtime")  # resolves nothing else: none needed
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    result = probe(env_dir, tmp_path)
    assert result["results"] == [{"charged": 50}, {"charged": 50}] and result["runs"] == 1
    assert result["absent"] == ["libcst", "pathspec"]
    assert result["runtime"].startswith(str(site))  # the installed wheel, not this checkout
    assert result["package"] is None  # ``dupguard`` is a namespace package here
    # the linter wheel on top (its own dependencies are not the point here), then removed:
    # the runtime's files are its own, so they survive
    install(env_dir, wheels["linter"].parent, "dupguard", no_deps=True)
    assert (site / "dupguard" / "__init__.py").exists() and (site / "dupguard" / "runtime" / "http.py").exists()
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "uninstall", "-y", "-q", "dupguard"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (site / "dupguard" / "__init__.py").exists()
    runtime_files = {n for n in names(wheels["runtime"]) if ".dist-info/" not in n}
    assert all((site / name).exists() for name in runtime_files)
    after = probe(env_dir, tmp_path)
    assert after["runs"] == 1 and after["package"] is None
