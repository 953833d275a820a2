"""Jupyter notebooks end to end (src/dupguard/notebook.py, docs/adoption.md): linted by cell,
reported at the cell and the row in it in every output format, fixed with everything but the
changed cells' sources byte-identical, refused in one line when they are not notebooks."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from linthelpers import run_cli

MARKDOWN = {
    "cell_type": "markdown",
    "id": "intro",
    "metadata": {},
    "source": ["# Support bot\n", "Tried in a notebook."],
}
SETUP = {
    "cell_type": "code",
    "execution_count": 1,
    "id": "setup",
    "metadata": {"tags": ["setup"]},
    "outputs": [{"name": "stdout", "output_type": "stream", "text": ["Successfully installed llama-index\n"]}],
    "source": [
        "%pip install llama-index fastapi\n",
        "from fastapi import FastAPI\n",
        "from llama_index.core.agent import ReActAgent\n",
        "\n",
        "app = FastAPI()\n",
        "agent = ReActAgent.from_tools(tools=[])",
    ],
}
SHELL = {
    "cell_type": "code",
    "execution_count": 2,
    "id": "shell",
    "metadata": {},
    "outputs": [
        {
            "data": {
                "image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
                "text/plain": ["café ☕"],
            },
            "execution_count": 2,
            "metadata": {},
            "output_type": "execute_result",
        }
    ],
    "source": ["!ls -la\n", "files = !ls\n", "for name in files:\n", "    %time print(name)\n", "'café ☕'"],
}
BASH = {
    "cell_type": "code",
    "execution_count": 3,
    "id": "bash",
    "metadata": {},
    "outputs": [],
    "source": ["%%bash\n", "echo agent = ReActAgent.from_tools(tools=[])"],
}
HANDLER = {
    "cell_type": "code",
    "execution_count": 4,
    "id": "handler",
    "metadata": {"collapsed": False},
    "outputs": [],
    "source": [
        '@app.post("/chat")\n',
        "async def chat(payload: dict):\n",
        "    # every request reaches the agent built above\n",
        '    return await agent.achat(payload["message"])',
    ],
}
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "version": "3.11.4"},
}


def _notebook(*cells: dict, metadata: dict | None = None) -> dict:
    return {
        "cells": [copy.deepcopy(c) for c in cells],
        "metadata": METADATA if metadata is None else metadata,
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _write(path: Path, notebook: dict, *, indent: int = 1, newline: bool = True) -> bytes:
    """As Jupyter writes notebooks: ``indent=1``, non-ASCII as is, a trailing newline."""
    data = (json.dumps(notebook, indent=indent, ensure_ascii=False) + ("\n" if newline else "")).encode()
    path.write_bytes(data)
    return data


def _shared_agent(tmp_path: Path, **kwargs) -> tuple[Path, bytes]:
    path = tmp_path / "support.ipynb"
    data = _write(path, _notebook(MARKDOWN, SETUP, SHELL, BASH, HANDLER), **kwargs)
    return path, data


def _check(tmp_path: Path, *args: str):
    return run_cli("check", "--isolated", "--no-cache", *args, cwd=tmp_path)


# ------------------------------------------------------------------------- positions


def test_finding_is_reported_at_its_cell_and_row(tmp_path: Path) -> None:
    _shared_agent(tmp_path)
    proc = _check(tmp_path, "--output-format", "concise", "support.ipynb")
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    # the agent: cell 2 (the Markdown cell is cell 1, as Jupyter and ruff count), row 6 of it
    assert out.splitlines()[0].startswith("support.ipynb:cell 2:6:1: DUP101 `agent`")
    # the message's own line reference names the handler's cell and row too
    assert "(cell 5, line 4)" in out
    # the %%bash cell is shell, not Python: nothing in it is reported
    assert out.count("DUP101") == 1
    assert proc.stderr == b""


def test_every_output_format_handles_notebook_positions(tmp_path: Path) -> None:
    _shared_agent(tmp_path)
    full = _check(tmp_path, "--output-format", "full", "support.ipynb").stdout.decode()
    assert "support.ipynb:cell 2:6:1: DUP101" in full
    # the code frame shows the cell's own lines, magics as written
    assert "  5 | app = FastAPI()\n  6 | agent = ReActAgent.from_tools(tools=[])\n" in full
    assert re.search(r"\n    \| \^{39}\n", full)

    grouped = _check(tmp_path, "--output-format", "grouped", "support.ipynb").stdout.decode()
    assert "support.ipynb:\n  cell 2:6:1 DUP101 " in grouped

    quiet = _check(tmp_path, "--quiet", "support.ipynb").stdout.decode()
    assert quiet.startswith("support.ipynb:cell 2:6:1: DUP101")

    (item,) = json.loads(_check(tmp_path, "--output-format", "json", "support.ipynb").stdout)
    assert item["cell"] == 2
    assert item["location"] == {"row": 6, "column": 1}
    assert item["end_location"] == {"row": 6, "column": 40}
    assert item["noqa_row"] == 6

    (line,) = _check(tmp_path, "--output-format", "json-lines", "support.ipynb").stdout.decode().splitlines()
    assert json.loads(line)["cell"] == 2 and json.loads(line)["location"]["row"] == 6

    sarif = json.loads(_check(tmp_path, "--output-format", "sarif", "support.ipynb").stdout)
    (result,) = sarif["runs"][0]["results"]
    # a cell's row is no line of the .ipynb file: line 1 as ruff's fallback, the cell in properties
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 1}
    assert result["properties"] == {"cell": 2, "cellLine": 6, "cellColumn": 1}
    assert result["message"]["text"].startswith("cell 2, line 6, column 1: `agent`")

    github = _check(tmp_path, "--output-format", "github", "support.ipynb").stdout.decode()
    assert github.startswith("::error file=support.ipynb,line=1,col=1,endLine=1,endColumn=1,title=DUP101::")
    assert "title=DUP101::support.ipynb:cell 2:6:1: DUP101 `agent`" in github

    # a plain module keeps its positions and a null cell, as in ruff's JSON
    (tmp_path / "plain.py").write_text(
        "".join(SETUP["source"][1:]) + "\n\n\n" + "".join(HANDLER["source"]) + "\n", encoding="utf-8"
    )
    (plain,) = json.loads(_check(tmp_path, "--output-format", "json", "plain.py").stdout)
    assert plain["cell"] is None and plain["location"] == {"row": 5, "column": 1}


def test_cached_results_are_reported_by_cell_too(tmp_path: Path) -> None:
    _shared_agent(tmp_path)
    args = ("check", "--isolated", "--cache-dir", str(tmp_path / "cache"), "--output-format", "json", "support.ipynb")
    cold, warm = (run_cli(*args, cwd=tmp_path) for _ in range(2))
    assert (tmp_path / "cache").is_dir()
    assert cold.stdout == warm.stdout and json.loads(warm.stdout)[0]["cell"] == 2


def test_notebook_importing_a_project_module_is_linted_with_the_project_index(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "app" / "agent.py").write_text(
        "from llama_index.core.agent import ReActAgent\n\nagent = ReActAgent.from_tools(tools=[])\n", encoding="utf-8"
    )
    cells = [
        {**SETUP, "source": ["from fastapi import FastAPI\n", "from app.agent import agent\n", "app = FastAPI()"]},
        HANDLER,
    ]
    _write(tmp_path / "explore.ipynb", _notebook(*cells))
    proc = _check(tmp_path, "--output-format", "concise", ".")
    lines = proc.stdout.decode().splitlines()
    assert any(line.startswith("explore.ipynb:cell 2:4:18: DUP101") and "app/agent.py:3" in line for line in lines), (
        lines
    )


# ------------------------------------------------------------------------- fix


def _cell_chunks(raw: str) -> list[str]:
    """The raw text of each cell object, as ``json.dumps(indent=1)`` lays them out."""
    start = raw.index('"cells": [') + len('"cells": [')
    end = raw.index("\n ],\n", start)
    return re.split(r"(?<=\n  }),(?=\n  {)", raw[start:end])


@pytest.mark.parametrize("indent", [1, 2], ids=["jupyter-indent", "indent-2"])
def test_fix_writes_back_only_the_changed_cells(tmp_path: Path, indent: int) -> None:
    path, before = _shared_agent(tmp_path, indent=indent)
    proc = run_cli("fix", "--isolated", "--unsafe-fixes", "--show-fixes", "support.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert "  support.ipynb:cell 2:6:1: DUP101 Build `agent` per call" in proc.stdout.decode()
    after = path.read_bytes()
    assert after != before and after.endswith(b"}\n")
    old, new = json.loads(before), json.loads(after)
    changed = [i for i, (a, b) in enumerate(zip(old["cells"], new["cells"])) if a["source"] != b["source"]]
    assert changed == [1, 4]  # the agent's cell and the handler's cell, nothing else
    # the parsed notebook is the same but for those sources: outputs, metadata, ids, counts
    for notebook in (old, new):
        for i in changed:
            notebook["cells"][i].pop("source")
    assert old == new
    if indent == 1:  # and each untouched cell is the very same text
        old_chunks, new_chunks = _cell_chunks(before.decode()), _cell_chunks(after.decode())
        assert len(old_chunks) == len(new_chunks) == 5
        for i in range(5):
            if i not in changed:
                assert new_chunks[i] == old_chunks[i]
    fixed = json.loads(after)
    agent_cell = "".join(fixed["cells"][1]["source"])
    handler_cell = "".join(fixed["cells"][4]["source"])
    assert agent_cell.startswith("%pip install llama-index fastapi\n")  # the magic is back as it was
    assert "def make_agent():" in agent_cell and not agent_cell.endswith("\n")
    assert "agent = make_agent()" in handler_cell
    assert all(isinstance(line, str) for line in fixed["cells"][1]["source"])  # still a list of lines
    # the fixed notebook is clean, and its code cells are valid Python once the magics are set aside
    assert _check(tmp_path, "support.ipynb").returncode == 0
    code = "".join(
        "".join(c["source"]) + "\n" for c in fixed["cells"] if c["cell_type"] == "code" and c["id"] != "bash"
    )
    compile(re.sub(r"(?m)^(\s*)(%|!|files = !).*$", r"\1pass", code), "support.ipynb", "exec")


def test_fix_diff_and_stdin_give_the_notebook(tmp_path: Path) -> None:
    path, before = _shared_agent(tmp_path)
    diff = run_cli("fix", "--isolated", "--unsafe-fixes", "--diff", "support.ipynb", cwd=tmp_path)
    assert diff.returncode == 1
    assert path.read_bytes() == before
    assert '+    "def make_agent():\\n",' in diff.stdout.decode()
    piped = run_cli(
        "fix", "--isolated", "--unsafe-fixes", "--stdin-filename", "support.ipynb", "-", cwd=tmp_path, stdin=before
    )
    assert piped.returncode == 0, piped.stderr.decode()
    fixed = json.loads(piped.stdout)
    assert "def make_agent():" in "".join(fixed["cells"][1]["source"])


def test_source_stored_as_one_string_stays_one_string(tmp_path: Path) -> None:
    cells = [dict(c, source="".join(c["source"])) for c in (MARKDOWN, SETUP, HANDLER)]
    path = tmp_path / "flat.ipynb"
    before = _write(path, _notebook(*cells), indent=2, newline=False)
    proc = run_cli("fix", "--isolated", "--unsafe-fixes", "flat.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    after = path.read_bytes()
    assert not after.endswith(b"\n") and before != after
    fixed = json.loads(after)
    assert isinstance(fixed["cells"][1]["source"], str) and "def make_agent" in fixed["cells"][1]["source"]
    assert fixed["cells"][0] == cells[0]


# ------------------------------------------------------------------------- bad input, discovery


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"cells": [', "invalid notebook: not JSON"),
        (b'{"worksheets": [], "nbformat": 3}', "unsupported notebook format (nbformat 3)"),
        (b'{"cells": {}}', 'invalid notebook: "cells" is not a list'),
        (b'{"cells": [{"cell_type": "code", "source": 3}]}', 'cell 1: "source" is not a string'),
        (b"[1, 2]", "the top level is not a JSON object"),
        (b"\xff\xfe{}", "cannot decode as utf-8"),
        (b"[" * 100_000, "invalid notebook"),
    ],
    ids=["truncated", "nbformat3", "cells-object", "source-number", "array", "not-utf8", "deep"],
)
def test_invalid_notebook_is_one_error_line(tmp_path: Path, content: bytes, reason: str) -> None:
    (tmp_path / "broken.ipynb").write_bytes(content)
    _shared_agent(tmp_path)
    for command in (["check", "--no-cache"], ["fix", "--unsafe-fixes"]):
        proc = run_cli(*command, "--isolated", ".", cwd=tmp_path)
        err = proc.stderr.decode()
        assert proc.returncode == 1
        assert "Traceback" not in err
        (line,) = [line for line in err.splitlines() if "broken.ipynb" in line]
        assert line.startswith("dupguard: error: broken.ipynb: ") and reason in line, line
    assert (tmp_path / "broken.ipynb").read_bytes() == content


def test_notebooks_are_discovered_and_extend_exclude_drops_them(tmp_path: Path) -> None:
    _shared_agent(tmp_path)
    assert "support.ipynb:cell 2:6:1" in _check(tmp_path, ".").stdout.decode()
    dropped = _check(tmp_path, "--extend-exclude", "*.ipynb", ".")
    assert dropped.returncode == 0 and b"support.ipynb" not in dropped.stdout


def test_a_notebook_in_another_language_has_nothing_to_lint(tmp_path: Path) -> None:
    metadata = {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}
    _write(tmp_path / "r.ipynb", _notebook(SETUP, HANDLER, metadata=metadata))
    proc = _check(tmp_path, "r.ipynb")
    assert proc.returncode == 0 and proc.stderr == b""


def test_add_noqa_comments_the_cell_line(tmp_path: Path) -> None:
    path, before = _shared_agent(tmp_path)
    proc = _check(tmp_path, "--add-noqa", "support.ipynb")
    assert proc.returncode == 0, proc.stderr.decode()
    assert "Added 1 noqa directive." in proc.stderr.decode()
    after = json.loads(path.read_bytes())
    assert after["cells"][1]["source"][-1] == "agent = ReActAgent.from_tools(tools=[])  # noqa: DUP101"
    old = json.loads(before)
    old["cells"][1]["source"][-1] += "  # noqa: DUP101"
    assert after == old
    assert _check(tmp_path, "support.ipynb").returncode == 0


# ------------------------------------------------------------------------- write-back, directly


def _load(notebook: dict, **dump) -> tuple[object, str]:
    from dupguard.notebook import load

    raw = json.dumps(notebook, **dump)
    return load(raw.encode()), raw


def test_write_back_splices_sources_whatever_the_layout() -> None:
    """Compact JSON, "source" before "cell_type", escapes, an empty list: each code cell's source
    is found and replaced in place, the rest of the text stays as it was."""
    cells = [
        {"source": ['x = "a \\"quoted\\" \\\\ path"\n', "y = 1"], "cell_type": "code", "metadata": {}, "outputs": []},
        {"cell_type": "raw", "source": "not python", "metadata": {}},
        {"metadata": {}, "outputs": [], "cell_type": "code", "source": []},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "z = 2\n"},
    ]
    notebook, raw = _load(_notebook(*cells), separators=(",", ":"))
    assert notebook.text == 'x = "a \\"quoted\\" \\\\ path"\ny = 1\nz = 2\n'
    new = notebook.apply(notebook.text.replace("y = 1", "y = 10").replace("z = 2", "z = 20"))
    fixed = json.loads(new)
    assert fixed["cells"][0]["source"] == ['x = "a \\"quoted\\" \\\\ path"\n', "y = 10"]
    assert fixed["cells"][3]["source"] == "z = 20\n"
    assert fixed["cells"][1:3] == cells[1:3]
    assert new.decode().replace("y = 10", "y = 1").replace("z = 20", "z = 2") == raw


def test_write_back_places_lines_inserted_between_cells() -> None:
    from dupguard.notebook import NotebookError

    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["def f():\n", "    return 1"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%matplotlib inline\n", "g = f()"]},
    ]
    notebook, _ = _load(_notebook(*cells), indent=1)
    assert notebook.text == "def f():\n    return 1\npass\ng = f()\n"
    # an indented line continues the block the previous cell ends with; a top-level one starts the next cell
    new = json.loads(notebook.apply("def f():\n    return 1\n    # done\nimport os\npass\ng = f()\n"))
    assert new["cells"][0]["source"] == ["def f():\n", "    return 1\n", "    # done"]
    assert new["cells"][1]["source"] == ["import os\n", "%matplotlib inline\n", "g = f()"]
    with pytest.raises(NotebookError, match="IPython line"):
        notebook.apply("def f():\n    return 1\nprint()\ng = f()\n")
    assert notebook.apply(notebook.text) == json.dumps(_notebook(*cells), indent=1).encode()
    plain = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["a = 1\n", "b = 2"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["c = 3"]},
    ]
    notebook, _ = _load(_notebook(*plain), indent=1)
    # as many lines replaced as there were: line for line, each in its cell
    new = json.loads(notebook.apply("a = 1\nb = 2  # noqa: X\nc = 3  # noqa: Y\n"))
    assert [c["source"] for c in new["cells"]] == [["a = 1\n", "b = 2  # noqa: X"], ["c = 3  # noqa: Y"]]
    with pytest.raises(NotebookError, match="spans two cells"):
        notebook.apply("a = 1\nbc = 23\n")


def test_max_file_size_bounds_the_code_cells_not_the_outputs(tmp_path: Path) -> None:
    """Plots make notebooks large: a 3 MB output does not keep the code from being linted, but
    code cells larger than ``max-file-size`` are skipped and named, as a large module is."""
    plot = {"data": {"image/png": "A" * 3_000_000}, "metadata": {}, "output_type": "display_data"}
    _write(tmp_path / "plots.ipynb", _notebook(MARKDOWN, {**SETUP, "outputs": [plot]}, HANDLER))
    assert (tmp_path / "plots.ipynb").stat().st_size > 2 * 1024 * 1024
    proc = _check(tmp_path, "plots.ipynb")
    assert proc.returncode == 1 and "plots.ipynb:cell 2:6:1: DUP101" in proc.stdout.decode(), proc.stderr.decode()
    padding = {**SETUP, "source": ["# " + "x" * 100 + "\n"] * 30, "outputs": []}
    _write(tmp_path / "long.ipynb", _notebook(SETUP, padding, HANDLER))
    small = _check(tmp_path, "--max-file-size", "2KB", "long.ipynb")
    # skipped: no rule's finding, only the "not processed" one (docs/ci.md, reserved codes)
    assert small.returncode == 1 and "DUP101" not in small.stdout.decode()
    assert "long.ipynb:1:1: DUP000 its code cells hold" in small.stdout.decode()
    assert "dupguard: error: long.ipynb: its code cells hold " in small.stderr.decode()
    assert "more than max-file-size (2048 bytes), skipped" in small.stderr.decode()
