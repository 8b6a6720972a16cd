"""Section 5: List scaling -- a ListTrainingJobs page costs the same with 200 or 20,000 jobs,
and walking every page is linear in the number of jobs. Timed in CPU time (``time.process_time``)."""

from __future__ import annotations

import gc
import time
from typing import Callable

from bench_measure import micros, ratio, table, verdict
from bench_workload import START, job_request

#: Target: a page over the large backend costs at most this many pages over the small one.
PAGE_RATIO = 2.0
#: Target: per job, walking every page of 10x the jobs costs at most this much more.
WALK_RATIO = 1.5
SORTS = ("CreationTime", "Name", "Status")
PAGE = 100


def build(jobs: int):
    """A backend with ``jobs`` ended jobs (Completed, some Failed or Stopped), names not in creation order."""
    from sagemaker_plans_local import LocalBackend

    backend = LocalBackend(start_time=START)
    backend.settings.instance_quota = None  # a load test holds more instances than any account quota
    client = backend.client()
    for i in range(jobs):
        name = f"list-{(i * 7919) % jobs:06d}"
        if i % 7 == 3:
            backend.script_job(name, outcome="AlgorithmError")
        client.create_training_job(**job_request(name, keep_alive=0))
        if i % 5 == 1:
            client.stop_training_job(TrainingJobName=name)
    backend.clock.advance(900)
    return backend, client


def _cpu_per_call(run: Callable[[], None], calls: int, repeats: int) -> float:
    """Best CPU seconds per call over ``repeats`` batches of ``calls`` (collector off)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            started = time.process_time()
            for _ in range(calls):
                run()
            best = min(best, (time.process_time() - started) / calls)
    finally:
        gc.enable()
    return best


def _middle_token(client, sort: str, jobs: int) -> str:
    """The NextToken of the page that ends halfway through the list."""
    token = None
    for _ in range(max(1, jobs // (2 * PAGE))):
        token = client.list_training_jobs(
            SortBy=sort, MaxResults=PAGE, **({"NextToken": token} if token else {})
        )["NextToken"]
    return token


def _walk(client) -> int:
    """Every page of the default listing; returns the number of jobs seen."""
    seen, token = 0, None
    while True:
        page = client.list_training_jobs(MaxResults=PAGE, **({"NextToken": token} if token else {}))
        seen += len(page["TrainingJobSummaries"])
        token = page.get("NextToken")
        if not token:
            return seen


def _page_rows(clients: dict, small: int, large: int, calls: int, repeats: int) -> tuple[list, float]:
    rows, worst = [], 0.0
    for sort in SORTS:
        for where in ("first page", "page from the middle"):
            costs = {}
            for size in (small, large):
                client = clients[size]
                extra = {"NextToken": _middle_token(client, sort, size)} if where != "first page" else {}
                # The lambda runs within this iteration: the loop variables are current.
                costs[size] = _cpu_per_call(
                    lambda: client.list_training_jobs(SortBy=sort, MaxResults=PAGE, **extra),  # noqa: B023
                    calls,
                    repeats,
                )
            value = costs[large] / costs[small]
            worst = max(worst, value)
            rows.append([f"SortBy={sort}, {where}", micros(costs[small]), micros(costs[large]), ratio(value)])
    return rows, worst


def run_lists(small: int, large: int, calls: int, repeats: int) -> None:
    mid = max(small, large // 10)
    print(
        f"\n5. ListTrainingJobs scaling: a page (MaxResults={PAGE}) with {small:,} vs {large:,} jobs; "
        f"walking every page of {mid:,} vs {large:,} jobs (CPU time, best of {repeats})"
    )
    backends, clients = [], {}
    try:
        for size in sorted({small, mid, large}):
            started = time.perf_counter()
            backend, clients[size] = build(size)
            backends.append(backend)
            if size == large:
                print(f"   built {size:,} jobs through boto3 in {time.perf_counter() - started:.1f} s")
        rows, worst = _page_rows(clients, small, large, calls, repeats)
        print(table(["request", f"us/call @ {small:,}", f"us/call @ {large:,}", "ratio"], rows))
        print(
            f"   worst page ratio {ratio(worst)}  {verdict(worst <= PAGE_RATIO)} (target <= {PAGE_RATIO:g}x)"
        )
        walks = {}
        for size in (mid, large):
            seen = _walk(clients[size])
            if seen != size:
                raise RuntimeError(f"walking {size:,} jobs saw {seen:,}")
            walks[size] = _cpu_per_call(lambda: _walk(clients[size]), 1, max(2, repeats // 2))  # noqa: B023
        per_job = {size: walks[size] / size for size in walks}
        value = per_job[large] / per_job[mid]
        print(
            f"   walk every page: {mid:,} jobs {walks[mid] * 1e3:,.1f} ms ({micros(per_job[mid])} us/job), "
            f"{large:,} jobs {walks[large] * 1e3:,.1f} ms ({micros(per_job[large])} us/job); "
            f"per-job ratio {ratio(value)}  {verdict(value <= WALK_RATIO)} (target <= {WALK_RATIO:g}x)"
        )
    finally:
        for backend in backends:
            backend.close()
