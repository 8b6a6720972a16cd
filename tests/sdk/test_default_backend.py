"""The SDK layer's default backend lives in a per-user directory (``SAGEMAKER_PLANS_LOCAL_HOME``)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagemaker_plans_local.sdk.default_backend import (
    APP_DIRECTORY,
    HOME_VARIABLE,
    default_backend_root,
    default_root,
)


def test_the_suite_never_uses_the_real_per_user_directory():
    assert Path(os.environ[HOME_VARIABLE]).is_relative_to(Path(tempfile.gettempdir()))
    assert default_root() == Path(os.environ[HOME_VARIABLE])


NAMES = st.text(st.characters(whitelist_categories=("L", "N"), whitelist_characters="-_. "), min_size=1)


@given(names=st.lists(NAMES.filter(lambda name: name.strip(" .")), min_size=1, max_size=3))
def test_the_variable_names_the_directory(names):
    home = Path(tempfile.gettempdir(), *names)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HOME_VARIABLE, str(home))
        assert default_root() == home
        assert default_backend_root() == home / "default"


def test_a_relative_variable_is_made_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(HOME_VARIABLE, "state")
    assert default_root() == tmp_path / "state"


@pytest.mark.parametrize(
    "platform, variables, expected",
    [
        ("linux", {"XDG_DATA_HOME": "{tmp}/xdg"}, "{tmp}/xdg"),
        ("linux", {"XDG_DATA_HOME": "relative/ignored"}, "{home}/.local/share"),
        ("linux", {}, "{home}/.local/share"),
        ("darwin", {"XDG_DATA_HOME": "{tmp}/xdg"}, "{home}/Library/Application Support"),
        ("win32", {"LOCALAPPDATA": "{tmp}/local"}, "{tmp}/local"),
        ("win32", {}, "{home}/AppData/Local"),
    ],
)
def test_without_the_variable_it_is_the_platforms_per_user_data_directory(
    monkeypatch, tmp_path, platform, variables, expected
):
    home = tmp_path / "home"
    monkeypatch.delenv(HOME_VARIABLE)
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_DATA_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    monkeypatch.setattr(sys, "platform", platform)
    assert default_root() == Path(expected.format(tmp=tmp_path, home=home)) / APP_DIRECTORY


def test_a_blank_variable_is_unset(monkeypatch, tmp_path):
    monkeypatch.setenv(HOME_VARIABLE, "  ")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    assert default_root() == tmp_path / APP_DIRECTORY
