"""The documented seed flows give the same numbers through the simulator as through the API by hand.

1. The warm-pool flow of examples/warm_pools.py (docs/cost-report.md, "The seed's warm-pool flow"): job 1
   keeps an 1800 s pool that job 2 reuses 25 minutes after job 1 was created.
2. The two-block plan of examples/timeline_picture.py: 2 x ml.p5.48xlarge for 48 h in two one-day blocks;
   a 4-hour job waits for the first block, a 3-hour job started two hours before its end is interrupted at
   the cutoff and resumes in the second block.
"""

from __future__ import annotations

import runpy
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.inspection.cost import cost_report
from sagemaker_plans_local.inspection.snapshot import Snapshot
from sagemaker_plans_local.simulation.capacity import capacity_blocks
from sagemaker_plans_local.simulation.simulator import simulate
from sagemaker_plans_local.simulation.workload import from_rows

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
P5 = "ml.p5.48xlarge"
DAY = datetime(2026, 1, 1, 11, 30, tzinfo=timezone.utc)
BLOCKS = [(P5, 2, "us-east-1a", DAY + timedelta(days=2), DAY + timedelta(days=3))]
BLOCKS.append((P5, 2, "us-east-1b", DAY + timedelta(days=5), DAY + timedelta(days=6)))


def by_hand_figures(snapshot: Snapshot) -> dict[str, Any]:
    """What the simulator reports, worked out from the API's answers and the cost report directly."""
    report = cost_report(snapshot)
    jobs = {}
    for job in snapshot.jobs:
        transitions = job["SecondaryStatusTransitions"]
        jobs[job["TrainingJobName"]] = {
            "training": job["BillableTimeInSeconds"],
            "wait": sum(
                (t["EndTime"] - t["StartTime"]).total_seconds()
                for t in transitions
                if t["Status"] == "Pending"
            ),
            "provisioning": sum(
                (t["EndTime"] - t["StartTime"]).total_seconds()
                for t in transitions
                if t["Status"] == "Starting"
            ),
            "ended": job["TrainingEndTime"],
        }
    return {"total": report.total, "warm_starts": len(report.savings.warm_starts), "jobs": jobs}


def simulated_figures(result) -> dict[str, Any]:
    return {
        "total": result.total,
        "warm_starts": result.warm_starts,
        "jobs": {
            job.name: {
                "training": job.training_seconds,
                "wait": job.wait_seconds,
                "provisioning": job.provisioning_seconds,
                "ended": job.ended,
            }
            for job in result.jobs
        },
    }


def test_the_warm_pool_seed_flow():
    training_job = runpy.run_path(str(EXAMPLES / "warm_pools.py"))["training_job"]
    start = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
    with LocalBackend(start_time=start) as backend:
        sm = backend.client()
        sm.create_training_job(**training_job("my-training-job-1", epochs=1))
        backend.clock.advance(25 * 60)
        sm.create_training_job(**training_job("my-training-job-2", epochs=2))
        backend.run_until_idle()
        by_hand = by_hand_figures(Snapshot.collect(sm, backend.clock.now()))
    row = {
        "instance_type": "ml.g4dn.xlarge",
        "instance_count": 1,
        "run_seconds": 600,
        "keep_alive_seconds": 1800,
    }
    workload = from_rows(
        [
            {**row, "submit_time": start.isoformat(), "name": "my-training-job-1"},
            {**row, "submit_time": (start + timedelta(minutes=25)).isoformat(), "name": "my-training-job-2"},
        ]
    )
    result = simulate(workload, ["as-is"], workers=1).results[0]
    assert simulated_figures(result) == by_hand
    assert by_hand["warm_starts"] == 1 and by_hand["jobs"]["my-training-job-2"]["provisioning"] == 10
    assert result.warm_pool == by_hand["total"] - result.training  # 720 s + 1800 s of pool


def test_the_two_block_plan_seed_flow():
    plan_job = runpy.run_path(str(EXAMPLES / "timeline_picture.py"))["plan_job"]
    with LocalBackend(start_time=datetime(2026, 1, 1, tzinfo=timezone.utc)) as backend:
        sm = backend.client()
        backend.capacity.clear()
        for block in BLOCKS:
            backend.capacity.add(*block)
        offering = sm.search_training_plan_offerings(
            InstanceType=P5, InstanceCount=2, DurationHours=48, TargetResources=["training-job"]
        )["TrainingPlanOfferings"][0]
        plan = sm.create_training_plan(
            TrainingPlanName="pretraining", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )["TrainingPlanArn"]
        backend.clock.advance(timedelta(days=1))
        backend.script_job("warm-up", runtime_seconds=4 * 3600)
        sm.create_training_job(**plan_job("warm-up", plan, count=1))
        backend.script_job("pretrain", runtime_seconds=3 * 3600)
        backend.clock.advance(DAY + timedelta(days=3, hours=-2) - backend.clock.now())
        sm.create_training_job(**plan_job("pretrain", plan, count=2))
        backend.run_until_idle()
        by_hand = by_hand_figures(Snapshot.collect(sm, backend.clock.now()))
    workload = from_rows(
        [
            {"submit_time": "2026-01-02T00:00:00Z", "name": "warm-up", "instance_type": P5, "instance_count": 1,
             "run_seconds": 4 * 3600},
            {"submit_time": (DAY + timedelta(days=3, hours=-2)).isoformat(), "name": "pretrain", "instance_type": P5,
             "instance_count": 2, "run_seconds": 3 * 3600},
        ]
    )  # fmt: skip
    capacity = capacity_blocks(
        [
            {
                "instance_type": t,
                "instance_count": n,
                "availability_zone": az,
                "start": s.isoformat(),
                "end": e.isoformat(),
            }
            for t, n, az, s, e in BLOCKS
        ]
    )
    result = simulate(workload, [f"plan={P5}:2:48"], capacity=capacity, workers=1).results[0]
    assert simulated_figures(result) == by_hand
    assert result.plan_fees == by_hand["total"] == result.total  # the plan's fee, 5283.84, and nothing more
    pretrain = by_hand["jobs"]["pretrain"]
    assert pretrain["training"] == 3 * 3600 and pretrain["wait"] > 2 * 86400  # interrupted, resumed 3 days on
