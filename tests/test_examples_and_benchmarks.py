"""The demo and the benchmark script keep running (no timing is asserted)."""

import runpy
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_warm_pool_example_shows_the_seed_flow(capsys):
    runpy.run_path(str(ROOT / "examples" / "warm_pools.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "'Status': 'Reused'" in out and "'ReusedByJob': 'my-training-job-2'" in out
    assert (
        "my-training-job-2: InProgress Starting     startup     -  WarmPoolStatus={'Status': 'InUse'}" in out
    )
    assert "startup    10 s" in out and "startup   180 s" in out
    assert "'Status': 'Terminated'" in out
    assert "jobs whose pool was reused: ['my-training-job-1']" in out


def test_benchmark_script_runs_quickly():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "describe_training_job" in result.stdout and "ratio pools/fresh" in result.stdout
    assert "repeated or after a change" in result.stdout  # section 3's verdict covers both
    assert "worst page ratio" in result.stdout and "per-job ratio" in result.stdout  # section 5
    assert "worst per-block cost" in result.stdout  # section 7
    assert "ours/plain (medians)" in result.stdout  # section 8


def test_training_plan_example_runs_the_whole_flow(capsys):
    runpy.run_path(str(ROOT / "examples" / "training_plan.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "tpo-" in out and "training-plan/llm-pretraining" in out
    for status in ("Pending", "Scheduled", "Active", "Expired"):
        assert f"llm-pretraining: {status}" in out
    assert "in-use=4 available=0" in out
    assert "pretrain-1: Completed / Completed" in out
