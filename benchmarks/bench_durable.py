"""Section 10: in-process calls on a durable root against an ephemeral backend, and reopening a root.

Two backends on the same manual clock, one ephemeral (``LocalBackend()``) and
one durable (``LocalBackend(root=...)``: every change a journaled SQLite
transaction, every read a look for other processes' changes first), each
seeded with the same jobs. Batches of describe_training_job and of
create_training_job take turns; the table gives each one's best calls per
CPU second and durable/ephemeral (target: >= 0.5x). Then the time to reopen
a root (replaying its journal) as its history grows.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from bench_measure import rate, ratio, table, timed, verdict
from bench_workload import START, job_request, seed_names

from sagemaker_plans_local import LocalBackend

#: What the durable backend must keep of the ephemeral one's speed.
TARGET = 0.5


def _describes(sm, names: list[str], calls: int):
    def run() -> None:
        for index in range(calls):
            sm.describe_training_job(TrainingJobName=names[index % len(names)])

    return run


def _creates(sm, prefix: str, calls: int, batch: list[int]):
    def run() -> None:
        batch[0] += 1
        for index in range(calls):
            sm.create_training_job(**job_request(f"{prefix}-{batch[0]}-{index}"))

    return run


def _best_rates(backends: dict[str, LocalBackend], calls: int, repeats: int) -> dict[tuple[str, str], float]:
    seeds = seed_names(20)
    clients = {}
    for name, backend in backends.items():
        backend.settings.instance_quota = None
        clients[name] = backend.client()
        for job in seeds:
            clients[name].create_training_job(**job_request(job))
    best: dict[tuple[str, str], float] = {}
    batches = {name: [0] for name in backends}
    for _ in range(repeats):
        for name, sm in clients.items():
            for operation, run in (
                ("describe_training_job", _describes(sm, seeds, calls)),
                ("create_training_job", _creates(sm, "new", calls // 4, batches[name])),
            ):
                count = calls if operation == "describe_training_job" else calls // 4
                best[(name, operation)] = max(best.get((name, operation), 0.0), count / timed(run))
    return best


def _reopen_seconds(root: Path, jobs: int) -> float:
    with LocalBackend(root=root, start_time=START) as backend:
        backend.settings.instance_quota = None
        sm = backend.client()
        for job in seed_names(jobs):
            sm.create_training_job(**job_request(job))
        backend.clock.advance(60)
    started = time.perf_counter()
    with LocalBackend(root=root) as reopened:
        reopened.client().describe_training_job(TrainingJobName=seed_names(1)[0])
    return time.perf_counter() - started


def run_durable(calls: int, repeats: int, histories: tuple[int, ...]) -> None:
    print(
        f"\n10. Durable root vs ephemeral backend, in process (best of {repeats} batches; "
        f"{calls} describes, {calls // 4} creates per batch)"
    )
    directory = Path(tempfile.mkdtemp(prefix="bench-durable-"))
    try:
        with (
            LocalBackend(start_time=START) as ephemeral,
            LocalBackend(root=directory / "root", start_time=START) as durable,
        ):
            best = _best_rates({"ephemeral": ephemeral, "durable": durable}, calls, repeats)
        rows = []
        for operation in ("describe_training_job", "create_training_job"):
            share = best[("durable", operation)] / best[("ephemeral", operation)]
            rows.append(
                [
                    operation,
                    rate(best[("ephemeral", operation)]),
                    rate(best[("durable", operation)]),
                    ratio(share),
                    verdict(share >= TARGET),
                ]
            )
        print(
            table(
                ["operation", "ephemeral calls/s", "durable calls/s", "durable/ephemeral", f">= {TARGET}x"],
                rows,
            )
        )
        reopen = [
            [f"{jobs:,} jobs", f"{_reopen_seconds(directory / f'h{jobs}', jobs) * 1000:.0f} ms"]
            for jobs in histories
        ]
        print(table(["history", "reopen (replay) wall time"], reopen))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
