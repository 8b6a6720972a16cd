"""Training jobs whose code really runs: start, watch, and place their end on the clock.

A run's end lands at ``virtual training start + real duration``. On the wall
clock the job service's watcher thread records it as soon as the process
exits; on a manual clock ``advance`` first waits (through the clock's waiter
hook, :meth:`LocalRuns.wait_until`) for each running process, until it exits
or has run as long as the clock is moving. Recording a run's end returns a
:class:`RunEnded`: the job service schedules the job's end at its time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import attrs

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor, Run, RunResult

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob


@attrs.frozen
class RunEnded:
    """``job``'s process ended with ``result``; the job ends (virtually) at ``at``."""

    job: "TrainingJob"
    result: RunResult
    at: datetime


class LocalRuns:
    """The running entry points of one region's training jobs, run by ``executor`` (None: no runtime)."""

    def __init__(self, clock: VirtualClock, executor: Executor | None = None) -> None:
        self._clock = clock
        self._active: dict[str, tuple["TrainingJob", Run, datetime]] = {}
        self._executor = executor

    @property
    def executor(self) -> Executor | None:
        """What runs the jobs' code (given at construction; None: simulated only)."""
        return self._executor

    def runs(self, job: "TrainingJob") -> bool:
        return self._executor is not None and self._executor.runs(job)

    def start(self, job: "TrainingJob", at: datetime) -> Run:
        """Start ``job``'s code at virtual time ``at``; the caller watches the returned run."""
        assert self._executor is not None  # set before any job runs locally (runs() was True)
        run = self._executor.start(job, at)
        self._active[job.name] = (job, run, at)
        return run

    def stop(self, job: "TrainingJob") -> None:
        """Terminate the job's process; its end is still recorded when it exits."""
        entry = self._active.get(job.name)
        if entry is not None:
            entry[1].stop()

    def abandon(self, job: "TrainingJob") -> None:
        """Terminate the job's process and forget it (the job goes on without it)."""
        entry = self._active.pop(job.name, None)
        if entry is not None:
            entry[1].stop()

    def running(self, job: "TrainingJob") -> Run | None:
        entry = self._active.get(job.name)
        return entry[1] if entry is not None else None

    def release_pool(self, pool_id: str) -> None:
        if self._executor is not None:
            self._executor.release(pool_id)

    def record(self, job: "TrainingJob", run: Run, result: RunResult) -> RunEnded | None:
        """``run`` of ``job`` ended with ``result``: when the job ends (None: recorded before, or abandoned)."""
        entry = self._active.get(job.name)
        if entry is None or entry[1] is not run:
            return None
        del self._active[job.name]
        started = entry[2]
        if self._clock.manual:
            at = max(self._clock.now(), started + timedelta(seconds=result.duration))
        else:
            at = self._clock.now()
        assert self._executor is not None  # the run was started by it
        self._executor.ended(job, started, result, at)
        return RunEnded(job, result, at)

    def resolve(self, job_name: str, started: datetime, result: RunResult, at: datetime) -> RunEnded | None:
        """A run another process ran (started at ``started``) ended with ``result`` at ``at``.

        None if no such run is active here (it was abandoned, or already recorded).
        """
        entry = self._active.get(job_name)
        if entry is None or entry[2] != started:
            return None
        del self._active[job_name]
        return RunEnded(entry[0], result, at)

    def wait_until(self, moment: datetime) -> list[RunEnded]:
        """Wait for each run until it exits or has run as long as the clock reaches ``moment``."""
        if not self._active:  # nothing runs here (every simulated job): before each change the clock applies
            return []
        ended = []
        for job, run, started in list(self._active.values()):
            budget = (moment - started).total_seconds() - run.elapsed()
            if budget <= 0:
                continue
            result = run.wait(budget)
            if result is not None:
                outcome = self.record(job, run, result)
                if outcome is not None:
                    ended.append(outcome)
        return ended
