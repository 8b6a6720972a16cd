"""The v3 example (ModelTrainer) runs end to end (collected under SDK v3 only)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The examples are SDK scripts run by path (tests/sdk_split.py reads no further than this file).
pytestmark = pytest.mark.sdk


def test_v3_model_trainer_example_shows_the_seed_flow():
    env = dict(os.environ)
    env.pop("SAGEMAKER_PLANS_LOCAL", None)
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "v3_model_trainer.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    lines = out.splitlines()
    first = next(line for line in lines if line.startswith("my-training-job-") and "'Available'" in line)
    first_job = first.split()[0]
    assert any(line.startswith(first_job) and "'Reused'" in line for line in lines)
    assert any("'InUse'" in line for line in lines)
    assert any("'Terminated'" in line for line in lines)
    assert "s3://" in out and "/output/model.tar.gz" in out
    assert "telemetry" not in out.lower() + result.stderr.lower()
