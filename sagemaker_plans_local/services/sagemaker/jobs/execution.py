"""The port through which a training job runs real code (the local runtime implements it).

The domain decides *when* a job trains; an :class:`Executor` decides *how*:
it starts a run when training starts and reports how it ended. A run's
virtual duration is its real duration, counted from the job's virtual
training start, so on a manual clock ``clock.advance`` waits for a running
process until it exits or has run as long as the advance asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from datetime import datetime

    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob


@attrs.frozen
class RunResult:
    """How a run ended: its exit code, real duration and, on failure, why."""

    exit_code: int
    duration: float
    failure_reason: str | None = None


class Run(Protocol):
    """One running entry point."""

    def elapsed(self) -> float:
        """Real seconds since the run started."""

    def wait(self, timeout: float | None) -> RunResult | None:
        """Block until the run ends (its result) or ``timeout`` real seconds pass (None)."""

    def stop(self) -> None:
        """Terminate the run (SIGTERM, then kill); its result follows."""


class Executor(Protocol):
    """Runs the code of jobs that carry some (script-mode jobs)."""

    def runs(self, job: "TrainingJob") -> bool:
        """Whether ``job`` has code this executor runs."""

    def start(self, job: "TrainingJob", at: "datetime") -> Run:
        """Start ``job``'s code at virtual time ``at``; returns at once."""

    def ended(self, job: "TrainingJob", started: "datetime", result: RunResult, at: "datetime") -> None:
        """The run of ``job`` started at ``started`` was recorded as ended at ``at`` (a durable backend journals it)."""

    def release(self, pool_id: str) -> None:
        """The warm pool ended: forget its instances (their virtualenvs and files)."""

    def close(self, timeout: float | None = None) -> None:
        """Stop every run and wait for each to end (at most ``timeout`` real seconds each)."""
