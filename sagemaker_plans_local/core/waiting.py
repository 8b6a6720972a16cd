"""Waiting for a job or a plan on the backend's clock, without polling sleeps.

A manual clock is moved to each next state change (it has no real time).
A wall clock tells the truth: a wait sleeps in real time until the next
change is due, and only an explicit fast-forward (``fast_forward=True``, or
``settings.fast_forward_waits``) moves the clock ahead of real time. A job's
real process always runs in real time and is waited for.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Callable, Protocol, TypeVar

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.settings import Settings

#: Longest real sleep of one wall-clock step: another caller may schedule an earlier change.
WALL_STEP_SECONDS = 0.25

J = TypeVar("J")


class Jobs(Protocol[J]):
    """What a wait needs of one region's jobs (SageMaker's ``TrainingJobs``)."""

    def get(self, name: str) -> J: ...

    def finished(self, job: J) -> bool: ...

    def running(self, job: J) -> bool: ...

    def settle(self, job: J, timeout: float | None) -> None: ...


class Waits:
    """Steps and waits on one clock, under the emulation's lock."""

    def __init__(
        self,
        clock: VirtualClock,
        settings: Settings,
        lock: threading.RLock,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock = clock
        self._settings = settings
        self._lock = lock
        self._sleep = sleep

    def forwards(self, fast_forward: bool | None) -> bool:
        """Whether a wait moves the clock to the next change (rather than sleeping until it)."""
        if self._clock.manual:
            return True
        return self._settings.fast_forward_waits if fast_forward is None else fast_forward

    def job(self, jobs: Jobs[J], name: str, fast_forward: bool | None = None) -> J:
        """Block until the job has ended, or nothing more can happen to it."""
        while True:
            job, moved = self.step_job(jobs, name, None, fast_forward)
            if jobs.finished(job) or not moved:
                return job

    def step_job(
        self, jobs: Jobs[J], name: str, max_wait: float | None, fast_forward: bool | None = None
    ) -> tuple[J, bool]:
        """One step of :meth:`job` (at most ``max_wait`` real seconds); whether anything can move."""
        clock = self._clock
        with self._lock:
            clock.catch_up()
            job = jobs.get(name)
            if jobs.finished(job):
                return job, False
            running = jobs.running(job)
            due = clock.next_due()
            now = clock.now()
        if running:
            self._settle(jobs, job, due, now, max_wait)
            return job, True
        if due is None:
            return job, False
        self.until(due, max_wait, fast_forward)
        return job, True

    def until(self, due: datetime, max_wait: float | None = None, fast_forward: bool | None = None) -> None:
        """Move to ``due`` (forwarding) or sleep towards it (at most ``max_wait`` s), then apply changes."""
        clock = self._clock
        if self.forwards(fast_forward):
            with self._lock:
                clock.advance(max(due - clock.now(), timedelta(0)))
            return
        seconds = min((due - clock.now()).total_seconds(), WALL_STEP_SECONDS)
        if max_wait is not None:
            seconds = min(seconds, max_wait)
        if seconds > 0:
            self._sleep(seconds)
        with self._lock:
            clock.catch_up()

    def next_change(self, fast_forward: bool | None = None) -> bool:
        """Wait for the next scheduled change (if any) and apply it; False when nothing is scheduled."""
        due = self._clock.next_due()
        if due is None:
            return False
        while self._clock.next_due() == due and self._clock.now() < due:
            self.until(due, None, fast_forward)
        with self._lock:
            self._clock.catch_up()
        return True

    def _settle(
        self,
        jobs: Jobs[J],
        job: J,
        due: datetime | None,
        now: datetime,
        max_wait: float | None,
    ) -> None:
        """Wait for the job's process, up to the next change; a manual clock then moves to it."""
        clock = self._clock
        budget = None if due is None else max(0.0, (due - now).total_seconds())
        if max_wait is not None:
            budget = max_wait if budget is None else min(budget, max_wait)
        jobs.settle(job, budget)
        with self._lock:
            still_running = jobs.running(job)
            if (
                clock.manual
                and still_running
                and due is not None
                and budget is not None
                and (max_wait is None or budget >= (due - now).total_seconds())
            ):
                clock.advance(max(due - clock.now(), timedelta(0)))
            clock.catch_up()
