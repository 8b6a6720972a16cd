"""A small simulation recomputed by hand: three jobs, one plan, one warm pool, to the cent and the second.

By hand, from the documented rules (docs/behaviours.md, docs/training-plans.md, docs/cost-report.md):
the capacity file offers 1 x ml.p5.48xlarge for the day after the workload's start, so the 24-hour
plan's one block is that day (fee 55.04 x 1 x 24 = 1320.96, data/plan_prices.json). ``big`` waits
Pending for the block (86,400 s), starts cold (180 s) and trains 3,600 s: it ends at 90,180 s.
``warm`` starts cold (180 s), trains 600 s (0.736 $/h: 0.1227 -> 0.12) and keeps its pool from 780 s;
``reuse`` comes at 900 s, takes the pool (120 s retained: 0.0245 -> 0.02), starts warm (10 s) and
trains 600 s (0.12); without a keep-alive of its own it ends the chain.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from sagemaker_plans_local.simulation.capacity import capacity_blocks
from sagemaker_plans_local.simulation.simulator import simulate
from sagemaker_plans_local.simulation.workload import from_csv

START = datetime(2026, 1, 5, 11, 30, tzinfo=timezone.utc)
WORKLOAD = """submit_time,name,instance_type,instance_count,run_seconds,keep_alive_seconds
2026-01-05T11:30:00Z,big,ml.p5.48xlarge,1,3600,
2026-01-05T11:30:00Z,warm,ml.g4dn.xlarge,1,600,600
2026-01-05T11:45:00Z,reuse,ml.g4dn.xlarge,1,600,
"""
CAPACITY = [
    {
        "instance_type": "ml.p5.48xlarge",
        "instance_count": 1,
        "availability_zone": "us-east-1a",
        "start": 86400,
        "end": 2 * 86400,
    }
]


def test_three_jobs_one_plan_one_pool_by_hand():
    simulation = simulate(
        from_csv(WORKLOAD), ["plan=ml.p5.48xlarge:1:24"], capacity=capacity_blocks(CAPACITY), workers=1
    )
    result = simulation.results[0]
    assert result.start == START
    assert (result.plan_fees, result.training, result.warm_pool) == (
        Decimal("1320.96"),
        Decimal("0.24"),
        Decimal("0.02"),
    )
    assert result.total == Decimal("1321.22")
    jobs = {job.name: job for job in result.jobs}
    assert {name: job.cost for name, job in jobs.items()} == {
        "big": Decimal("0.00"),
        "warm": Decimal("0.14"),
        "reuse": Decimal("0.12"),
    }
    assert {name: job.wait_seconds for name, job in jobs.items()} == {"big": 86400, "warm": 0, "reuse": 0}
    assert {name: job.provisioning_seconds for name, job in jobs.items()} == {
        "big": 180,
        "warm": 180,
        "reuse": 10,
    }
    assert jobs["big"].ended == START + timedelta(seconds=86400 + 180 + 3600)
    assert jobs["reuse"].ended == START + timedelta(seconds=900 + 10 + 600)
    assert [job.warm_start for job in jobs.values()] == [False, False, True]
    document = result.to_json()
    assert document["wait_seconds"] == {"p50": 0, "p95": 86400, "max": 86400}
    assert document["makespan_seconds"] == 90180
    assert document["plan_utilization"] == round(3600 / 86400, 4)
    assert (document["jobs"], document["completed"], document["failed"], document["warm_starts"]) == (
        3,
        3,
        0,
        1,
    )
    assert json.loads(json.dumps(simulation.to_json()))["policies"][0]["total"] == "1321.22"
