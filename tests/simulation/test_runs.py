"""How the runner submits: plans, overflow to on demand, dependencies, refusals, processes, progress, roots."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.simulation.capacity import capacity_blocks
from sagemaker_plans_local.simulation.policies import parse_policy
from sagemaker_plans_local.simulation.runner import SimulationError
from sagemaker_plans_local.simulation.simulator import run_policy, simulate
from sagemaker_plans_local.simulation.workload import from_root, from_rows
from tests.conftest import create_request

START = datetime(2026, 1, 5, 11, 30, tzinfo=timezone.utc)
P5 = "ml.p5.48xlarge"
ONE_DAY = capacity_blocks(
    [{"instance_type": P5, "instance_count": 1, "availability_zone": "us-east-1a", "start": 0, "end": 86400}]
)


def row(name, submit, run, instance_type=P5, **extra):
    return {"submit_time": submit, "name": name, "instance_type": instance_type, "instance_count": 1,
            "run_seconds": run, **extra}  # fmt: skip


WORKLOAD = from_rows(
    [
        row("a", 0, 7200),
        row("b", 0, 3600, max_pending_seconds=1800),  # waits behind a on the plan's one instance
        row("late", 2 * 86400, 600),  # after the plan has expired
        row("then", 0, 600, "ml.g5.xlarge", after="a"),
    ],
    start=START,
)


def jobs_of(result):
    return {job.name: job for job in result.jobs}


def test_overflow_runs_on_demand_what_the_plan_cannot():
    result = run_policy(WORKLOAD, parse_policy(f"plan={P5}:1:24+overflow"), capacity=ONE_DAY)
    jobs = jobs_of(result)
    assert jobs["b"].attempts == ("b", "b-od") and jobs["b"].overflowed and jobs["b"].outcome == "Completed"
    assert (
        jobs["b"].wait_seconds == 1800
    )  # pending on the plan until its MaxPendingTime, then on demand at once
    assert jobs["b"].ended == START + timedelta(seconds=1800 + 180 + 3600)
    assert jobs["late"].attempts == ("late-od",) and jobs["late"].overflowed  # the expired plan refused it
    on_demand = Decimal("113.068") * (3600 + 600) / 3600
    assert jobs["b"].cost + jobs["late"].cost == on_demand.quantize(Decimal("0.01")) and jobs["a"].cost == 0
    assert result.completed == 4 and result.to_json()["overflowed"] == 2
    assert result.plan_utilization == round(7200 / 86400, 4)  # b's on-demand run is not on the plan


def test_without_overflow_the_plan_alone_decides():
    jobs = jobs_of(run_policy(WORKLOAD, parse_policy(f"plan={P5}:1:24"), capacity=ONE_DAY))
    assert (jobs["b"].outcome, jobs["b"].reason) == (
        "Stopped",
        "Training job stopped: the maximum allowed pending time was exceeded",
    )
    assert jobs["late"].outcome == "Refused" and jobs["late"].reason.startswith("ValidationException: ")
    assert jobs["late"].attempts == () and jobs["late"].cost == 0


def test_a_dependent_job_is_submitted_when_its_dependency_completes():
    jobs = jobs_of(run_policy(WORKLOAD, parse_policy("on-demand")))
    assert jobs["a"].ended == START + timedelta(seconds=180 + 7200)
    assert jobs["then"].submitted == jobs["a"].ended  # to the second, not at its own submit time 0


def test_a_dependency_that_does_not_complete_leaves_its_dependents_unrun():
    workload = from_rows(
        [
            row("a", 0, 7200),
            row("b", 0, 3600, max_pending_seconds=1800),  # stopped: a holds the plan's one instance
            row("x", 0, 60, after="b"),
            row("y", 0, 60, after="x"),
        ],
        start=START,
    )
    result = run_policy(workload, parse_policy(f"plan={P5}:1:24"), capacity=ONE_DAY)
    jobs = jobs_of(result)
    assert jobs["b"].outcome == "Stopped"
    assert (jobs["x"].outcome, jobs["x"].reason) == ("NotRun", "b did not complete")
    assert (jobs["y"].outcome, jobs["y"].reason) == ("NotRun", "b did not complete")
    assert result.failed == 3 and result.outcomes()["NotRun: b did not complete"] == 2


def test_a_plan_nobody_offers_is_an_error_naming_the_policy():
    empty = capacity_blocks(
        [{"instance_type": "ml.g5.xlarge", "instance_count": 1, "availability_zone": "us-east-1a", "start": 0,
          "end": 86400}]
    )  # fmt: skip
    with pytest.raises(SimulationError, match=f"plan={P5}:8:24: no training plan offering for 8 x {P5}"):
        simulate(WORKLOAD, [f"plan={P5}:8:24"], capacity=empty, workers=1)


def test_processes_give_what_one_process_gives_and_report_progress():
    policies = ["on-demand", "keep-alive=600", f"plan={P5}:1:24+overflow"]
    seen = []
    alone = simulate(WORKLOAD, policies, capacity=ONE_DAY, workers=1, progress=lambda *a: seen.append(a))
    spread = simulate(WORKLOAD, policies, capacity=ONE_DAY, workers=2, progress=lambda *a: seen.append(a))
    assert alone.to_json() == spread.to_json()
    assert ("on-demand", 4, 4) in seen and (f"plan={P5}:1:24+overflow", 4, 4) in seen


def test_the_jobs_a_root_holds(tmp_path):
    with LocalBackend(start_time=START, root=tmp_path / "root") as backend:
        sm = backend.client()
        sm.create_training_job(**create_request("first"))
        backend.clock.advance(3600)
        sm.create_training_job(**create_request("second"))
        backend.run_until_idle()
    workload = from_root(tmp_path / "root")
    assert [(job.name, job.submit_seconds, job.run_seconds) for job in workload.jobs] == [
        ("first", 0, 600),
        ("second", 3600, 600),
    ]
    assert workload.start == START


def test_retiring_ended_jobs_on_the_way_changes_no_answer(monkeypatch):
    from sagemaker_plans_local.simulation import runner

    rows = [
        row(f"j{i}", i * 3 * 3600, 600 + 60 * i, "ml.g5.xlarge", keep_alive_seconds=1800) for i in range(12)
    ]
    rows += [row("p", 0, 3600, max_pending_seconds=1800), row("q", 600, 3600, after="j1")]
    workload = from_rows(rows, start=START)
    policies = ["as-is", f"plan={P5}:1:24+overflow"]
    monkeypatch.setattr(runner, "RETIRE_EVERY", 10**9)
    kept = simulate(workload, policies, capacity=ONE_DAY, workers=1).to_json()
    retired = []
    monkeypatch.setattr(runner, "RETIRE_EVERY", 2)
    monkeypatch.setattr(runner.Run, "_retire", _counting(runner.Run._retire, retired))
    assert simulate(workload, policies, capacity=ONE_DAY, workers=1).to_json() == kept
    assert sum(retired) > 10  # most jobs were read and deleted before the end


def _counting(retire, counts):
    def wrapped(self):
        before = len(self.out.retired)
        retire(self)
        counts.append(len(self.out.retired) - before)

    return wrapped


def test_a_run_collects_garbage_less_often_and_leaves_the_collector_as_it_was():
    import gc

    thresholds, seen = gc.get_threshold(), []
    simulate(WORKLOAD, ["on-demand"], workers=1, progress=lambda *_: seen.append(gc.get_threshold()[0]))
    assert seen and set(seen) == {50_000}  # during the run
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0
