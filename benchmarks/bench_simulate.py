"""Section 13: the what-if simulator (docs/what-if.md): one policy over 10,000 and 100,000 jobs spread over
30 days, and a sweep of 8 policies over every core.

Each size runs in a fresh child process, so its peak RSS is its own (``ru_maxrss``): CPU seconds (user +
system, the child's whole run: import, workload, simulation, read-back) against the goals, 10,000 jobs
in 3 s, 100,000 in 30 s (linear) within 500 MB; the CPU is the simulation's (the workload built, the
imports done). The sweep runs 8 keep-alive policies in one process, then one process per policy over
every core (``simulate(workers=cores)``): the wall-time speedup (wall time, since the work is in other
processes; noisy on a shared machine).
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench_measure import ratio, table, verdict

HERE = Path(__file__).resolve().parent
TYPES = ("ml.g5.xlarge", "ml.g5.2xlarge", "ml.p3.2xlarge", "ml.m5.xlarge")
GOALS = {10_000: 3.0, 100_000: 30.0}  # CPU seconds
RSS_GOAL_MB = 500
DAYS = 30


def workload(jobs: int, seed: int = 7):
    """``jobs`` jobs submitted evenly over 30 days: four on-demand types, 1 or 2 instances, 5 min to 2 h."""
    from sagemaker_plans_local.simulation.workload import Job, Workload

    rng = random.Random(seed)
    step = DAYS * 86400 / jobs
    return Workload(
        tuple(
            Job(f"job-{i:06d}", i * step, rng.choice(TYPES), rng.choice((1, 1, 2)), rng.randrange(300, 7200))
            for i in range(jobs)
        ),
        source=f"{jobs} generated jobs",
    )


def child(jobs: int, policy: str) -> None:
    """In the child process: one policy over ``jobs`` jobs; prints what it measured as JSON."""
    from sagemaker_plans_local.simulation.simulator import simulate

    jobs_of = workload(jobs)
    started, cpu = time.perf_counter(), time.process_time()
    result = simulate(jobs_of, [policy], workers=1).results[0]
    cpu = time.process_time() - cpu
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "cpu": cpu,
                "wall": time.perf_counter() - started,
                "rss_mb": usage.ru_maxrss / 1024,
                "completed": result.completed,
                "total": str(result.total),
            }
        )
    )


def _in_child(jobs: int, policy: str) -> dict:
    paths = [str(HERE), str(HERE.parent)]
    code = f"import sys; sys.path[:0] = {paths!r}; import bench_simulate; bench_simulate.child({jobs}, {policy!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _sweep(jobs: int) -> tuple[float, float, int]:
    """Wall seconds of 8 keep-alive policies over ``jobs`` jobs in one process, then one process per core."""
    from sagemaker_plans_local.simulation.simulator import simulate

    cores = os.cpu_count() or 1
    walls = []
    for workers in (1, cores):
        started = time.perf_counter()
        simulate(workload(jobs), ["on-demand"], sweep_over="keep-alive=0..2100/300", workers=workers)
        walls.append(time.perf_counter() - started)
    return walls[0], walls[1], cores


def run_simulate(
    sizes: tuple[int, ...] = (10_000, 100_000), sweep_jobs: int = 2_000, policy: str = "keep-alive=600"
) -> None:
    print(
        f"\n13. The what-if simulator: one policy ({policy}) over jobs spread over {DAYS} days, in a child process each"
    )
    rows, per_job = [], {}
    for jobs in sizes:
        measured = _in_child(jobs, policy)
        per_job[jobs] = measured["cpu"] / jobs
        goal = GOALS.get(jobs)
        cpu_cell = f"{measured['cpu']:.1f} s" + (
            f" {verdict(measured['cpu'] <= goal)} (<= {goal:g} s)" if goal else ""
        )
        rss_cell = f"{measured['rss_mb']:.0f} MB" + (
            f" {verdict(measured['rss_mb'] <= RSS_GOAL_MB)} (<= {RSS_GOAL_MB} MB)" if jobs >= 100_000 else ""
        )
        rows.append(
            [f"{jobs:,}", cpu_cell, f"{measured['wall']:.1f} s", f"{per_job[jobs] * 1e3:.2f} ms", rss_cell]
        )
    print(table(["jobs", "CPU", "wall", "CPU per job", "peak RSS"], rows))
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        growth = per_job[large] / per_job[small]
        print(
            f"   per-job CPU {large:,} / {small:,}: {ratio(growth)} {verdict(growth <= 1.5)} (linear: <= 1.5x)"
        )
    alone, spread, cores = _sweep(sweep_jobs)
    speedup = alone / spread
    print(
        f"   sweep of 8 policies over {sweep_jobs:,} jobs: {alone:.1f} s wall in one process, {spread:.1f} s over "
        f"{cores} processes: {ratio(speedup)} {verdict(speedup >= 0.6 * cores)} (every core: >= {0.6 * cores:g}x)"
    )
