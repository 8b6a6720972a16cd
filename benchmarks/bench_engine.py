"""Section 14: the engine at scale -- the event path, a create and a list page against the
Stubber, and closing a backend that holds many jobs (issue 19, "Fast enough to sweep").

Each sized figure comes from a fresh process (``python bench_engine.py MODE JOBS``, one JSON
line out), so its peak RSS is its own:

* ``sweep``: JOBS simulated jobs (no code; each scripted to run 5 to 55 minutes, within its
  1-hour MaxRuntime) submitted at even steps over 30 days, each created at its submit time by
  advancing the clock to it, in 20 groups (by role) of which half keep a warm pool 10 minutes;
  then the clock is advanced past the last end: what the simulator does for one policy. CPU
  seconds in all and per job, wall seconds, peak RSS; then every job read back (ListTrainingJobs
  pages of 100, CPU per job listed) and up to 2,000 of them described (CPU per describe).
* ``burst``: JOBS creates at one instant (after one that builds the service), then
  ``advance(900)`` completes them all (the issue's measure: CPU per job completion of that advance).
* ``close``: JOBS jobs that each keep a warm pool, completed; the seconds ``close()`` takes.

In this process: CreateTrainingJob and a 100-item ListTrainingJobs page, ours against
botocore's Stubber replaying our own answers (best CPU time of batches, collector off).
"""

from __future__ import annotations

import gc
import json
import random
import resource
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Callable

from bench_measure import ratio, table, verdict
from bench_workload import FAKE_CREDENTIALS, REGION, START, job_request, without_metadata

DAYS = 30
GROUPS = 20
#: Targets the what-if simulator needs (issue 19): seconds for one policy, peak RSS.
TARGET_SECONDS = {10_000: 3.0, 100_000: 30.0}
TARGET_RSS_MB = 500
PAGE = 100


def _backend():
    from sagemaker_plans_local import LocalBackend

    backend = LocalBackend(start_time=START)
    backend.settings.instance_quota = None  # a load test holds more instances than any account quota
    backend.settings.warm_pool_quota = None
    return backend


def _sweep_workload(jobs: int) -> list[tuple[float, int, int]]:
    """(submit second, group, run seconds) of ``jobs`` jobs over 30 days, in submit order: as
    small as a simulator's workload rows (each request is built when it is sent)."""
    rng = random.Random(19)
    step = DAYS * 86400 / jobs
    return [(i * step, rng.randrange(GROUPS), rng.randrange(300, 3300)) for i in range(jobs)]


def _sweep_request(index: int, group: int) -> dict:
    return job_request(f"job-{index:06d}", role=f"group-{group}", keep_alive=600 if group % 2 else 0)


def _read_back(client) -> int:
    """Every job, through ListTrainingJobs pages; how many are Completed."""
    completed, token = 0, None
    while True:
        page = client.list_training_jobs(MaxResults=PAGE, **({"NextToken": token} if token else {}))
        completed += sum(job["TrainingJobStatus"] == "Completed" for job in page["TrainingJobSummaries"])
        token = page.get("NextToken")
        if not token:
            return completed


def _sweep(jobs: int) -> dict:
    workload = _sweep_workload(jobs)
    import sagemaker_plans_local  # noqa: F401  # the package is loaded once per process, not per policy

    started, cpu = time.perf_counter(), time.process_time()
    backend = _backend()
    client, clock = backend.client(), backend.clock
    for index, (submit, group, seconds) in enumerate(workload):
        due = START + timedelta(seconds=submit)
        if due > clock.now():
            clock.advance(due - clock.now())
        request = _sweep_request(index, group)
        backend.script_job(request["TrainingJobName"], runtime_seconds=seconds)
        client.create_training_job(**request)
    clock.advance(timedelta(days=1))  # past every end and every pool's expiry
    figures = {"cpu": time.process_time() - cpu, "seconds": time.perf_counter() - started}
    cpu = time.process_time()
    figures["completed"] = _read_back(client)
    figures["read_cpu"] = time.process_time() - cpu
    described = range(0, jobs, max(1, jobs // 2000))  # up to 2,000 describes, spread out
    cpu = time.process_time()
    for index in described:
        client.describe_training_job(TrainingJobName=f"job-{index:06d}")
    figures["describe_us"] = (time.process_time() - cpu) / len(described) * 1e6
    backend.close()
    return figures


def _burst(jobs: int) -> dict:
    backend = _backend()
    client = backend.client()
    client.create_training_job(**job_request("warm-up", role="warm-up"))  # the service is built
    cpu = time.process_time()
    for i in range(jobs):
        client.create_training_job(**job_request(f"burst-{i:06d}", role=f"r{i % GROUPS}"))
    created = time.process_time()
    backend.clock.advance(900)
    figures = {"create_cpu": created - cpu, "advance_cpu": time.process_time() - created}
    backend.close()
    return figures


def _close(jobs: int) -> dict:
    backend = _backend()
    client = backend.client()
    for i in range(jobs):
        client.create_training_job(**job_request(f"close-{i:06d}", role=f"r{i}", keep_alive=3600))
    backend.clock.advance(900)  # all Completed, each keeping an Available pool
    started = time.perf_counter()
    backend.close()
    return {"close_seconds": time.perf_counter() - started}


MODES: dict[str, Callable[[int], dict]] = {"sweep": _sweep, "burst": _burst, "close": _close}


def _child(mode: str, jobs: int) -> dict:
    """One mode in a fresh process: its figures and peak RSS (MB)."""
    command = [sys.executable, str(Path(__file__).resolve()), mode, str(jobs)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=Path(__file__).parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _best_cpu(run: Callable[[], None], calls: int, repeats: int, queue: Callable[[int], None]) -> float:
    """Best CPU seconds per call over ``repeats`` batches of ``calls`` calls (collector off);
    ``queue(calls)`` runs untimed before each batch (the Stubber's canned answers)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            queue(calls)
            started = time.process_time()
            for _ in range(calls):
                run()
            best = min(best, (time.process_time() - started) / calls)
    finally:
        gc.enable()
    return best


def _against_stubber(calls: int, repeats: int) -> list[list[str]]:
    """CreateTrainingJob and a 100-item ListTrainingJobs page: ours and the Stubber (its answers
    queued before the timer, our own answers), ms per call."""
    import boto3
    from botocore.stub import Stubber

    backend = _backend()
    ours = backend.client()
    for i in range(PAGE):
        ours.create_training_job(**job_request(f"seed-{i:04d}", keep_alive=0))
    backend.clock.advance(900)
    stub_client = boto3.session.Session(**FAKE_CREDENTIALS).client("sagemaker", region_name=REGION)
    stubber = Stubber(stub_client)
    stubber.activate()
    answers = {
        "create_training_job": {"TrainingJobArn": "arn:aws:sagemaker:us-east-1:123456789012:training-job/x"},
        "list_training_jobs": without_metadata(ours.list_training_jobs(MaxResults=PAGE)),
    }
    names = iter(range(10**9))
    request = job_request("x", keep_alive=0)
    calls_of = {
        "create_training_job": lambda client: (
            lambda: client.create_training_job(**{**request, "TrainingJobName": f"create-{next(names):09d}"})
        ),
        "list_training_jobs": lambda client: lambda: client.list_training_jobs(MaxResults=PAGE),
    }
    rows = []
    for operation, call in calls_of.items():

        def queue(count: int, operation: str = operation) -> None:
            for _ in range(count):
                stubber.add_response(operation, answers[operation])

        ours_cost = _best_cpu(call(ours), calls, repeats, lambda count: None)
        stub_cost = _best_cpu(call(stub_client), calls, repeats, queue)
        rows.append(
            [operation, f"{ours_cost * 1e3:.3f}", f"{stub_cost * 1e3:.3f}", ratio(stub_cost / ours_cost)]
        )
    stubber.deactivate()
    backend.close()
    return rows


def run_engine(sizes: tuple[int, ...], closes: tuple[int, ...], calls: int, repeats: int) -> None:
    print(
        f"\n12. The engine at scale: {DAYS} days of simulated jobs, one policy, each size in a fresh "
        "process (CPU seconds, wall seconds, peak RSS)"
    )
    rows = []
    for jobs in sizes:
        sweep, burst = _child("sweep", jobs), _child("burst", jobs)
        target = TARGET_SECONDS.get(jobs)
        verdicts = f"{verdict(sweep['cpu'] <= target)} (<= {target:g} s)" if target else ""
        if jobs >= 100_000:
            verdicts += f" RSS {verdict(sweep['rss_mb'] <= TARGET_RSS_MB)} (<= {TARGET_RSS_MB} MB)"
        if sweep["completed"] != jobs:
            raise RuntimeError(f"{sweep['completed']:,} of {jobs:,} jobs completed")
        rows.append(
            [
                f"{jobs:,}",
                f"{sweep['cpu']:.2f}",
                f"{sweep['cpu'] / jobs * 1e3:.3f}",
                f"{sweep['seconds']:.2f}",
                f"{sweep['rss_mb']:.0f}",
                f"{sweep['read_cpu'] / jobs * 1e6:.1f}",
                f"{sweep['describe_us']:.0f}",
                f"{burst['create_cpu'] / jobs * 1e3:.3f}",
                f"{burst['advance_cpu']:.2f} ({burst['advance_cpu'] / jobs * 1e3:.3f})",
                verdicts,
            ]
        )
    headers = ["jobs", "sweep CPU s", "ms/job", "wall s", "peak MB", "list us/job", "describe us"]
    headers.append("burst ms/create")
    print(table([*headers, "advance(900) s (ms/job)", "target"], rows))
    closing = [[f"{jobs:,}", f"{_child('close', jobs)['close_seconds']:.2f}"] for jobs in closes]
    print(table(["jobs with Available pools", "close() s"], closing))
    print(
        table(["operation", "ours ms", "Stubber ms", "ours/Stubber speed"], _against_stubber(calls, repeats))
    )


def main(argv: list[str]) -> None:
    """``bench_engine.py MODE JOBS`` (a child), or ``bench_engine.py [--quick] [--100k]`` alone."""
    if argv and argv[0] in MODES:
        figures = MODES[argv[0]](int(argv[1]))
        figures["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(figures))
        return
    if "--quick" in argv:
        run_engine((500,), (500,), calls=20, repeats=2)
        return
    sizes = (1_000, 10_000, 50_000) + ((100_000,) if "--100k" in argv else ())
    run_engine(sizes, (10_000, 61_000), calls=200, repeats=7)


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    sys.path[:0] = [str(here), str(here.parent)]
    main(sys.argv[1:])
