"""The suite's hypothesis settings never depend on the machine's speed (tests/conftest.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent


def test_the_loaded_profile_has_no_deadline_and_no_too_slow_check():
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_the_ci_profile_is_derandomized_without_a_database():
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None and ci.deadline is None
    assert HealthCheck.too_slow in ci.suppress_health_check


def _settings_calls():
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "settings":
                yield f"{path.relative_to(TESTS)}:{node.lineno}", {k.arg: k.value for k in node.keywords}


def _names(value: ast.expr) -> set[str]:
    return {n.attr for n in ast.walk(value) if isinstance(n, ast.Attribute)}


def test_no_test_sets_a_deadline_or_brings_the_too_slow_check_back():
    # An explicit suppress_health_check list replaces the profile's, so it must name too_slow too.
    offending = []
    for where, keywords in _settings_calls():
        deadline = keywords.get("deadline")
        if deadline is not None and not (isinstance(deadline, ast.Constant) and deadline.value is None):
            offending.append(f"{where} deadline")
        checks = keywords.get("suppress_health_check")
        if checks is not None and "too_slow" not in _names(checks):
            offending.append(f"{where} suppress_health_check without too_slow")
    assert offending == []


def test_the_walk_finds_the_suites_settings():
    assert sum(1 for _ in _settings_calls()) > 20
