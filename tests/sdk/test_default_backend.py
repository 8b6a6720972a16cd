"""The SDK layer's default backend lives in a per-user directory (``SAGEMAKER_PLANS_LOCAL_HOME``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagemaker_plans_local.sdk.default_backend import (
    APP_DIRECTORY,
    ENDPOINT_VARIABLE,
    HOME_VARIABLE,
    default_backend_root,
    default_root,
)

ROOTS = """
import json
from sagemaker_plans_local import Session
from sagemaker_plans_local.sdk.default_backend import default_backend
session = Session()
session.boto_session.client("s3").create_bucket(Bucket="made-by-default")
print(json.dumps([str(default_backend().root), str(session.backend.root)]))
"""


def run_python(code: str, **env: str) -> str:
    """``code`` run by a new interpreter with ``env`` added; its output (exit 0 asserted)."""
    environment = {**os.environ, **env}
    environment.pop(ENDPOINT_VARIABLE, None)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=environment
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


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


def test_sessions_given_no_backend_keep_their_state_in_the_directory(tmp_path):
    home = tmp_path / "home"
    roots = json.loads(run_python(ROOTS, **{HOME_VARIABLE: str(home)}).splitlines()[-1])  # v2 logs first
    assert roots == [str(home / "default")] * 2
    assert (home / "default").is_dir() and any((home / "default").iterdir())
    assert home.stat().st_mode & 0o077 == 0  # made private to the user


def test_a_blank_variable_is_unset(monkeypatch, tmp_path):
    monkeypatch.setenv(HOME_VARIABLE, "  ")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    assert default_root() == tmp_path / APP_DIRECTORY


BUY = """
from sagemaker_plans_local.sdk.default_backend import default_backend
sm = default_backend().client("sagemaker")
offering = sm.search_training_plan_offerings(
    InstanceType="ml.p5.48xlarge", InstanceCount=1, DurationHours=24, TargetResources=["training-job"]
)["TrainingPlanOfferings"][0]
sm.create_training_plan(TrainingPlanName="kept-plan", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"])
"""
DESCRIBE = """
from sagemaker_plans_local import Session
session = Session()
print(session.sagemaker_client.describe_training_plan(TrainingPlanName="kept-plan")["TrainingPlanName"])
"""


def test_a_second_process_sees_the_first_ones_plan(tmp_path):
    home = str(tmp_path / "home")
    run_python(BUY, **{HOME_VARIABLE: home})
    assert run_python(DESCRIBE, **{HOME_VARIABLE: home}).splitlines()[-1] == "kept-plan"  # v2 logs first


def test_a_process_sees_the_plan_of_one_still_running(tmp_path):
    home = str(tmp_path / "home")
    first = subprocess.Popen(
        [sys.executable, "-c", BUY + "print('bought', flush=True)\ninput()\n"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, HOME_VARIABLE: home},
    )
    try:
        assert first.stdout.readline() == "bought\n"
        assert run_python(DESCRIBE, **{HOME_VARIABLE: home}).splitlines()[-1] == "kept-plan"
    finally:
        first.communicate("\n", timeout=120)
    assert first.returncode == 0
