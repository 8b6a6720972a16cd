"""The demo and the benchmark script keep running (no timing is asserted)."""

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

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


#: The sections whose code differs by SDK major (4: v2's Estimator.fit(); 6: v3's
#: ModelTrainer.train(); 8: the README's fit() in v2); the others do not import the SDK.
SDK_SECTIONS = ("fit", "train", "startup")
SECTIONS = (
    "throughput",
    "pools",
    "search",
    "lists",
    "capacity",
    "server",
    "multinode",
    "simulate",
    "engine",
    "accounts",
    *SDK_SECTIONS,
)


def run_quick_benchmarks(*sections):
    """``benchmarks/run.py --quick`` with only ``sections``; its output (exit 0 asserted)."""
    skips = [f"--skip-{name}" for name in SECTIONS if name not in sections]
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", *skips],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_benchmark_quick_mode_runs_the_sections_without_the_sdk():
    out = run_quick_benchmarks(*(name for name in SECTIONS if name not in SDK_SECTIONS))
    assert "describe_training_job" in out and "ratio pools/fresh" in out
    assert "repeated or after a change" in out  # section 3's verdict covers both
    assert "worst page ratio" in out and "per-job ratio" in out  # section 5
    assert "worst per-block cost" in out  # section 7
    assert "calls/CPU s" in out  # section 9: our server (and moto's, where it can run)
    assert "sweep of 8 policies" in out and "per-job CPU" in out  # section 13
    assert "burst ms/create" in out and "close() s" in out and "ours/Stubber speed" in out  # section 14
    assert "one ListTrainingJobs each" in out and "idle <= 300 MB" in out  # section 15


def test_what_if_example_prints_the_comparison_and_draws_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["what_if.py", str(tmp_path / "what-if.png")])
    runpy.run_path(str(ROOT / "examples" / "what_if.py"), run_name="__main__")
    out = capsys.readouterr().out
    for policy in (
        "on-demand",
        "as-is",
        "keep-alive=1800",
        "plan=ml.p5.48xlarge:2:48+keep-alive=600+overflow",
    ):
        assert f"\n{policy} " in out
    assert "cheapest: on-demand" in out and (tmp_path / "what-if.png").stat().st_size > 10_000


@pytest.mark.sdk
def test_benchmark_quick_mode_runs_the_sdk_sections():
    from sagemaker_plans_local.sdk.major import sdk_major

    out = run_quick_benchmarks(*SDK_SECTIONS)
    assert "ours/plain (medians)" in out  # section 8 (a)
    if sdk_major() == 2:
        assert "later fit()s median" in out and "warm/cold (medians)" in out  # section 4
        assert "later fit()/script" in out  # section 8 (b)
    else:
        assert "later train()s median" in out  # section 6


def test_training_plan_example_runs_the_whole_flow(capsys):
    runpy.run_path(str(ROOT / "examples" / "training_plan.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "tpo-" in out and "training-plan/llm-pretraining" in out
    for status in ("Pending", "Scheduled", "Active", "Expired"):
        assert f"llm-pretraining: {status}" in out
    assert "in-use=4 available=0" in out
    assert "pretrain-1: Completed / Completed" in out
