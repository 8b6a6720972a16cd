"""Properties of the simulator's answers over generated workloads (hypothesis, the project's profiles)."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.simulation.capacity import capacity_blocks
from sagemaker_plans_local.simulation.simulator import simulate
from sagemaker_plans_local.simulation.workload import from_rows

P5 = "ml.p5.48xlarge"
#: A day-boundary start (11:30 UTC), so every plan count gets the same one block.
START = datetime(2026, 1, 5, 11, 30, tzinfo=timezone.utc)
ROOMY = capacity_blocks(
    [
        {
            "instance_type": P5,
            "instance_count": 8,
            "availability_zone": "us-east-1a",
            "start": 0,
            "end": 3 * 86400,
        }
    ]
)


def job_rows(types: list[str], keep_alive: bool, counts: list[int] = [1, 2]) -> st.SearchStrategy:  # noqa: B006
    row = st.fixed_dictionaries(
        {
            "submit_time": st.integers(0, 4 * 3600),
            "instance_type": st.sampled_from(types),
            "instance_count": st.sampled_from(counts),
            "run_seconds": st.integers(60, 3 * 3600),
            **({"keep_alive_seconds": st.sampled_from(["", 300, 1800])} if keep_alive else {}),
        }
    )
    return st.lists(row, min_size=1, max_size=8).map(
        lambda rows: [
            {**r, "name": f"job-{i}", "submit_time": f"{r['submit_time']}"} for i, r in enumerate(rows)
        ]
    )


ON_DEMAND_TYPES = ["ml.g4dn.xlarge", "ml.g5.xlarge"]


@settings(max_examples=15)
@given(
    rows=job_rows([*ON_DEMAND_TYPES, P5], keep_alive=True),
    policy=st.sampled_from(
        ["on-demand", "as-is", "keep-alive=600", f"plan={P5}:2:72+keep-alive=300+overflow"]
    ),
)
def test_cost_is_never_negative_and_the_items_add_up_to_the_total(rows, policy):
    result = simulate(from_rows(rows, start=START), [policy], capacity=ROOMY, workers=1).results[0]
    assert min(result.plan_fees, result.training, result.warm_pool, *(job.cost for job in result.jobs)) >= 0
    assert result.total == result.plan_fees + result.training + result.warm_pool
    assert sum((job.cost for job in result.jobs), Decimal("0.00")) + result.plan_fees == result.total


@settings(max_examples=15)
@given(
    rows=job_rows(ON_DEMAND_TYPES, keep_alive=False),
    shorter=st.integers(0, 3600),
    longer=st.integers(0, 3600),
)
def test_a_longer_keep_alive_never_lowers_warm_start_hits(rows, shorter, longer):
    shorter, longer = sorted((shorter, longer))
    short, long = simulate(
        from_rows(rows), [f"keep-alive={shorter}", f"keep-alive={longer}"], workers=1
    ).results
    assert short.warm_starts <= long.warm_starts


@settings(max_examples=15)
@given(
    rows=job_rows([P5], keep_alive=False, counts=[1]),
    counts=st.sampled_from([(1, 2), (2, 4), (1, 4), (4, 8)]),
)
def test_a_plan_with_more_instances_never_raises_queue_wait(rows, counts):
    workload = from_rows(rows, start=START)
    policies = [f"plan={P5}:{count}:72" for count in counts]
    fewer, more = simulate(workload, policies, capacity=ROOMY, workers=1).results
    assert all(a.wait_seconds >= b.wait_seconds for a, b in zip(fewer.jobs, more.jobs))
    assert fewer.wait()["p95"] >= more.wait()["p95"] and fewer.completed == more.completed == len(rows)
