"""Tests for bench/real_apps.py: the scoring of dupguard on labelled real applications.

Every figure in bench/real-apps.md comes from this matching, so it is tested on a tiny synthetic
application: a real git repository made here (the "mirror"), real ``git archive``, the real dupguard
CLI, labels written for it in the unified schema of bench/real-apps/README.md. No network, no mirror
of a public repository.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "real_apps.py"


def _load():
    spec = importlib.util.spec_from_file_location("dupguard_bench_real_apps", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


real_apps = _load()

AGENT = """\
from fastapi import FastAPI
from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool


def lookup(query: str) -> str:
    return query


tool = FunctionTool.from_defaults(fn=lookup)
app = FastAPI()
memory = ChatMemoryBuffer.from_defaults(token_limit=4000)
agent = ReActAgent.from_tools(tools=[tool, tool], memory=memory)


@app.post("/chat")
async def chat(payload: dict):
    return await agent.achat(payload["message"])
"""
# dupguard reports: app/agent.py:13 DUP102 (memory), :14 DUP101 (agent), :14 DUP301 (tool twice),
# app/batch.py:10 DUP201 (gather over the module agent)
BATCH = """\
import asyncio

from llama_index.core.agent import ReActAgent
from llama_index.core.memory import ChatMemoryBuffer

agent = ReActAgent.from_tools(tools=[], memory=ChatMemoryBuffer.from_defaults())


async def answer_all(questions: list[str]):
    return await asyncio.gather(*(agent.achat(q) for q in questions))
"""

CODES = """\
[new."NEW-agent-behind-long-lived-server"]
issue16 = 5
cause = "one agent behind a server"
rules = []
"""

LABELS = """\
[repo."acme/shop"]

[[repo."acme/shop".defects]]
path = "app/agent.py"
line = 13
code = "DUP102"
why = "module memory shared by every request"
confidence = "high"

[[repo."acme/shop".defects]]
path = "app/agent.py"
line = 19
code = "NEW-agent-behind-long-lived-server"
alt_codes = ["DUP101"]
also = ["app/agent.py:14"]
why = "the handler runs the one module agent"
confidence = "high"

[[repo."acme/shop".defects]]
path = "app/batch.py"
line = 6
code = "DUP102"
why = "the memory inside the batch agent is shared by the gathered runs"
confidence = "medium"

[[repo."acme/shop".near_misses]]
path = "app/agent.py"
line = 14
looks_like = "DUP301"
why_fine = "a trap: the labeller says the repeated tool is harmless here"

[repo."acme/vault"]
defects = []

[repo."acme/gone"]
defects = []
"""

TRIAGE = """\
[[verdict]]
repo = "acme/shop"
path = "app/batch.py"
line = 10
code = "DUP201"
verdict = "defect"
reviewer = "test"
why = "the gathered runs share one agent"

[[verdict]]
repo = "acme/shop"
path = "app/agent.py"
line = 99
code = "DUP101"
verdict = "false-positive"
why = "no such finding: stale"
"""


def _git(*args: str, cwd: Path) -> str:
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main", *args]
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _mirror(mirrors: Path, name: str, files: dict[str, str]) -> str:
    """A git repository at ``mirrors/<owner>+<name>`` holding ``files``; returns its commit."""
    work = mirrors / name.replace("/", "+")
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "app", cwd=work)
    return _git("rev-parse", "HEAD", cwd=work)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Labels for three repositories: a dev app with defects, a holdout one, a dev one with no mirror."""
    tmp = tmp_path_factory.mktemp("real_apps")
    mirrors = tmp / "mirrors"
    shop = _mirror(mirrors, "acme/shop", {"app/agent.py": AGENT, "app/batch.py": BATCH})
    vault = _mirror(mirrors, "acme/vault", {"app/agent.py": AGENT})
    labels = tmp / "labels"
    labels.mkdir()
    (labels / "repos-t.toml").write_text(
        f'[repo."acme/shop"]\ncommit = "{shop}"\nsplit = "dev"\n\n'
        f'[repo."acme/vault"]\ncommit = "{vault}"\nsplit = "holdout"\n\n'
        f'[repo."acme/gone"]\ncommit = "{"0" * 40}"\nsplit = "dev"\n'
    )
    (labels / "labels-t.toml").write_text(LABELS)
    (labels / "codes.toml").write_text(CODES)
    (labels / "triage.toml").write_text(TRIAGE)
    return tmp, mirrors, labels


def _main(setup, *extra: str, name: str = "run") -> tuple[int, dict | None]:
    tmp, mirrors, labels = setup
    out = tmp / f"{name}.json"
    argv = ["--repos", str(labels / "repos-t.toml"), "--mirrors", str(mirrors), "--json", str(out)]
    argv += ["--md", str(tmp / "report.md"), "--name", name, *extra]
    code = real_apps.main(argv)
    return code, (json.loads(out.read_text()) if code == 0 else None)


@pytest.fixture(scope="module")
def dev_run(setup):
    """The dev split, with the triage file: one real dupguard run for the tests below."""
    code, result = _main(setup, "--triage", str(setup[2] / "triage.toml"), name="dev-run")
    assert code == 0
    return result


def _outcomes(result: dict, repo: str = "acme/shop") -> dict[tuple[str, int, str], str]:
    entry = next(r for r in result["repositories"] if r["repo"] == repo)
    return {(f["path"], f["line"], f["code"]): f["outcome"] for f in entry["findings"]}


def test_findings_are_matched_to_labels_by_place_and_code(dev_run):
    assert _outcomes(dev_run) == {
        ("app/agent.py", 13, "DUP102"): "tp",  # the labelled line and code
        ("app/agent.py", 14, "DUP101"): "tp",  # an `also` place, an alt_code of a NEW- defect
        ("app/agent.py", 14, "DUP301"): "fp",  # same place, a code the defect does not accept: the near-miss
        ("app/batch.py", 10, "DUP201"): "tp-review",  # the labels miss it, a reviewer confirmed it
    }
    shop = next(r for r in dev_run["repositories"] if r["repo"] == "acme/shop")
    assert shop["found"] == ["app/agent.py:13 DUP102", "app/agent.py:19 NEW-agent-behind-long-lived-server"]
    assert shop["missed"] == ["app/batch.py:6 DUP102"]
    near = next(f for f in shop["findings"] if f["code"] == "DUP301")
    assert near["note"].startswith("at a labelled near-miss")


def test_review_never_counts_in_recall_or_in_the_labels_precision(dev_run):
    s = dev_run["summary"]
    assert (s["findings"], s["tp"], s["tp_added_after_review"], s["fp"]) == (4, 2, 1, 1)
    assert s["precision"] == 0.5 and s["precision_after_review"] == 0.75
    assert (s["defects"], s["found"], s["recall"]) == (3, 2, 0.667)
    # one of the three defects has a NEW- code no rule reports yet
    assert (s["defects_with_a_rule"], s["found_with_a_rule"]) == (2, 1)
    assert s["per_code"]["DUP201"] == {
        "findings": 1,
        "tp": 0,
        "tp_added_after_review": 1,
        "fp": 0,
        "precision": 0.0,
        "precision_after_review": 1.0,
        "defects": 0,
        "found": 0,
        "missed": 0,
        "recall": None,
    }
    assert s["per_code"]["DUP102"]["defects"] == 2 and s["per_code"]["DUP102"]["recall"] == 0.5
    assert dev_run["stale_verdicts"] == ["acme/shop app/agent.py:99 DUP101 (false-positive)"]


def test_a_missing_mirror_is_reported_and_skipped(dev_run):
    assert [r["repo"] for r in dev_run["repositories"]] == ["acme/shop", "acme/gone"]
    assert dev_run["summary"]["ran"] == 1
    assert dev_run["summary"]["not_run"]["acme/gone"].startswith("no-mirror")
    shop = dev_run["repositories"][0]
    assert shop["run"]["status"] == "ok" and shop["run"]["files"] == 2 and shop["run"]["wall_s"] > 0


def test_report_block_lists_false_positives_and_review_apart(setup, dev_run):
    text = (setup[0] / "report.md").read_text()
    block = text[text.index("name=dev-run split=dev") :]
    fps = block[block.index("#### False positives (1)") : block.index("#### Added after review")]
    assert "`app/agent.py:14` DUP301" in fps and "near-miss" in fps
    review = block[block.index("#### Added after review") : block.index("#### True positives")]
    assert "`app/batch.py:10` DUP201" in review and "the gathered runs share one agent" in review
    assert "| acme/shop |" in block and "name=repositories" in text and "acme/vault" in text


def test_without_triage_the_unlabelled_finding_is_a_false_positive(setup, dev_run, tmp_path):
    """--rescore: the same findings, no triage file."""
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(dev_run))
    code, result = _main(setup, "--rescore", str(saved), "--no-md", name="rescored")
    assert code == 0
    assert _outcomes(result)[("app/batch.py", 10, "DUP201")] == "fp"
    assert result["summary"]["fp"] == 2 and result["summary"]["tp_added_after_review"] == 0


def test_a_rescore_names_the_dupguard_that_made_the_findings(setup, dev_run, tmp_path):
    """A rescore reports the saved run's findings, so its header names the saved run's dupguard,
    not the checkout doing the scoring (a run of another branch rescored here after a label change)."""
    saved = tmp_path / "other.json"
    saved.write_text(json.dumps({**dev_run, "dupguard": "0.0.9 at abc1234", "dupguard_home": "/elsewhere/src"}))
    code, result = _main(setup, "--rescore", str(saved), "--no-md", name="rescored-other")
    assert code == 0
    assert result["dupguard"] == "0.0.9 at abc1234" and result["dupguard_home"] == "/elsewhere/src"


def test_holdout_runs_only_with_the_flag_and_only_once(setup, dev_run):
    assert all(r["split"] == "dev" for r in dev_run["repositories"])
    assert _main(setup, "--repo", "acme/vault", name="sneak")[0] == 2
    code, result = _main(setup, "--holdout", name="holdout")
    assert code == 0
    assert [r["repo"] for r in result["repositories"]] == ["acme/vault"]
    assert _outcomes(result, "acme/vault")[("app/agent.py", 13, "DUP102")] == "fp"  # no labels: a clean repo
    assert "split=holdout" in (setup[0] / "report.md").read_text()
    assert _main(setup, "--holdout", name="again")[0] == 2
    saved = setup[0] / "holdout.json"
    assert _main(setup, "--rescore", str(saved), "--no-md", name="peek")[0] == 2  # a holdout JSON needs --holdout


def test_a_later_holdout_is_its_own_split_measured_once(tmp_path):
    """``--holdout holdout-2`` runs only that split, once; it neither needs nor unlocks the first holdout's guard."""
    mirrors = tmp_path / "mirrors"
    first = _mirror(mirrors, "acme/old", {"app/main.py": "x = 1\n"})
    fresh = _mirror(mirrors, "acme/fresh", {"app/main.py": "y = 2\n"})
    repos = tmp_path / "repos-t.toml"
    repos.write_text(
        f'[repo."acme/old"]\ncommit = "{first}"\nsplit = "holdout"\n\n'
        f'[repo."acme/fresh"]\ncommit = "{fresh}"\nsplit = "holdout-2"\n'
    )
    (tmp_path / "labels-t.toml").write_text('[repo."acme/old"]\ndefects = []\n\n[repo."acme/fresh"]\ndefects = []\n')
    (tmp_path / "codes.toml").write_text(CODES)
    md = tmp_path / "report.md"

    def run(*extra: str, name: str | None = None) -> int:
        argv = ["--repos", str(repos), "--mirrors", str(mirrors), "--md", str(md), "--json", str(tmp_path / "o.json")]
        return real_apps.main(argv + (["--name", name] if name else []) + list(extra))

    assert run("--holdout") == 0  # the first holdout, measured before the second one was labelled
    before = md.read_text()
    assert run("--repo", "acme/fresh") == 2  # not a dev repository
    assert run("--holdout", "--repo", "acme/fresh") == 2  # nor one of the first holdout
    assert run("--holdout", "dev") == 2 and run("--holdout", "later") == 2  # not holdout split names
    assert run("--holdout", "holdout-2") == 0
    result = json.loads((tmp_path / "o.json").read_text())
    assert result["split"] == "holdout-2" and [r["repo"] for r in result["repositories"]] == ["acme/fresh"]
    text = md.read_text()
    assert "name=holdout-2 split=holdout-2" in text and "2 repositories: 1 holdout, 1 holdout-2." in text
    holdout_block = before[before.index("<!-- BEGIN real_apps.py name=holdout ") :]
    assert holdout_block in text  # the first holdout's block is untouched
    assert run("--holdout", "holdout-2", name="again") == 2  # measured once
    assert run("--holdout", name="again") == 2  # and the first holdout's guard still holds
    assert run("--holdout", "holdout-2", "--rescore", str(tmp_path / "o.json"), "--no-md") == 0
    assert run("--rescore", str(tmp_path / "o.json"), "--no-md") == 2  # a holdout-2 JSON needs --holdout holdout-2


def _repo(**labels) -> object:
    repo = real_apps.Repo(name="o/r", commit="a" * 40, split="dev", source="repos-t.toml")
    repo.defects = labels.get("defects", [])
    repo.near_misses = labels.get("near_misses", [])
    return repo


def test_a_rule_mapped_to_a_new_code_reports_its_defects():
    defect = real_apps.Defect(repo="o/r", path="a.py", line=3, code="NEW-x")
    run = real_apps.Run("ok", findings=[real_apps.Finding("a.py", 3, "DUP104"), real_apps.Finding("a.py", 3, "DUP105")])
    scored = real_apps.score_repo(_repo(defects=[defect]), run, {"NEW-x": ("DUP104",)})
    assert [s.outcome for s in scored.scored] == ["tp", "fp"]
    assert scored.found == [defect] and scored.missed == []


def test_two_findings_of_one_defect_are_two_true_positives_and_one_defect_found():
    defect = real_apps.Defect(repo="o/r", path="a.py", line=3, code="DUP102", also=(("b.py", 7),))
    run = real_apps.Run("ok", findings=[real_apps.Finding("a.py", 3, "DUP102"), real_apps.Finding("b.py", 7, "DUP102")])
    scored = real_apps.score_repo(_repo(defects=[defect]), run, {})
    assert scored.count("tp") == 2 and scored.found == [defect]


def test_a_verdict_cannot_overrule_a_label():
    defect = real_apps.Defect(repo="o/r", path="a.py", line=3, code="DUP102")
    trap = real_apps.NearMiss(path="a.py", line=9, looks_like="DUP101", why_fine="per request")
    run = real_apps.Run("ok", findings=[real_apps.Finding("a.py", 3, "DUP102"), real_apps.Finding("a.py", 9, "DUP101")])
    verdicts = [
        real_apps.Verdict("o/r", "a.py", 3, "DUP102", "false-positive", "disagrees with the label"),
        real_apps.Verdict("o/r", "a.py", 9, "DUP101", "defect", "disagrees with the near-miss"),
    ]
    scored = real_apps.score_repo(_repo(defects=[defect], near_misses=[trap]), run, {}, verdicts)
    assert [s.outcome for s in scored.scored] == ["tp", "fp"]
    assert len(scored.refused) == 2


@pytest.mark.parametrize(
    ("defect", "message"),
    [
        ('path = "a.py"\nline = 3\ncode = "DUP999"\nwhy = "w"', "unknown code 'DUP999'"),
        ('path = "a.py"\nline = 3\ncode = "DUP101"\nwhy = "w"\nlines = [4]', "unknown keys ['lines']"),
        ('path = "a.py"\nline = 3\ncode = "DUP101"\nwhy = "w"\nalso = ["a.py"]', '"path:line"'),
        ('path = "a.py"\nline = 0\ncode = "DUP101"\nwhy = "w"', "positive integer"),
        (
            (
                'path = "a.py"\nline = 3\ncode = "DUP101"\nwhy = "w"\n[[repo."o/r".defects]]\npath = "a.py"\nline = 3\n'
                'code = "DUP101"\nwhy = "again"'
            ),
            "labelled twice",
        ),
    ],
)
def test_malformed_labels_stop_the_run(tmp_path, defect, message):
    (tmp_path / "repos-x.toml").write_text(f'[repo."o/r"]\ncommit = "{"a" * 40}"\nsplit = "dev"\n')
    (tmp_path / "labels-x.toml").write_text(f'[[repo."o/r".defects]]\n{defect}\n')
    with pytest.raises(real_apps.LabelError, match=message.replace("[", r"\[").replace("]", r"\]")):
        real_apps.load_repos([tmp_path / "repos-x.toml"], {})


def test_a_repository_without_a_labels_table_stops_the_run(tmp_path, capsys):
    (tmp_path / "repos-x.toml").write_text(f'[repo."o/r"]\ncommit = "{"a" * 40}"\nsplit = "dev"\n')
    (tmp_path / "labels-x.toml").write_text("")
    (tmp_path / "codes.toml").write_text("")
    assert real_apps.main(["--repos", str(tmp_path / "repos-x.toml"), "--no-md"]) == 2
    assert "no [repo.'o/r'] table" in capsys.readouterr().err


def test_the_shipped_labels_load():
    """The committed label files follow the schema the script reads."""
    labels = ROOT / "bench" / "real-apps"
    codes = real_apps.load_codes(labels / "codes.toml")
    repos = real_apps.load_repos(sorted(labels.glob("repos-*.toml")), codes)
    assert len(repos) >= 40 and {r.split for r in repos} == {"dev", "holdout", "holdout-2", "holdout-3"}
    assert sum(r.split == "holdout-2" for r in repos) >= 15
    assert real_apps.load_triage(labels / "triage.toml")


def test_extract_writes_what_the_snapshot_has(tmp_path):
    """A snapshot without the content of one file: the rest is still extracted, the file is named."""
    commit = _mirror(tmp_path, "w", {"a.py": "x = 1\n", "big.bin": "data" * 100})
    git_dir = tmp_path / "w" / ".git"
    blob = _git("rev-parse", f"{commit}:big.bin", cwd=git_dir)
    (git_dir / "objects" / blob[:2] / blob[2:]).unlink()  # a fresh commit's objects are loose
    out = tmp_path / "out"
    out.mkdir()
    assert real_apps.extract(git_dir, commit, out) == ["big.bin"]
    assert (out / "a.py").read_text() == "x = 1\n"
    assert real_apps.find_git_dir(tmp_path, "w") == git_dir
