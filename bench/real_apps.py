#!/usr/bin/env python3
"""Precision and recall of dupguard on public agent applications labelled by hand.

Why this exists: the precision corpus (``bench/precision.py``) was written from the rule docs, so it
measures the rules on the code they were designed for. Real applications build the agent in one
module and serve it from another, behind hosts the rules never heard of (issue 14). The repositories
in ``bench/real-apps/repos-*.toml`` were labelled by reading them, before dupguard was run on them;
``bench/real-apps/README.md`` documents the label schema and the matching rule. This script is the
only thing that turns those labels into figures, and it never writes a label.

For each repository of the chosen split it finds the git snapshot under ``--mirrors`` (the search
tool's ``fetch`` puts one at ``<mirrors>/<owner>+<name>/…``; a plain ``git clone --bare`` works too),
extracts the labelled commit with ``git archive`` into a temporary directory, runs
``python -m dupguard check --no-cache --isolated --output-format json .`` there (``--isolated``: the
application's own configuration must not change the run), times it (wall and CPU seconds of the
process), and matches each finding to the labels:

* a finding is a **true positive** when a labelled defect of the same repository has its code (or one
  of the defect's ``alt_codes``, or a rule mapped to its ``NEW-`` name in ``codes.toml``) and names its
  place (``path:line``, or one of its ``also`` places);
* every other finding is a **false positive**, including a finding at a labelled near-miss (near-misses
  are precision traps: the label says the code is correct);
* a labelled defect no true positive names is **missed**.

``--triage FILE`` reads reviewers' verdicts on findings the labels do not cover. A finding a reviewer
confirms as a real defect counts as a true positive *added after review*: it is listed apart, the
figures are printed with and without it, and recall is always over the labelled defects only, so a
verdict cannot inflate what the labels measure. A verdict that contradicts a label (a "defect" at a
near-miss) is refused, and a verdict that matches no finding is reported as stale.

A holdout split is run only with ``--holdout [SPLIT]``, and only once: the script refuses when the report
already holds a block of that split (issue 14: "report that third's figures separately, measured once").
``--holdout`` alone runs the first holdout (split ``holdout``); ``--holdout holdout-2`` runs a later, fresh
holdout labelled after the first one was measured (``bench/real-apps/README.md``, "How holdout-2 was chosen").
Each holdout split has its own block and its own once-only guard, so measuring one never unlocks another.

Usage::

    python bench/real_apps.py [--holdout [SPLIT]] [--repo OWNER/NAME ...] [--triage FILE] [--name NAME]
                              [--mirrors DIR] [--json PATH] [--md PATH] [--no-md] [--rescore JSON]

Output: the figures on stdout, a JSON file (``--json``, default ``bench/real-apps/results/<name>.json``)
with every finding, and a generated block named ``<name>`` in ``bench/real-apps.md`` (per-code and
per-repository tables, every false positive with its message, the misses, the list of repositories
with their commits). ``--rescore`` scores the findings saved in a previous JSON again (after a label
or triage change) without running dupguard. Exit status: 0, or 2 when the labels, the triage file or
the options are wrong (nothing is measured).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
LABEL_DIR = ROOT / "bench" / "real-apps"
DEFAULT_MD = ROOT / "bench" / "real-apps.md"
DEFAULT_MIRRORS = Path("/work/.mirror")
# "dev", or a holdout: "holdout" (the first third) and "holdout-<name>" for each fresh holdout labelled later
HOLDOUT_SPLIT = re.compile(r"^holdout(-[a-z0-9]+)?$")
DUP_CODE = re.compile(r"^DUP\d{3}$")
# files dupguard could not check, reported under these codes (dupguard.diagnostics.RESERVED_CODES)
RESERVED_CODES = ("DUP000", "DUP001")
NEW_CODE = re.compile(r"^NEW-[a-z0-9-]+$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
PLACE = re.compile(r"^(?P<path>[^:]+):(?P<line>[1-9]\d*)$")
VERDICTS = ("defect", "false-positive")
DUPGUARD_ARGS = ("check", "--no-cache", "--isolated", "--output-format", "json")
BLOCK_RE = re.compile(
    r"<!-- BEGIN real_apps\.py name=(?P<name>[\w.-]+) split=(?P<split>[\w-]+) -->\n.*?"
    r"<!-- END real_apps\.py name=(?P=name) -->\n?",
    re.DOTALL,
)


class LabelError(ValueError):
    """The labels, the codes table or the triage file are malformed: nothing can be measured."""


# --------------------------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Defect:
    repo: str
    path: str
    line: int
    code: str
    alt_codes: tuple[str, ...] = ()
    also: tuple[tuple[str, int], ...] = ()
    why: str = ""
    confidence: str = ""

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line} {self.code}"

    @property
    def places(self) -> frozenset[tuple[str, int]]:
        return frozenset({(self.path, self.line), *self.also})


@dataclass(frozen=True)
class NearMiss:
    path: str
    line: int
    looks_like: str
    why_fine: str


@dataclass
class Repo:
    name: str
    commit: str
    split: str
    source: str  # the repos-*.toml file it comes from
    frameworks: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    python_files: int | None = None
    defects: list[Defect] = field(default_factory=list)
    near_misses: list[NearMiss] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    repo: str
    path: str
    line: int
    code: str
    verdict: str
    why: str
    reviewer: str = ""
    same_as: str = ""


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    code: str
    message: str = ""


@dataclass
class Run:
    """What running dupguard on one repository produced (or why it could not run)."""

    status: str  # ok | no-mirror | no-commit | failed | timeout
    findings: list[Finding] = field(default_factory=list)
    wall: float = 0.0
    cpu: float = 0.0
    files: int = 0
    errors: list[str] = field(default_factory=list)  # files dupguard could not process
    missing_label_paths: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # files of the commit whose content the snapshot lacks
    detail: str = ""


@dataclass
class Scored:
    """One finding with its verdict."""

    finding: Finding
    outcome: str  # tp | tp-review | fp
    defects: list[str] = field(default_factory=list)  # keys of the labelled defects it names
    note: str = ""


@dataclass
class RepoScore:
    repo: Repo
    run: Run
    scored: list[Scored] = field(default_factory=list)
    found: list[Defect] = field(default_factory=list)
    missed: list[Defect] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # triage verdicts that contradict a label

    def count(self, outcome: str, code: str | None = None) -> int:
        return sum(1 for s in self.scored if s.outcome == outcome and code in (None, s.finding.code))


# ------------------------------------------------------------------------------------------ loading


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LabelError(f"{path}: {exc}") from exc


def load_codes(path: Path) -> dict[str, tuple[str, ...]]:
    """The NEW-<name> codes of ``codes.toml`` and the rule codes that now report each."""
    data = _load_toml(path).get("new", {})
    codes: dict[str, tuple[str, ...]] = {}
    for name, table in data.items():
        rules = table.get("rules", [])
        if not NEW_CODE.match(name) or not isinstance(rules, list) or not all(DUP_CODE.match(str(r)) for r in rules):
            raise LabelError(f"{path}: [new.{name!r}] needs a NEW-<name> key and `rules` = a list of DUP codes")
        codes[name] = tuple(rules)
    return codes


def _known_rule_codes() -> frozenset[str]:
    from dupguard.rulemeta import rule_codes

    return frozenset(rule_codes())


def _check_code(code: Any, where: str, new_codes: dict[str, tuple[str, ...]], rules: frozenset[str]) -> str:
    if not isinstance(code, str) or not (code in rules or code in new_codes):
        raise LabelError(
            f"{where}: unknown code {code!r} (a rule code of `dupguard rules` or a NEW name of codes.toml)"
        )
    return code


def _place(text: Any, where: str) -> tuple[str, int]:
    match = PLACE.match(text) if isinstance(text, str) else None
    if not match:
        raise LabelError(f'{where}: `also` entries are "path:line" strings, got {text!r}')
    return match["path"], int(match["line"])


def _line(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise LabelError(f"{where}: `line` must be a positive integer, got {value!r}")
    return value


def _text(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise LabelError(f"{where}: `{key}` is required (a non-empty string)")
    return value


def load_repos(
    repo_files: Sequence[Path],
    new_codes: dict[str, tuple[str, ...]],
    rules: frozenset[str] | None = None,
) -> list[Repo]:
    """Every repository of ``repos-X.toml`` with the labels of the ``labels-X.toml`` beside it.

    Checks the schema of README.md: a repository without a labels table, labels for an unknown
    repository, an unknown code or a malformed place is an error, not a silent zero."""
    rules = _known_rule_codes() if rules is None else rules
    repos: list[Repo] = []
    seen: set[str] = set()
    for repo_file in repo_files:
        if not repo_file.name.startswith("repos-"):
            raise LabelError(f"{repo_file}: repository files are named repos-<labeller>.toml")
        labels_file = repo_file.with_name("labels-" + repo_file.name[len("repos-") :])
        listed = _load_toml(repo_file).get("repo", {})
        labelled = _load_toml(labels_file).get("repo", {})
        for name in sorted(set(labelled) - set(listed)):
            raise LabelError(f"{labels_file}: labels for {name!r}, which {repo_file.name} does not list")
        for name, meta in listed.items():
            where = f"{repo_file.name} [repo.{name!r}]"
            if name in seen:
                raise LabelError(f"{where}: listed twice")
            seen.add(name)
            if not isinstance(meta.get("commit"), str) or not COMMIT.match(meta["commit"]):
                raise LabelError(f"{where}: `commit` must be a 40-digit commit id")
            if not is_split(meta.get("split")):
                raise LabelError(f'{where}: `split` must be "dev", "holdout" or "holdout-<name>"')
            if name not in labelled:
                raise LabelError(
                    f"{labels_file.name}: no [repo.{name!r}] table (write one, even for a clean repository)"
                )
            table = labelled[name]
            repo = Repo(
                name=name,
                commit=meta["commit"],
                split=meta["split"],
                source=repo_file.name,
                frameworks=list(meta.get("frameworks", [])),
                hosts=list(meta.get("hosts", [])),
                python_files=meta.get("python_files"),
            )
            for i, d in enumerate(table.get("defects", [])):
                w = f"{labels_file.name} {name} defects[{i}]"
                repo.defects.append(
                    Defect(
                        repo=name,
                        path=_text(d.get("path"), w, "path"),
                        line=_line(d.get("line"), w),
                        code=_check_code(d.get("code"), w, new_codes, rules),
                        alt_codes=tuple(_check_code(c, w, new_codes, rules) for c in d.get("alt_codes", [])),
                        also=tuple(_place(p, w) for p in d.get("also", [])),
                        why=_text(d.get("why"), w, "why"),
                        confidence=str(d.get("confidence", "")),
                    )
                )
                unknown = set(d) - {"path", "line", "code", "alt_codes", "also", "why", "confidence"}
                if unknown:
                    raise LabelError(f"{w}: unknown keys {sorted(unknown)} (README.md lists the schema)")
                if [x.key for x in repo.defects].count(repo.defects[-1].key) > 1:
                    raise LabelError(f"{w}: {repo.defects[-1].key} is labelled twice")
            for i, n in enumerate(table.get("near_misses", [])):
                w = f"{labels_file.name} {name} near_misses[{i}]"
                repo.near_misses.append(
                    NearMiss(
                        path=_text(n.get("path"), w, "path"),
                        line=_line(n.get("line"), w),
                        looks_like=_text(n.get("looks_like"), w, "looks_like"),
                        why_fine=_text(n.get("why_fine"), w, "why_fine"),
                    )
                )
            repos.append(repo)
    return repos


def load_triage(path: Path) -> list[Verdict]:
    """Reviewers' verdicts: ``[[verdict]]`` tables (README.md, "Triage")."""
    verdicts = []
    for i, v in enumerate(_load_toml(path).get("verdict", [])):
        w = f"{path.name} verdict[{i}]"
        if v.get("verdict") not in VERDICTS:
            raise LabelError(f"{w}: `verdict` must be one of {VERDICTS}")
        code = v.get("code")
        if not isinstance(code, str) or not DUP_CODE.match(code):
            raise LabelError(f"{w}: `code` must be the finding's DUP code")
        verdicts.append(
            Verdict(
                repo=_text(v.get("repo"), w, "repo"),
                path=_text(v.get("path"), w, "path"),
                line=_line(v.get("line"), w),
                code=code,
                verdict=v["verdict"],
                why=_text(v.get("why"), w, "why"),
                reviewer=str(v.get("reviewer", "")),
                same_as=str(v.get("same_as", "")),
            )
        )
    return verdicts


# ----------------------------------------------------------------------------------------- matching


def accepted_codes(defect: Defect, new_codes: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """The finding codes that report ``defect``: its code, its alt_codes, and the rules mapped to any
    NEW name among them in codes.toml."""
    codes = {defect.code, *defect.alt_codes}
    return frozenset(codes | {rule for code in codes for rule in new_codes.get(code, ())})


def score_repo(
    repo: Repo,
    run: Run,
    new_codes: dict[str, tuple[str, ...]],
    verdicts: Iterable[Verdict] = (),
    used: set[Verdict] | None = None,
) -> RepoScore:
    """Match one repository's findings to its labels (module docstring: the rule), then apply the
    reviewers' verdicts to the findings the labels leave open. ``used`` collects the verdicts that
    applied, so that the caller can report the stale ones."""
    result = RepoScore(repo=repo, run=run)
    by_place: dict[tuple[str, int, str], Verdict] = {
        (v.path, v.line, v.code): v for v in verdicts if v.repo == repo.name
    }
    near = {(n.path, n.line): n for n in repo.near_misses}
    codes = {d.key: accepted_codes(d, new_codes) for d in repo.defects}
    found: set[str] = set()
    for finding in run.findings:
        place = (finding.path, finding.line)
        named = [d for d in repo.defects if finding.code in codes[d.key] and place in d.places]
        verdict = by_place.get((finding.path, finding.line, finding.code))
        if verdict is not None and used is not None:
            used.add(verdict)
        if named:
            found.update(d.key for d in named)
            result.scored.append(Scored(finding, "tp", [d.key for d in named], "labelled defect"))
            if verdict is not None and verdict.verdict != "defect":
                result.refused.append(
                    f"{finding.path}:{finding.line} {finding.code}: the labels call this a defect "
                    f"({', '.join(d.key for d in named)}); a reviewer's verdict cannot overrule a label, change the label"
                )
            continue
        trap = near.get(place)
        if trap is not None:
            if verdict is not None and verdict.verdict == "defect":
                result.refused.append(
                    f"{finding.path}:{finding.line} {finding.code}: the labels call this place a near-miss "
                    f"({trap.looks_like}); a reviewer's `defect` verdict cannot overrule a label, change the label"
                )
            result.scored.append(Scored(finding, "fp", note=f"at a labelled near-miss: {trap.why_fine}"))
        elif verdict is not None and verdict.verdict == "defect":
            note = f"added after review ({verdict.reviewer or 'reviewer'}): {verdict.why}"
            result.scored.append(Scored(finding, "tp-review", [verdict.same_as] if verdict.same_as else [], note))
        elif verdict is not None:
            result.scored.append(
                Scored(finding, "fp", note=f"reviewed ({verdict.reviewer or 'reviewer'}): {verdict.why}")
            )
        else:
            result.scored.append(Scored(finding, "fp", note="not triaged"))
    result.found = [d for d in repo.defects if d.key in found]
    result.missed = [d for d in repo.defects if d.key not in found]
    return result


# ------------------------------------------------------------------------------------------ running


def find_git_dir(mirrors: Path, name: str) -> Path | None:
    """The git directory of ``owner/name`` under ``mirrors``: ``<owner>+<name>`` holds it somewhere
    (the fetch tool's layout) or is it (a bare clone)."""
    base = mirrors / name.replace("/", "+")
    if not base.is_dir():
        return None
    for root, dirs, files in os.walk(base):
        if "HEAD" in files and "objects" in dirs:
            return Path(root)
    return None


def extract(git_dir: Path, commit: str, target: Path) -> list[str]:
    """Write the tree of ``commit`` into ``target``; return the paths whose content is absent.

    ``git archive | tar -x`` first. A snapshot may lack the content of its largest files (the fetch
    tool lists them but does not store them), and then ``git archive`` stops at the first one; the
    fallback writes every blob the snapshot has, one by one (``git cat-file --batch``), and names
    the rest, so that a missing image does not cost a whole repository."""
    git = ["git", "--git-dir", str(git_dir)]
    with tempfile.TemporaryFile() as errors:
        archive = subprocess.Popen([*git, "archive", commit], stdout=subprocess.PIPE, stderr=errors)
        tar = subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, capture_output=True)
        archive.stdout.close()  # type: ignore[union-attr]
        if archive.wait() == 0 and tar.returncode == 0:
            return []
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    entries = []
    for record in listing.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob" and mode != "120000":  # symlinks and submodules are not written
                entries.append((path, sha))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"], input="".join(f"{sha}\n" for _, sha in entries).encode(), capture_output=True
    ).stdout
    absent, pos = [], 0
    for path, _ in entries:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if len(header) != 3:  # "<sha> missing"
            absent.append(path)
            continue
        size = int(header[2])
        out = target / path
        if not out.resolve().is_relative_to(target.resolve()):
            raise ValueError(f"path outside the tree: {path!r}")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(batch[pos : pos + size])
        pos += size + 1
    return absent


def dupguard_home() -> Path:
    """The directory holding the ``dupguard`` package this script measures."""
    import dupguard

    return Path(dupguard.__file__).resolve().parent.parent


def _child_env() -> dict[str, str]:
    """The environment of the dupguard process: it runs inside the extracted tree, so a relative
    ``PYTHONPATH`` entry would point elsewhere (or at nothing) there; the package this script imports
    comes first, made absolute, so that the run measures the dupguard the report names."""
    paths = [str(dupguard_home())]
    paths += [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths), NO_COLOR="1")


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _findings(raw: Any, root: Path) -> list[Finding]:
    if not isinstance(raw, list):
        raise TypeError(f"expected a JSON list of findings, got {type(raw).__name__}")
    out = []
    for item in raw:
        if item["code"] in RESERVED_CODES:  # a file that could not be checked (stderr names it), not a finding
            continue
        path = Path(item["filename"])
        if path.is_absolute():
            path = path.resolve().relative_to(root)
        out.append(
            Finding(path.as_posix(), int(item["location"]["row"]), str(item["code"]), str(item.get("message", "")))
        )
    return out


def run_repo(repo: Repo, mirrors: Path, timeout: float, keep: Path | None = None) -> Run:
    """Extract ``repo`` at its commit and run dupguard on it from inside the extracted tree."""
    git_dir = find_git_dir(mirrors, repo.name)
    if git_dir is None:
        return Run(
            "no-mirror",
            detail=f"no snapshot under {mirrors / repo.name.replace('/', '+')}: fetch github:{repo.name} "
            f"(the search tool's fetch, or `git clone --bare https://github.com/{repo.name} <that dir>`)",
        )
    known = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", repo.commit + "^{commit}"], capture_output=True
    )
    if known.returncode != 0:
        return Run("no-commit", detail=f"{git_dir} has no commit {repo.commit}: fetch the repository again")
    holder = None
    if keep is not None:
        target = keep / repo.name.replace("/", "+")
        target.mkdir(parents=True, exist_ok=True)
        if any(target.iterdir()):
            return Run("failed", detail=f"{target} is not empty: --keep extracts into empty directories only")
    else:
        holder = tempfile.TemporaryDirectory(prefix="real-apps-")
        target = Path(holder.name)
    try:
        try:
            absent = extract(git_dir, repo.commit, target)
        except (OSError, ValueError) as exc:
            return Run("failed", detail=f"cannot extract {repo.commit} from {git_dir}: {exc}")
        root = target.resolve()
        run = Run("ok", files=sum(1 for _ in root.rglob("*.py")), absent=absent)
        labelled = {p for d in repo.defects for p, _ in d.places} | {n.path for n in repo.near_misses}
        run.missing_label_paths = sorted(p for p in labelled if not (root / p).is_file())
        cmd = [sys.executable, "-m", "dupguard", *DUPGUARD_ARGS, "."]
        cpu, wall = _cpu_children(), time.perf_counter()
        try:
            proc = subprocess.run(
                cmd,
                cwd=root,
                env=_child_env(),
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return Run("timeout", wall=time.perf_counter() - wall, detail=f"no result within {timeout:.0f} s")
        run.wall, run.cpu = time.perf_counter() - wall, _cpu_children() - cpu
        run.errors = [line for line in proc.stderr.splitlines() if line.strip()]
        try:
            if proc.returncode not in (0, 1):
                raise ValueError(f"exit status {proc.returncode}")
            run.findings = _findings(json.loads(proc.stdout), root)
        except (ValueError, KeyError, TypeError) as exc:
            run.status, run.detail = "failed", f"{exc}: {proc.stderr.strip()[-800:]}"
        return run
    finally:
        if holder is not None:
            holder.cleanup()


def run_from_saved(saved: dict[str, Any]) -> Run:
    """A :class:`Run` rebuilt from a repository entry of a previous JSON output (``--rescore``)."""
    run = saved["run"]
    return Run(
        status=run["status"],
        findings=[Finding(f["path"], f["line"], f["code"], f.get("message", "")) for f in saved["findings"]],
        wall=run["wall_s"],
        cpu=run["cpu_s"],
        files=run["files"],
        errors=run["errors"],
        missing_label_paths=run["missing_label_paths"],
        absent=run.get("absent", []),
        detail=run["detail"],
    )


# ----------------------------------------------------------------------------------------- figures


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def summarize(scores: Sequence[RepoScore], new_codes: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """Overall and per-code figures of the repositories that ran."""
    ran = [s for s in scores if s.run.status == "ok"]
    findings = sum(len(s.scored) for s in ran)
    tp = sum(s.count("tp") for s in ran)
    tp_review = sum(s.count("tp-review") for s in ran)
    defects = [d for s in ran for d in s.repo.defects]
    found = sum(len(s.found) for s in ran)
    ruled = [d for d in defects if DUP_CODE.match(d.code) or new_codes.get(d.code)]
    ruled_found = sum(1 for s in ran for d in s.found if d in ruled)
    per_code: dict[str, dict[str, Any]] = {}
    codes = sorted({x.finding.code for s in ran for x in s.scored} | {d.code for d in defects})
    for code in codes:
        n = sum(1 for s in ran for x in s.scored if x.finding.code == code)
        c_tp = sum(s.count("tp", code) for s in ran)
        c_review = sum(s.count("tp-review", code) for s in ran)
        c_defects = sum(1 for d in defects if d.code == code)
        c_found = sum(1 for s in ran for d in s.found if d.code == code)
        per_code[code] = {
            "findings": n,
            "tp": c_tp,
            "tp_added_after_review": c_review,
            "fp": n - c_tp - c_review,
            "precision": _ratio(c_tp, n),
            "precision_after_review": _ratio(c_tp + c_review, n),
            "defects": c_defects,
            "found": c_found,
            "missed": c_defects - c_found,
            "recall": _ratio(c_found, c_defects),
        }
    return {
        "repositories": len(scores),
        "ran": len(ran),
        "not_run": {s.repo.name: f"{s.run.status}: {s.run.detail}" for s in scores if s.run.status != "ok"},
        "findings": findings,
        "tp": tp,
        "tp_added_after_review": tp_review,
        "fp": findings - tp - tp_review,
        "precision": _ratio(tp, findings),
        "precision_after_review": _ratio(tp + tp_review, findings),
        "defects": len(defects),
        "found": found,
        "recall": _ratio(found, len(defects)),
        "defects_with_a_rule": len(ruled),
        "found_with_a_rule": ruled_found,
        "recall_with_a_rule": _ratio(ruled_found, len(ruled)),
        "wall_s": round(sum(s.run.wall for s in ran), 2),
        "cpu_s": round(sum(s.run.cpu for s in ran), 2),
        "per_code": per_code,
    }


def repo_dict(s: RepoScore) -> dict[str, Any]:
    return {
        "repo": s.repo.name,
        "commit": s.repo.commit,
        "split": s.repo.split,
        "run": {
            "status": s.run.status,
            "wall_s": round(s.run.wall, 3),
            "cpu_s": round(s.run.cpu, 3),
            "files": s.run.files,
            "errors": s.run.errors,
            "missing_label_paths": s.run.missing_label_paths,
            "absent": s.run.absent,
            "detail": s.run.detail,
        },
        "findings": [
            {
                "path": x.finding.path,
                "line": x.finding.line,
                "code": x.finding.code,
                "message": x.finding.message,
                "outcome": x.outcome,
                "defects": x.defects,
                "note": x.note,
            }
            for x in s.scored
        ],
        "tp": s.count("tp"),
        "tp_added_after_review": s.count("tp-review"),
        "fp": s.count("fp"),
        "defects": len(s.repo.defects),
        "found": [d.key for d in s.found],
        "missed": [d.key for d in s.missed],
        "refused_verdicts": s.refused,
    }


# -------------------------------------------------------------------------------------------- report


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _cell(text: str, limit: int = 400) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def markdown(name: str, split: str, result: dict[str, Any]) -> str:
    """The generated block of bench/real-apps.md for one run."""
    s = result["summary"]
    lines = [
        f"<!-- BEGIN real_apps.py name={name} split={split} -->",
        f"### {name} ({split} split)",
        "",
        (
            f"Generated by `{result['command']}` on {result['date']} (dupguard {result['dupguard']}); "
            f"labels: {', '.join(result['label_files'])}; triage: {result['triage'] or 'none'}."
        ),
        "",
        (
            f"**{s['ran']} repositories** (of {s['repositories']}): {s['findings']} findings, {s['tp']} TP, "
            f"{s['fp']} FP, {s['tp_added_after_review']} added after review; precision {_pct(s['precision'])} "
            f"(with review {_pct(s['precision_after_review'])}); recall {_pct(s['recall'])} "
            f"({s['found']}/{s['defects']} labelled defects; {s['found_with_a_rule']}/{s['defects_with_a_rule']} "
            f"= {_pct(s['recall_with_a_rule'])} of those whose code has a rule); dupguard time {s['wall_s']} s wall, "
            f"{s['cpu_s']} s CPU."
        ),
        "",
    ]
    for repo, why in s["not_run"].items():
        lines.append(f"- not run: `{repo}`: {_cell(why)}")
    if s["not_run"]:
        lines.append("")
    lines += [
        (
            "| code | findings | TP | added after review | FP | precision | with review | defects | found | missed "
            "| recall |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for code, c in s["per_code"].items():
        lines.append(
            f"| {code} | {c['findings']} | {c['tp']} | {c['tp_added_after_review']} | {c['fp']} | "
            f"{_pct(c['precision'])} | {_pct(c['precision_after_review'])} | {c['defects']} | {c['found']} | "
            f"{c['missed']} | {_pct(c['recall'])} |"
        )
    lines += [
        (
            f"| **all** | {s['findings']} | {s['tp']} | {s['tp_added_after_review']} | {s['fp']} | "
            f"{_pct(s['precision'])} | {_pct(s['precision_after_review'])} | {s['defects']} | {s['found']} | "
            f"{s['defects'] - s['found']} | {_pct(s['recall'])} |"
        ),
        "",
        (
            "| repository | commit | .py files | findings | TP | added after review | FP | defects | missed | "
            "wall s | CPU s | not processed |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["repositories"]:
        run = r["run"]
        if run["status"] != "ok":
            lines.append(f"| {r['repo']} | `{r['commit'][:10]}` | {run['status']} | | | | | {r['defects']} | | | | |")
            continue
        lines.append(
            f"| {r['repo']} | `{r['commit'][:10]}` | {run['files']} | {len(r['findings'])} | {r['tp']} | "
            f"{r['tp_added_after_review']} | {r['fp']} | {r['defects']} | {len(r['missed'])} | "
            f"{run['wall_s']:.2f} | {run['cpu_s']:.2f} | {len(run['errors'])} |"
        )
    sections = [
        ("False positives", "fp"),
        ("Added after review (not in the labels: a reviewer confirmed them later)", "tp-review"),
        ("True positives", "tp"),
    ]
    for title, outcome in sections:
        rows = [(r["repo"], f) for r in result["repositories"] for f in r["findings"] if f["outcome"] == outcome]
        lines += ["", f"#### {title} ({len(rows)})", ""]
        for repo, f in rows:
            extra = f" — labelled {', '.join(f['defects'])}" if outcome == "tp" else f" — {_cell(f['note'])}"
            lines.append(f"- `{repo}` `{f['path']}:{f['line']}` {f['code']}: {_cell(f['message'], 300)}{extra}")
    missed = [(r["repo"], k) for r in result["repositories"] if r["run"]["status"] == "ok" for k in r["missed"]]
    lines += ["", f"#### Labelled defects missed ({len(missed)})", ""]
    lines += [f"- `{repo}` {key}" for repo, key in missed]
    problems = [
        f"- `{r['repo']}`: {p}"
        for r in result["repositories"]
        for p in [
            *(f"verdict refused: {_cell(v)}" for v in r["refused_verdicts"]),
            *(f"label path not in the snapshot: `{p}`" for p in r["run"]["missing_label_paths"]),
            *(f"content absent from the snapshot (not linted): `{p}`" for p in r["run"]["absent"]),
            *(f"not processed: {_cell(e, 200)}" for e in r["run"]["errors"]),
        ]
    ] + [f"- stale triage verdict (no such finding): {v}" for v in result["stale_verdicts"]]
    if problems:
        lines += ["", "#### Checks", "", *problems]
    lines += ["", f"<!-- END real_apps.py name={name} -->", ""]
    return "\n".join(lines)


def repos_markdown(repos: Sequence[Repo]) -> str:
    """The generated list of every labelled repository, its split and commit (to repeat the run)."""
    counts = Counter(r.split for r in repos)
    splits = ", ".join(f"{counts[s]} {s}" for s in sorted(counts, key=lambda s: (s != "dev", s)))
    lines = [
        "<!-- BEGIN real_apps.py name=repositories split=all -->",
        f"{len(repos)} repositories: {splits}.",
        "",
        "| repository | split | commit | frameworks | hosts | labelled defects | near-misses | labels |",
        "|---|---|---|---|---|---:|---:|---|",
    ]
    for r in repos:
        lines.append(
            f"| [{r.name}](https://github.com/{r.name}/tree/{r.commit}) | {r.split} | `{r.commit}` | "
            f"{', '.join(r.frameworks)} | {', '.join(r.hosts)} | {len(r.defects)} | {len(r.near_misses)} | "
            f"{r.source.replace('repos-', 'labels-')} |"
        )
    lines += ["", "<!-- END real_apps.py name=repositories -->", ""]
    return "\n".join(lines)


def put_block(text: str, block: str) -> str:
    """``text`` with the generated block of the same name replaced, or appended when new."""
    name = re.search(r"name=([\w.-]+)", block)[1]  # type: ignore[index]
    for match in BLOCK_RE.finditer(text):
        if match["name"] == name:
            return text[: match.start()] + block + text[match.end() :]
    return text.rstrip("\n") + "\n\n" + block


def is_split(value: object) -> bool:
    """``dev``, or the name of a holdout split (``holdout``, ``holdout-2``...)."""
    return value == "dev" or (isinstance(value, str) and HOLDOUT_SPLIT.match(value) is not None)


def split_blocks(text: str, split: str) -> list[str]:
    """Names of the report's blocks that measured ``split``: a holdout split may have one, ever."""
    return [m["name"] for m in BLOCK_RE.finditer(text) if m["split"] == split]


# ---------------------------------------------------------------------------------------------- main


def _dupguard_version() -> str:
    """``<version> at <commit>`` of the dupguard this script measures (its checkout's HEAD)."""
    from dupguard import __version__

    home = str(dupguard_home())
    head = subprocess.run(["git", "-C", home, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", home, "status", "--porcelain", "."], capture_output=True, text=True)
    commit = head.stdout.strip() or "an unknown commit"
    return f"{__version__} at {commit}{' with uncommitted changes' if dirty.stdout.strip() else ''}"


def _how_to_run(split: str) -> str:
    """The option that selects ``split``, for the error messages."""
    return "the default" if split == "dev" else "--holdout" if split == "holdout" else f"--holdout {split}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", type=Path, nargs="+", help="repos-*.toml files (default: bench/real-apps/repos-*.toml)")
    ap.add_argument("--codes", type=Path, help="the NEW codes table (default: codes.toml beside the repos files)")
    ap.add_argument(
        "--holdout",
        nargs="?",
        const="holdout",
        metavar="SPLIT",
        help="run a holdout split instead of dev, once, at the end of a session: 'holdout' (the default) or a later one"
        " such as 'holdout-2'",
    )
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME", help="only these repositories")
    ap.add_argument("--triage", type=Path, metavar="FILE", help="reviewers' verdicts on findings the labels miss")
    ap.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help=f"snapshots (default {DEFAULT_MIRRORS})")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="extract into DIR/<owner+name> and keep the trees")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per repository (default 1800)")
    ap.add_argument("--name", help="name of the run and of its block in the report (default: the split)")
    ap.add_argument("--json", type=Path, help="JSON output (default bench/real-apps/results/<name>.json)")
    ap.add_argument("--md", type=Path, default=DEFAULT_MD, help=f"report to update (default {DEFAULT_MD})")
    ap.add_argument("--no-md", action="store_true", help="do not touch the report")
    ap.add_argument("--rescore", type=Path, metavar="JSON", help="score the findings of a previous JSON output again")
    args = ap.parse_args(argv)

    split = args.holdout or "dev"
    if args.holdout is not None and (split == "dev" or not is_split(split)):
        print(f"error: --holdout {split!r}: a holdout split is 'holdout' or 'holdout-<name>'", file=sys.stderr)
        return 2
    name = args.name or split
    if not re.match(r"^[\w.-]+$", name) or name == "repositories":
        print(f"error: --name {name!r}: letters, digits, '.', '-', '_' (and not 'repositories')", file=sys.stderr)
        return 2
    repo_files = args.repos or sorted(LABEL_DIR.glob("repos-*.toml"))
    try:
        new_codes = load_codes(args.codes or repo_files[0].with_name("codes.toml"))
        repos = load_repos(repo_files, new_codes)
        verdicts = load_triage(args.triage) if args.triage else []
    except (LabelError, IndexError) as exc:
        print(f"error: {exc or 'no repos-*.toml files'}", file=sys.stderr)
        return 2
    by_name = {r.name: r for r in repos}
    for wanted in args.repo:
        if wanted not in by_name:
            print(f"error: --repo {wanted}: not in {', '.join(str(f) for f in repo_files)}", file=sys.stderr)
            return 2
        if by_name[wanted].split != split:
            print(
                f"error: --repo {wanted} is in the {by_name[wanted].split} split ({_how_to_run(by_name[wanted].split)})",
                file=sys.stderr,
            )
            return 2
    chosen = [r for r in repos if r.split == split and (not args.repo or r.name in args.repo)]
    md_text = args.md.read_text(encoding="utf-8") if args.md.exists() else ""
    if args.holdout and not args.no_md and split_blocks(md_text, split):
        print(
            f"error: {args.md} already reports the {split} split ({', '.join(split_blocks(md_text, split))}); it is"
            " measured once (issue 14). Use --no-md to look without reporting.",
            file=sys.stderr,
        )
        return 2

    saved: dict[str, Any] = {}
    previous: dict[str, Any] = {}
    if args.rescore:
        try:
            previous = json.loads(args.rescore.read_text(encoding="utf-8"))
            if previous["split"] != split:
                raise ValueError(f"it holds the {previous['split']} split ({_how_to_run(previous['split'])})")
            saved = {r["repo"]: r for r in previous["repositories"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: --rescore {args.rescore}: {exc}", file=sys.stderr)
            return 2

    used: set[Verdict] = set()
    scores = []
    for repo in chosen:
        if args.rescore:
            if repo.name not in saved:
                run = Run("not-run", detail=f"not in {args.rescore}")
            elif saved[repo.name]["commit"] != repo.commit:
                run = Run("not-run", detail=f"{args.rescore} ran another commit ({saved[repo.name]['commit']})")
            else:
                run = run_from_saved(saved[repo.name])
        else:
            print(f"{repo.name} @ {repo.commit[:10]} …", end=" ", flush=True)
            run = run_repo(repo, args.mirrors, args.timeout, args.keep)
        s = score_repo(repo, run, new_codes, verdicts, used)
        scores.append(s)
        if args.rescore:
            pass
        elif run.status != "ok":
            print(f"{run.status}: {run.detail}", flush=True)
        else:
            print(
                f"{len(s.scored)} findings, {s.count('tp')} TP, {s.count('tp-review')} added after review, "
                f"{s.count('fp')} FP, {len(s.missed)}/{len(repo.defects)} missed, {run.wall:.1f} s",
                flush=True,
            )
    chosen_names = {r.name for r in chosen}
    stale = [
        f"{v.repo} {v.path}:{v.line} {v.code} ({v.verdict})"
        for v in verdicts
        if v not in used
        and v.repo in chosen_names
        and all(s.run.status == "ok" for s in scores if s.repo.name == v.repo)
    ]
    command = "python bench/real_apps.py" + "".join(
        f" {shlex.quote(a)}" for a in (argv if argv is not None else sys.argv[1:])
    )
    result: dict[str, Any] = {
        "name": name,
        "split": split,
        "date": datetime.date.today().isoformat(),
        # a rescore scores the saved run's findings: they are that dupguard's, not this checkout's
        "dupguard": previous.get("dupguard", "unknown") if args.rescore else _dupguard_version(),
        "dupguard_home": previous.get("dupguard_home", "") if args.rescore else str(dupguard_home()),
        "command": command,
        "dupguard_command": "python -m dupguard " + " ".join(DUPGUARD_ARGS) + " .",
        "label_files": [f.with_name("labels-" + f.name[len("repos-") :]).name for f in repo_files],
        "triage": args.triage.name if args.triage else None,
        "summary": summarize(scores, new_codes),
        "repositories": [repo_dict(s) for s in scores],
        "stale_verdicts": stale,
    }
    total = result["summary"]
    print(
        f"\n{name}: {total['ran']} repositories, {total['findings']} findings, {total['tp']} TP "
        f"(+{total['tp_added_after_review']} added after review), {total['fp']} FP, "
        f"precision {_pct(total['precision'])}, recall {_pct(total['recall'])} ({total['found']}/{total['defects']}), "
        f"{total['wall_s']} s wall"
    )
    for line in stale:
        print(f"warning: stale triage verdict (no such finding): {line}", file=sys.stderr)
    out = args.json or LABEL_DIR / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if not args.no_md:
        text = md_text or "# dupguard on real agent applications\n"
        text = put_block(put_block(text, repos_markdown(repos)), markdown(name, split, result))
        args.md.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
