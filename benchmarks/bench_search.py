"""Section 3: SearchTrainingPlanOfferings on the default inventory, against describe_training_job.

Timed in CPU time (``time.process_time``), so other processes on the machine do not move the
verdict; it covers both repeated searches and searches right after an inventory change."""

from __future__ import annotations

import gc
import time

from bench_measure import micros, ratio, table, verdict
from bench_workload import START, job_request

#: Far beyond any search window: capacity added there changes the inventory, not the answers.
END_OF_TIME = START.replace(year=2030)

#: Target: one search (repeated, or right after an inventory change) costs at most this many describes.
SEARCH_VS_DESCRIBE = 3.0

#: Typical searches: contiguous finds, a two-block-only find, nothing at all.
SEARCHES = {
    "p5.48xlarge x8, 7 d, training-job": dict(
        InstanceType="ml.p5.48xlarge", InstanceCount=8, DurationHours=168, TargetResources=["training-job"]
    ),
    "p4de.24xlarge x4, 3 d, hyperpod": dict(
        InstanceType="ml.p4de.24xlarge",
        InstanceCount=4,
        DurationHours=72,
        TargetResources=["hyperpod-cluster"],
    ),
    "trn2.48xlarge x8, 4 d (two blocks)": dict(
        InstanceType="ml.trn2.48xlarge", InstanceCount=8, DurationHours=96, TargetResources=["training-job"]
    ),
    "p6-b300.48xlarge x1, 1 d (none)": dict(
        InstanceType="ml.p6-b300.48xlarge",
        InstanceCount=1,
        DurationHours=24,
        TargetResources=["training-job"],
    ),
}


def _best_per_call(run, calls: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(calls):
            run()
        best = min(best, (time.process_time() - started) / calls)
    return best


def _after_a_change(backend, run, instance_type: str, calls: int) -> float:
    """Median time of a search just after its own instance type's inventory changed.

    The capacity added lies beyond every search window, so the answers stay the same
    while nothing the search remembered for that type can be reused."""
    times = []
    for index in range(calls):
        start = START.replace(year=2027) + index * (END_OF_TIME - START.replace(year=2027)) / (calls + 1)
        backend.capacity.add(instance_type, 1, "us-east-1f", start, start + (END_OF_TIME - start) / 1000)
        began = time.process_time()
        run()
        times.append(time.process_time() - began)
    times.sort()
    return times[len(times) // 2]


def run_search(calls: int, repeats: int) -> None:
    from sagemaker_plans_local import LocalBackend

    print(
        "\n3. SearchTrainingPlanOfferings on the default inventory vs describe_training_job "
        f"(CPU time, best of {repeats} x {calls} calls, same run)"
    )
    with LocalBackend(start_time=START) as backend:
        sm = backend.client()
        sm.create_training_job(**job_request("search-bench-job"))
        backend.clock.advance(900)
        describe = lambda: sm.describe_training_job(TrainingJobName="search-bench-job")  # noqa: E731
        gc.disable()
        try:
            describe_time = _best_per_call(describe, calls, repeats)
            rows, worst = [], 0.0
            for label, request in SEARCHES.items():
                search = lambda: sm.search_training_plan_offerings(**request)  # noqa: E731, B023
                found = len(search()["TrainingPlanOfferings"])
                per_call = _best_per_call(search, calls, repeats)
                fresh = _after_a_change(backend, search, request["InstanceType"], max(20, calls // 20))
                worst = max(worst, per_call / describe_time, fresh / describe_time)
                rows.append(
                    [
                        label,
                        str(found),
                        micros(per_call),
                        ratio(per_call / describe_time),
                        micros(fresh),
                        ratio(fresh / describe_time),
                    ]
                )
        finally:
            gc.enable()
    print(
        table(
            ["search", "offerings", "us/call", "x describe", "after a change", "x describe"],
            rows,
            right=[False, True, True, True, True, True],
        )
    )
    print(
        "   (a search's candidate blocks are remembered until the inventory changes; "
        "'after a change' is a search right after capacity of its own type was added)"
    )
    print(
        f"   describe_training_job: {micros(describe_time)} us/call; worst search "
        f"{ratio(worst)} describe, repeated or after a change  {verdict(worst <= SEARCH_VS_DESCRIBE)} "
        f"(target <= {SEARCH_VS_DESCRIBE:g}x)"
    )
