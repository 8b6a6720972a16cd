"""The v2 examples (Estimator) keep running end to end (collected under SDK v2 only)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The examples are SDK scripts run by path (tests/sdk_split.py reads no further than this file).
pytestmark = pytest.mark.sdk


def run_example(name):
    env = {**os.environ, "SAGEMAKER_SUPPRESS_V2_WARNING": "1"}
    env.pop("SAGEMAKER_PLANS_LOCAL", None)
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)], capture_output=True, text=True, timeout=300, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_seed_warm_pool_estimator_example():
    out = run_example("seed_warm_pool_estimator.py")
    assert "my-training-job-1: {'Status': 'Available'}" in out
    assert "'Status': 'Reused'" in out and "'ReusedByJob': 'my-training-job-2'" in out
    assert "my-training-job-2: {'Status': 'InUse'}" in out
    assert "run #2 on this warm pool" in out  # the persistent cache survived job 1
    assert "my-training-job-2: {'Status': 'Terminated'" in out


def test_training_plan_estimator_example():
    out = run_example("training_plan_estimator.py")
    assert "payment settled -> Scheduled" in out
    assert "Pending - Waiting for compute capacity from the training plan" in out
    assert "Completed on arn:aws:sagemaker:us-east-1:123456789012:training-plan/estimator-plan" in out
