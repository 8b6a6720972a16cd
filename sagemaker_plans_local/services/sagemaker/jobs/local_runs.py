"""Training jobs whose code really runs: start, watch, and place their end on the clock.

A run's end lands at ``virtual training start + real duration``. On the wall
clock a watcher thread records it as soon as the process exits; on a manual
clock ``advance`` first waits (through the clock's waiter hook) for each
running process, until it exits or has run as long as the clock is moving.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor, Run, RunResult

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob


class LocalRuns:
    """The running entry points of one region's training jobs."""

    def __init__(
        self,
        clock: VirtualClock,
        lock: threading.RLock,
        ended: Callable[["TrainingJob", RunResult, datetime], None],
    ) -> None:
        self._clock = clock
        self._lock = lock
        self._ended = ended
        self._active: dict[str, tuple["TrainingJob", Run, datetime]] = {}
        self.executor: Executor | None = None
        clock.add_waiter(self._wait_until)

    def runs(self, job: "TrainingJob") -> bool:
        return self.executor is not None and self.executor.runs(job)

    def start(self, job: "TrainingJob", at: datetime) -> None:
        assert self.executor is not None  # set before any job runs locally (runs() was True)
        run = self.executor.start(job, at)
        self._active[job.name] = (job, run, at)
        threading.Thread(target=self._watch, args=(job, run), daemon=True, name=f"watch-{job.name}").start()

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
        if self.executor is not None:
            self.executor.release(pool_id)

    def settle(self, job: "TrainingJob", timeout: float | None) -> None:
        """Wait (without the lock) up to ``timeout`` real seconds for the job's process; record its end."""
        run = self.running(job)
        if run is None:
            return
        result = run.wait(timeout)
        if result is not None:
            with self._lock:
                self._record(job, run, result)

    # -- internals -------------------------------------------------------------
    def _watch(self, job: "TrainingJob", run: Run) -> None:
        result = run.wait(None)
        assert result is not None  # no timeout: wait returns the run's result
        with self._lock:
            self._record(job, run, result)
            self._clock.catch_up()

    def _record(self, job: "TrainingJob", run: Run, result: RunResult) -> None:
        entry = self._active.get(job.name)
        if entry is None or entry[1] is not run:
            return  # already recorded, or abandoned
        del self._active[job.name]
        started = entry[2]
        if self._clock.manual:
            at = max(self._clock.now(), started + timedelta(seconds=result.duration))
        else:
            at = self._clock.now()
        self._clock.schedule(at, lambda t: self._ended(job, result, t))

    def _wait_until(self, moment: datetime) -> None:
        for job, run, started in list(self._active.values()):
            budget = (moment - started).total_seconds() - run.elapsed()
            if budget <= 0:
                continue
            result = run.wait(budget)
            if result is not None:
                self._record(job, run, result)
