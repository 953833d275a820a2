"""The skip-or-fail rule of the integration tests: skip where a framework is missing, except
under CI (``CI=true``), where the missing framework must fail the run."""

from __future__ import annotations

import pytest
from adapters_support import require


def test_missing_framework_skips_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        require("dupguard_no_such_framework")


def test_missing_framework_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require("dupguard_no_such_framework")


def test_installed_module_is_returned_in_both_modes(monkeypatch):
    for value in ("true", ""):
        monkeypatch.setenv("CI", value)
        assert require("json").dumps([1]) == "[1]"
