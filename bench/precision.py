#!/usr/bin/env python3
"""Score dupguard against the labelled corpus in ``tests/corpus``.

Why this exists: dupguard's first promise is precision (a linter that cries wolf gets
uninstalled), its second is recall.  The corpus was labelled from the rule definitions in
rules/*/doc.md, not from the implementation, so these figures are an honest measurement of the
rules as users will meet them.

Usage::

    python bench/precision.py [--corpus tests/corpus] [--split dev|holdout|all]
                              [--json out.json] [--findings findings.json]
                              [--min-precision 0.9] [--min-recall 0.6]

The linter is run as ``sys.executable -m dupguard check --no-cache --output-format json
--exit-zero <split dir>`` from a scratch working directory, so that the repository's own
``[tool.dupguard]`` (which excludes ``tests/corpus``) does not apply: the corpus measures the
default settings.  ``--findings`` scores a saved JSON report instead of running the linter.

A finding matches a label when (file relative to the corpus dir, code, row) are equal.  Labels
are multisets: a row listed twice expects two findings there.  Every unmatched finding is a
false positive, every unmatched label a false negative; both are listed with file:line.

Exit status: 0, unless ``--min-precision`` / ``--min-recall`` are given and missed (1), or the
linter could not be run or its output could not be read (2: there is nothing to score).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dupguard.rulemeta import rule_codes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

#: Every rule gets a row even with no labels or findings: the codes of the registry
#: (``dupguard.rulemeta``, generated from the ``@rule`` declarations).
RULES = rule_codes()
CODE_RE = re.compile(r"^DUP\d{3}$")
# files dupguard could not check, reported under these codes (dupguard.diagnostics.RESERVED_CODES)
RESERVED_CODES = ("DUP000", "DUP001")
SPLITS = ("dev", "holdout")
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"

Key = tuple[str, str, int]  # (file relative to the corpus dir, code, row)


@dataclass
class RuleCounts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    def as_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": self.precision, "recall": self.recall}


@dataclass
class Score:
    per_rule: dict[str, RuleCounts] = field(default_factory=dict)
    false_positives: list[Key] = field(default_factory=list)
    false_negatives: list[Key] = field(default_factory=list)

    @property
    def overall(self) -> RuleCounts:
        total = RuleCounts()
        for counts in self.per_rule.values():
            total.tp += counts.tp
            total.fp += counts.fp
            total.fn += counts.fn
        return total

    def as_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.as_dict(),
            "rules": {code: c.as_dict() for code, c in sorted(self.per_rule.items())},
            "false_positives": [{"file": f, "code": c, "row": r} for f, c, r in self.false_positives],
            "false_negatives": [{"file": f, "code": c, "row": r} for f, c, r in self.false_negatives],
        }


def _finding_key(finding: Any) -> Key:
    if isinstance(finding, Mapping):
        return (str(finding["file"]), str(finding["code"]), int(finding["row"]))
    file, code, row = finding
    return (str(file), str(code), int(row))


def expected_keys(labels: Mapping[str, Mapping[str, Iterable[int]]]) -> Counter[Key]:
    """Flatten ``{file: {code: [rows]}}`` into a multiset of (file, code, row)."""
    expected: Counter[Key] = Counter()
    for file, table in labels.items():
        for code, rows in table.items():
            for row in rows:
                expected[(file, code, int(row))] += 1
    return expected


def score(findings: Iterable[Any], labels: Mapping[str, Mapping[str, Iterable[int]]]) -> Score:
    """Compare findings with labels.

    ``findings``: (file, code, row) triples or mappings with ``file``/``code``/``row``, file
    relative to the corpus dir (see :func:`normalize_findings`).  ``labels``: ``{file: {code:
    [rows]}}`` restricted to the files that were linted.  Matching is exact on the triple and
    counts multiplicity, so a rule reporting the same line twice gets one TP and one FP.
    """
    found: Counter[Key] = Counter(_finding_key(f) for f in findings)
    expected = expected_keys(labels)
    result = Score(per_rule={code: RuleCounts() for code in RULES})
    for key in sorted(set(found) | set(expected)):
        code = key[1]
        counts = result.per_rule.setdefault(code, RuleCounts())
        hit = min(found[key], expected[key])
        counts.tp += hit
        extra, missing = found[key] - hit, expected[key] - hit
        counts.fp += extra
        counts.fn += missing
        result.false_positives.extend([key] * extra)
        result.false_negatives.extend([key] * missing)
    return result


def normalize_findings(raw: Any, corpus_dir: Path, base_dir: Path | None = None) -> list[Key]:
    """Turn the CLI's JSON (a list of ruff-shaped objects) into corpus-relative triples.

    ``filename`` may be absolute or relative to ``base_dir`` (the linter's working
    directory).  Objects whose code is not a ``DUPnnn`` code (e.g. a parse-error record) and
    files outside the corpus are dropped: they are not rule findings.
    """
    if not isinstance(raw, list):
        raise ValueError(f"expected a JSON list of findings, got {type(raw).__name__}")
    corpus_dir = corpus_dir.resolve()
    keys: list[Key] = []
    for item in raw:
        code = item.get("code") if isinstance(item, Mapping) else None
        if not isinstance(code, str) or not CODE_RE.match(code) or code in RESERVED_CODES:
            continue  # DUP000/DUP001: a file that could not be checked, not a rule's finding
        path = Path(item["filename"])
        if not path.is_absolute():
            path = (base_dir or Path.cwd()) / path
        try:
            rel = path.resolve().relative_to(corpus_dir).as_posix()
        except ValueError:
            continue
        keys.append((rel, code, int(item["location"]["row"])))
    return keys


def load_labels(path: Path) -> dict[str, dict[str, list[int]]]:
    """Read labels.toml and check its shape (rule codes, sorted integer row lists)."""
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    for file, table in data.items():
        if not isinstance(table, dict):
            raise ValueError(f"{path}: [{file!r}] must be a table")
        for code, rows in table.items():
            if not CODE_RE.match(code):
                raise ValueError(f"{path}: [{file!r}] unknown key {code!r}")
            if not isinstance(rows, list) or not all(isinstance(r, int) and r > 0 for r in rows):
                raise ValueError(f"{path}: [{file!r}] {code} must be a list of line numbers")
            if rows != sorted(rows):
                raise ValueError(f"{path}: [{file!r}] {code} rows must be sorted")
    return data


def split_labels(labels: Mapping[str, Any], split: str) -> dict[str, Any]:
    prefix = split + "/"
    return {f: t for f, t in labels.items() if f.startswith(prefix)}


def corpus_files(corpus_dir: Path, split: str) -> list[str]:
    root = corpus_dir / split
    return sorted(p.relative_to(corpus_dir).as_posix() for p in root.rglob("*.py"))


def run_dupguard(target: Path) -> Any:
    """Run the CLI on ``target`` from a scratch directory and return its parsed JSON."""
    cmd = [
        sys.executable,
        "-m",
        "dupguard",
        "check",
        # the corpus lies under this repository's tests/, which its own configuration (and the
        # test-module rule: files under tests/ are not served code) would leave out
        "--isolated",
        "--no-cache",
        "--output-format",
        "json",
        "--exit-zero",
        str(target.resolve()),
    ]
    with tempfile.TemporaryDirectory(prefix="dupguard-bench-") as scratch:
        env = dict(os.environ, NO_COLOR="1")
        proc = subprocess.run(cmd, cwd=scratch, capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(f"`{' '.join(cmd)}` exited {proc.returncode}\n{proc.stderr.strip()[-2000:]}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"dupguard did not print JSON ({exc}): {proc.stdout[:500]!r}") from exc


def _fmt(value: float | None) -> str:
    return "    -" if value is None else f"{value:5.3f}"


def _near(key: Key, pool: Iterable[Key], radius: int = 3) -> int | None:
    """Row of a same-file same-code entry within ``radius`` lines (an off-by-line hint)."""
    file, code, row = key
    rows = [r for f, c, r in pool if f == file and c == code and 0 < abs(r - row) <= radius]
    return min(rows, key=lambda r: abs(r - row)) if rows else None


def format_report(title: str, result: Score) -> str:
    lines = [f"== {title} ==", f"{'rule':8} {'TP':>4} {'FP':>4} {'FN':>4} {'prec':>6} {'recall':>6}"]
    for code in sorted(result.per_rule):
        c = result.per_rule[code]
        lines.append(f"{code:8} {c.tp:4d} {c.fp:4d} {c.fn:4d} {_fmt(c.precision):>6} {_fmt(c.recall):>6}")
    o = result.overall
    lines.append(f"{'overall':8} {o.tp:4d} {o.fp:4d} {o.fn:4d} {_fmt(o.precision):>6} {_fmt(o.recall):>6}")
    for name, keys, other in (
        ("false positives", result.false_positives, result.false_negatives),
        ("false negatives", result.false_negatives, result.false_positives),
    ):
        lines.append(f"-- {name} ({len(keys)})")
        for key in sorted(keys, key=lambda k: (k[0], k[2], k[1])):
            near = _near(key, other)
            hint = f"  (unmatched {key[1]} at line {near})" if near else ""
            lines.append(f"  {key[0]}:{key[2]}: {key[1]}{hint}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="dev")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the figures as JSON")
    parser.add_argument(
        "--findings",
        type=Path,
        metavar="PATH",
        help="score this saved `dupguard check --output-format json` report "
        "(filenames absolute or relative to the corpus dir) instead of running the linter",
    )
    parser.add_argument("--min-precision", type=float)
    parser.add_argument("--min-recall", type=float)
    args = parser.parse_args(argv)

    corpus = args.corpus.resolve()
    try:
        labels = load_labels(corpus / "labels.toml")
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        print(f"error: cannot read labels: {exc}", file=sys.stderr)
        return 2
    splits = [s for s in SPLITS if (corpus / s).is_dir()] if args.split == "all" else [args.split]
    if not splits or not all((corpus / s).is_dir() for s in splits):
        print(f"error: no split folder {args.split!r} under {corpus}", file=sys.stderr)
        return 2

    saved = None
    if args.findings:
        try:
            saved = normalize_findings(json.loads(args.findings.read_text()), corpus, base_dir=corpus)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: cannot read {args.findings}: {exc}", file=sys.stderr)
            return 2

    all_findings: list[Key] = []
    all_labels: dict[str, Any] = {}
    figures: dict[str, Any] = {"splits": {}}
    for split in splits:
        files = corpus_files(corpus, split)
        wanted = split_labels(labels, split)
        for f in sorted(set(files) - set(wanted)):
            print(f"warning: {f} has no entry in labels.toml (scored as clean)", file=sys.stderr)
        for f in sorted(set(wanted) - set(files)):
            print(f"warning: labels.toml names {f}, which does not exist", file=sys.stderr)
        if saved is not None:
            findings = [k for k in saved if k[0].startswith(split + "/")]
        else:
            try:
                findings = normalize_findings(run_dupguard(corpus / split), corpus)
            except (RuntimeError, ValueError, KeyError, TypeError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
        result = score(findings, wanted)
        print(format_report(f"{split} ({len(files)} files)", result))
        print()
        figures["splits"][split] = {"files": len(files), **result.as_dict()}
        all_findings += findings
        all_labels.update(wanted)

    total = score(all_findings, all_labels)
    if len(splits) > 1:
        print(format_report("all splits", total))
        figures["all"] = total.as_dict()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")

    overall = total.overall
    failed = []
    if (
        args.min_precision is not None and overall.precision is not None and overall.precision < args.min_precision
    ):  # no findings at all: nothing to be wrong
        failed.append(f"precision {_fmt(overall.precision).strip()} < {args.min_precision}")
    if args.min_recall is not None and (overall.recall or 0.0) < args.min_recall:
        failed.append(f"recall {_fmt(overall.recall).strip()} < {args.min_recall}")
    if failed:
        print("FAILED: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
