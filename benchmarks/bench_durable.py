"""Section 10: in-process calls on a durable root against an ephemeral backend, and reopening a root.

Two backends on the same manual clock, one ephemeral (``LocalBackend()``) and
one durable (``LocalBackend(root=...)``: every change a journaled SQLite
transaction, every read a look for other processes' changes first), each
seeded with the same jobs. Batches of describe_training_job and of
create_training_job take turns; the table gives each one's best calls per
CPU second and durable/ephemeral (target: >= 0.5x). Then the time to reopen
a root as its state and its history grow, each step in a fresh process
(``bench_reopen.py``): from its snapshot, and by full replay, beside an
ephemeral backend building the same state.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
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


def _in_process(mode: str, root: Path, jobs: int, calls: int) -> dict:
    """One run of ``bench_reopen.py`` in a fresh process: its seconds and peak RSS."""
    script = Path(__file__).with_name("bench_reopen.py")
    command = [sys.executable, str(script), mode, str(root), str(jobs), str(calls)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=script.parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _reopen_row(directory: Path, jobs: int, calls: int) -> list[str]:
    root = directory / f"r{jobs}-{calls}"
    built = _in_process("build", root, jobs, calls)
    ephemeral = _in_process("ephemeral", root, jobs, calls)
    reopened = _in_process("reopen", root, jobs, calls)
    replayed = _in_process("replay", root, jobs, calls)
    history = f"{jobs:,} jobs" + (f" + {calls:,} calls" if calls else "")
    return [
        history,
        f"{ephemeral['seconds']:.1f} s / {ephemeral['rss_mb']:.0f} MB",
        f"{built['seconds']:.1f} s / {built['rss_mb']:.0f} MB",
        f"{reopened['seconds'] * 1000:.0f} ms / {reopened['rss_mb']:.0f} MB",
        f"{replayed['seconds'] * 1000:.0f} ms / {replayed['rss_mb']:.0f} MB",
    ]


def run_durable(calls: int, repeats: int, histories: tuple[tuple[int, int], ...]) -> None:
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
        reopen = [_reopen_row(directory, jobs, calls) for jobs, calls in histories]
        headers = ["history", "ephemeral build", "durable build", "reopen (snapshot)", "reopen (full replay)"]
        print("Each in a fresh process: wall time / peak RSS (reopens after the modules are loaded)")
        print(table(headers, reopen))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
