"""when_imported: a patch runs right after a module's first import, or at once if it is imported."""

import importlib
import sys

from sagemaker_plans_local.sdk.post_import import when_imported


def test_a_module_imported_later_is_patched_right_after_it_executes(tmp_path, monkeypatch):
    (tmp_path / "late_module_for_patching.py").write_text("VALUE = 'original'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    when_imported("late_module_for_patching", lambda module: seen.append(module.VALUE))
    assert seen == []
    try:
        module = importlib.import_module("late_module_for_patching")
        assert seen == ["original"] and module.VALUE == "original"
        importlib.reload(module)
        assert seen == ["original"]  # once, not on every execution
    finally:
        sys.modules.pop("late_module_for_patching", None)


def test_an_imported_module_is_patched_at_once():
    seen = []
    when_imported("json", lambda module: seen.append(module.__name__))
    assert seen == ["json"]
