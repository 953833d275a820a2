"""Tests for bench/precision.py: the scoring has to be right, or every figure it prints lies.

The linter's CLI is replaced by saved JSON reports (``--findings``) or a fake ``dupguard``
package put first on ``PYTHONPATH`` for the subprocess path, so these tests exercise the real
script end to end without depending on the rules being implemented.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "precision.py"


def _load():
    spec = importlib.util.spec_from_file_location("dupguard_bench_precision", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


precision = _load()

LABELS = {
    "dev/a.py": {"DUP101": [9], "DUP102": [8]},
    "dev/b.py": {"DUP301": [4, 4]},
    "dev/clean.py": {},
}


def test_exact_matches_are_true_positives():
    result = precision.score([("dev/a.py", "DUP101", 9), ("dev/a.py", "DUP102", 8)], {"dev/a.py": LABELS["dev/a.py"]})
    assert result.per_rule["DUP101"].tp == 1 and result.per_rule["DUP102"].tp == 1
    assert result.overall.precision == 1.0 and result.overall.recall == 1.0
    assert result.false_positives == [] and result.false_negatives == []


def test_wrong_row_wrong_code_and_clean_file_count_as_errors():
    findings = [
        {"file": "dev/a.py", "code": "DUP101", "row": 10},  # off by one: FP + FN
        {"file": "dev/a.py", "code": "DUP201", "row": 8},  # right row, wrong rule: FP
        {"file": "dev/clean.py", "code": "DUP101", "row": 3},
    ]
    result = precision.score(findings, LABELS)
    assert result.per_rule["DUP101"].tp == 0
    assert result.per_rule["DUP101"].fp == 2 and result.per_rule["DUP201"].fp == 1
    assert sorted(result.false_negatives) == [
        ("dev/a.py", "DUP101", 9),
        ("dev/a.py", "DUP102", 8),
        ("dev/b.py", "DUP301", 4),
        ("dev/b.py", "DUP301", 4),
    ]
    assert result.overall.tp == 0 and result.overall.fp == 3 and result.overall.fn == 4
    assert result.overall.precision == 0.0 and result.overall.recall == 0.0


def test_multiplicity_duplicate_reports_and_repeated_labels():
    # a row labelled twice needs two findings; a third report on it is a false positive
    result = precision.score([("dev/b.py", "DUP301", 4)] * 3, {"dev/b.py": LABELS["dev/b.py"]})
    c = result.per_rule["DUP301"]
    assert (c.tp, c.fp, c.fn) == (2, 1, 0)
    assert c.precision == pytest.approx(2 / 3) and c.recall == 1.0
    result = precision.score([("dev/b.py", "DUP301", 4)], {"dev/b.py": LABELS["dev/b.py"]})
    assert (result.per_rule["DUP301"].tp, result.per_rule["DUP301"].fn) == (1, 1)


def test_every_rule_has_a_row_and_empty_rules_have_undefined_ratios():
    from dupguard.rules import load

    assert precision.RULES == tuple(sorted(load()))  # the registry's codes, not a list kept by hand
    result = precision.score([], {"dev/clean.py": {}})
    assert set(precision.RULES) <= set(result.per_rule)
    assert result.overall.precision is None and result.overall.recall is None
    data = result.as_dict()
    assert data["overall"] == {"tp": 0, "fp": 0, "fn": 0, "precision": None, "recall": None}


def test_normalize_findings_relativizes_and_drops_non_rule_records(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "dev").mkdir(parents=True)
    raw = [
        {"code": "DUP101", "filename": str(corpus / "dev" / "a.py"), "location": {"row": 9, "column": 1}},
        {"code": "DUP102", "filename": "dev/a.py", "location": {"row": 8, "column": 1}},
        {"code": None, "filename": str(corpus / "dev" / "broken.py"), "location": {"row": 1, "column": 1}},
        {"code": "E999", "filename": str(corpus / "dev" / "a.py"), "location": {"row": 1, "column": 1}},
        {"code": "DUP101", "filename": str(tmp_path / "elsewhere.py"), "location": {"row": 1, "column": 1}},
    ]
    keys = precision.normalize_findings(raw, corpus, base_dir=corpus)
    assert keys == [("dev/a.py", "DUP101", 9), ("dev/a.py", "DUP102", 8)]
    with pytest.raises(ValueError):
        precision.normalize_findings({"not": "a list"}, corpus)


def _write_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    for split in ("dev", "holdout"):
        (corpus / split).mkdir(parents=True)
    (corpus / "dev" / "a.py").write_text("x = 1\n" * 10)
    (corpus / "dev" / "clean.py").write_text("y = 2\n")
    (corpus / "holdout" / "h.py").write_text("z = 3\n" * 5)
    (corpus / "labels.toml").write_text(
        textwrap.dedent("""\
        ["dev/a.py"]
        DUP101 = [9]
        DUP102 = [8]

        ["dev/clean.py"]

        ["holdout/h.py"]
        DUP505 = [2]
    """)
    )
    return corpus


def _run(*args, env=None):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env, timeout=60
    )


def test_cli_scores_saved_report_per_split_and_writes_json(tmp_path):
    corpus = _write_corpus(tmp_path)
    report = tmp_path / "findings.json"
    report.write_text(
        json.dumps(
            [
                {"code": "DUP101", "filename": "dev/a.py", "location": {"row": 9, "column": 1}},
                {"code": "DUP103", "filename": "dev/clean.py", "location": {"row": 1, "column": 5}},
                {"code": "DUP505", "filename": "holdout/h.py", "location": {"row": 2, "column": 1}},
            ]
        )
    )
    out = tmp_path / "figures.json"
    proc = _run("--corpus", corpus, "--split", "all", "--findings", report, "--json", out)
    assert proc.returncode == 0, proc.stderr
    assert "dev/clean.py:1: DUP103" in proc.stdout  # FP listed with file:line
    assert "dev/a.py:8: DUP102" in proc.stdout  # FN listed with file:line
    figures = json.loads(out.read_text())
    assert figures["splits"]["dev"]["overall"] == {"tp": 1, "fp": 1, "fn": 1, "precision": 0.5, "recall": 0.5}
    assert figures["splits"]["holdout"]["overall"]["tp"] == 1
    assert figures["all"]["overall"]["tp"] == 2 and figures["all"]["overall"]["fn"] == 1


def test_cli_thresholds_set_the_exit_status(tmp_path):
    corpus = _write_corpus(tmp_path)
    report = tmp_path / "findings.json"
    report.write_text(
        json.dumps(
            [
                {"code": "DUP101", "filename": "dev/a.py", "location": {"row": 9, "column": 1}},
            ]
        )
    )
    base = ("--corpus", corpus, "--split", "dev", "--findings", report)
    assert _run(*base).returncode == 0
    assert _run(*base, "--min-precision", "1.0").returncode == 0
    failed = _run(*base, "--min-recall", "0.9")
    assert failed.returncode == 1 and "recall 0.500 < 0.9" in failed.stderr


def test_cli_runs_the_linter_module_as_a_subprocess(tmp_path):
    """A fake ``dupguard`` package stands in for the CLI; checks argv, cwd and parsing."""
    corpus = _write_corpus(tmp_path)
    fake = tmp_path / "fake" / "dupguard"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    # the script takes the rule codes from the package it measures
    (fake / "rulemeta.py").write_text("def rule_codes():\n    return ('DUP101', 'DUP102', 'DUP103')\n")
    (fake / "__main__.py").write_text(
        textwrap.dedent("""\
        import json, os, sys
        args = sys.argv[1:]
        assert args[:6] == ["check", "--isolated", "--no-cache", "--output-format", "json", "--exit-zero"], args
        target = args[6]
        assert os.path.isabs(target) and os.getcwd() != os.path.dirname(target)
        print(json.dumps([{"code": "DUP101", "filename": os.path.join(target, "a.py"),
                           "location": {"row": 9, "column": 1}}]))
    """)
    )
    env = dict(os.environ, PYTHONPATH=str(fake.parent))
    proc = _run("--corpus", corpus, "--split", "dev", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "DUP101      1    0    0  1.000  1.000" in proc.stdout

    (fake / "__main__.py").write_text("import sys; sys.exit(3)\n")
    crashed = _run("--corpus", corpus, "--split", "dev", env=env)
    assert crashed.returncode == 2 and "exited 3" in crashed.stderr


def test_labels_file_shape_is_validated(tmp_path):
    bad = tmp_path / "labels.toml"
    bad.write_text('["dev/a.py"]\nDUP101 = [9, 3]\n')
    with pytest.raises(ValueError, match="sorted"):
        precision.load_labels(bad)
    bad.write_text('["dev/a.py"]\nE501 = [1]\n')
    with pytest.raises(ValueError, match="unknown key"):
        precision.load_labels(bad)


CORPUS = ROOT / "tests" / "corpus"


@pytest.mark.skipif(not (CORPUS / "labels.toml").exists(), reason="corpus not present")
def test_corpus_labels_match_the_files():
    """Every corpus file has a labels entry and every label points at a real, non-blank line.

    A label on a blank or comment line, or on a line past the end of the file, can never be
    matched and would silently lower recall; a file missing from labels.toml would turn every
    finding in it into a false positive.
    """
    labels = precision.load_labels(CORPUS / "labels.toml")
    for split in precision.SPLITS:
        if not (CORPUS / split).is_dir():
            continue
        files = precision.corpus_files(CORPUS, split)
        assert set(files) == set(precision.split_labels(labels, split)), split
    for rel, table in labels.items():
        lines = (CORPUS / rel).read_text(encoding="utf-8").splitlines()
        compile("\n".join(lines) + "\n", rel, "exec")
        for code, rows in table.items():
            assert code in precision.RULES, (rel, code)
            for row in rows:
                assert 1 <= row <= len(lines), (rel, code, row)
                text = lines[row - 1].strip()
                assert text and not text.startswith("#"), (rel, code, row, text)


def test_the_real_linter_sees_the_corpus_inside_this_repository():
    """The corpus lies under this repository's ``tests/``: run with the repository's own
    configuration, every file there is a test module and ``tests/corpus`` is excluded, and the
    script scored a silent linter (0 findings). ``run_dupguard`` runs the real CLI in isolation."""
    report = precision.run_dupguard(ROOT / "tests" / "corpus" / "dev")
    assert len(precision.normalize_findings(report, ROOT / "tests" / "corpus")) >= 20
