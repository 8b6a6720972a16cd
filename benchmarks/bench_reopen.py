"""Section 10's reopen figures, each in a fresh process: ``python bench_reopen.py MODE ROOT JOBS CALLS``.

``build`` makes a durable root of JOBS jobs plus CALLS more API calls (AddTags
that each change a tag, round-robin over the jobs) and closes it (a snapshot
is taken on close); ``ephemeral`` builds the same state in an ephemeral
backend; ``reopen`` opens ROOT and answers one DescribeTrainingJob;
``replay`` does the same after removing ROOT's snapshots (the full replay
every open paid before them). Each prints one JSON line: the wall seconds of
its work and the process's peak RSS in MB. ``reopen``/``replay`` first load
the package's modules and service model (an ephemeral backend's first
describe), so the seconds are the root's own.
"""

from __future__ import annotations

import json
import resource
import sqlite3
import sys
import time
from pathlib import Path

from bench_workload import START, job_request, seed_names

from sagemaker_plans_local import LocalBackend


def _build(backend: LocalBackend, jobs: int, calls: int) -> None:
    backend.settings.instance_quota = None
    sm = backend.client()
    arns = [sm.create_training_job(**job_request(name))["TrainingJobArn"] for name in seed_names(jobs)]
    for call in range(calls):
        sm.add_tags(ResourceArn=arns[call % jobs], Tags=[{"Key": "call", "Value": str(call)}])
    backend.clock.advance(60)


def _reopen(root: Path) -> None:
    with LocalBackend(root=root) as reopened:
        reopened.client().describe_training_job(TrainingJobName=seed_names(1)[0])


def _warm() -> None:
    import sagemaker_plans_local.durable.opening  # noqa: F401  # the durable modules too

    with LocalBackend(start_time=START) as backend:
        sm = backend.client()
        try:
            sm.describe_training_job(TrainingJobName="none")
        except sm.exceptions.ClientError:
            pass  # the modules and the model are loaded


def main(mode: str, root: Path, jobs: int, calls: int) -> None:
    if mode in ("reopen", "replay"):
        _warm()
    if mode == "replay":
        connection = sqlite3.connect(root / "state.sqlite3")
        with connection:
            connection.execute("DELETE FROM snapshots")
        connection.close()
    started = time.perf_counter()
    if mode == "build":
        with LocalBackend(root=root, start_time=START) as backend:
            _build(backend, jobs, calls)
    elif mode == "ephemeral":
        with LocalBackend(start_time=START) as backend:
            _build(backend, jobs, calls)
    else:
        _reopen(root)
    seconds = time.perf_counter() - started
    print(
        json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    )


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
