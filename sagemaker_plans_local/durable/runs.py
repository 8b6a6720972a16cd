"""Training runs on a shared root: one process runs a job's code, every other one waits for its end.

When a job's training starts, each process that applies the change claims the
run in the journal; the first claim wins and that process runs the code (its
executor). The others hold a :class:`PendingRun` that ends when the owner's
journaled end is replayed, or, if the owner died first, as an instance
failure (docs/durability.md).
"""

from __future__ import annotations

import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor, Run, RunResult

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob

#: Real seconds between two looks at the journal while a run of another process is awaited.
POLL_SECONDS = 0.05
#: What a run whose owning process died ends with: AWS's answer to an instance failure.
INSTANCE_FAILURE = "InternalServerError: We encountered an internal error. Please try again."
#: What a pending run ends with when this backend closes before it ended.
CLOSED = "ClientError: the backend that was waiting for this run was closed"


class Runs(Protocol):
    """What the runs need of the durable state (``durable.state.Durable``)."""

    closed: bool

    def claim_run(self, region: str, job: str, started: datetime) -> bool: ...

    def pending_run(self, region: str, job: str, started: datetime) -> "PendingRun": ...

    def run_ended(
        self, region: str, job: str, started: datetime, result: RunResult, at: datetime
    ) -> None: ...

    def await_run(self, run: "PendingRun") -> None: ...

    def busy_here(self) -> bool: ...


class Summoner(Protocol):
    """Who runs the code of the runs nobody here claims: a detached runner (``durable/detached.py``)."""

    def job_created(self, region: str, job: str) -> None:
        """A job was created here: its code needs a process that runs it."""

    def run_unclaimed(self) -> None:
        """An awaited run is claimed by no process yet."""


class NoRunner:
    """No runner: the processes that open the root run the code themselves."""

    def job_created(self, region: str, job: str) -> None:
        pass

    def run_unclaimed(self) -> None:
        pass


def run_body(region: str, job: str, started: datetime, result: RunResult, at: datetime) -> dict[str, Any]:
    """A ``run_ended`` journal entry's body."""
    return {
        "region": region,
        "job": job,
        "started": started.isoformat(),
        "exit_code": result.exit_code,
        "duration": result.duration,
        "failure_reason": result.failure_reason,
        "at": at.isoformat(),
    }


class PendingRun:
    """A run another process owns: it ends when that process's journaled end is applied here."""

    def __init__(self, runs: Runs, region: str, job: str, started: datetime) -> None:
        self.region, self.job, self.started = region, job, started
        self._runs = runs
        self._result: RunResult | None = None
        self._done = threading.Event()

    def finish(self, result: RunResult) -> None:
        """The run's end reached this process."""
        self._result = result
        self._done.set()

    def elapsed(self) -> float:
        return 0.0  # unknown here: this process never waits on a manual clock for another's run

    def wait(self, timeout: float | None) -> RunResult | None:
        """Poll the journal for the run's end; at once (None) inside this process's own transaction."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._done.is_set():
            if self._runs.closed:
                self.finish(RunResult(1, 0.0, CLOSED))
                break
            if self._runs.busy_here():
                return None
            self._runs.await_run(self)
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            self._done.wait(POLL_SECONDS if remaining is None else min(POLL_SECONDS, remaining))
        return self._result

    def stop(self) -> None:
        """Nothing here: the owner replays the stop and terminates its process."""


class DurableExecutor:
    """An executor on a shared root: runs the code of the runs this process claims."""

    def __init__(self, real: Executor, runs: Runs, region: str) -> None:
        self.real = real
        self._runs = runs
        self._region = region

    @property
    def region(self) -> str:
        return self._region

    def runs(self, job: "TrainingJob") -> bool:
        return self.real.runs(job)

    def start(self, job: "TrainingJob", at: datetime) -> Run:
        if self._runs.claim_run(self._region, job.name, at):
            return self.real.start(job, at)
        return self._runs.pending_run(self._region, job.name, at)

    def ended(self, job: "TrainingJob", started: datetime, result: RunResult, at: datetime) -> None:
        self._runs.run_ended(self._region, job.name, started, result, at)

    def release(self, pool_id: str) -> None:
        self.real.release(pool_id)

    def close(self, timeout: float | None = None) -> None:
        self.real.close(timeout)
