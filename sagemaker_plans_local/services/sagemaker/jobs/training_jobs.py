"""Training jobs: creation rules, status progression on the clock, stop, update, delete.

:class:`TrainingJobs` is the one part that changes jobs and schedules their
changes on the clock. Its collaborators return decisions it applies: the warm
pools (:mod:`..warm_pools.pools`), the plan queue (:mod:`..plans.plan_jobs`)
and the local runs (:mod:`.local_runs`).
"""

from __future__ import annotations

import itertools
import operator
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from sagemaker_plans_local.core.arns import sagemaker_arn
from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.errors import InUse, InvalidRequest, JobNotFound
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.core.store import Position, Shared, Table
from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor, RunResult
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
from sagemaker_plans_local.services.sagemaker.jobs.job_rules import (
    check_create_rules,
    check_keep_alive,
    check_pool_updatable,
)
from sagemaker_plans_local.services.sagemaker.jobs.lifecycle import JobLifecycle
from sagemaker_plans_local.services.sagemaker.jobs.local_runs import LocalRuns
from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript
from sagemaker_plans_local.services.sagemaker.plans.training_plans import TrainingPlans
from sagemaker_plans_local.services.sagemaker.statuses import (
    FINISHED_JOB_STATUSES,
    JobStatus,
    SecondaryStatus,
    WarmPoolStatus,
)
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import WarmPools


#: The sorted indexes of the job table: creation order, name, status (re-sorted as it changes).
def _created(job: TrainingJob) -> float:
    return job.created_at.timestamp()


JOB_INDEXES: dict[str, Callable[[TrainingJob], Any]] = {
    "created": _created,
    "name": operator.attrgetter("name"),
    "status": operator.attrgetter("status"),
}
WAITING_MESSAGE = "Waiting for compute capacity from the training plan"


class TrainingJobs:
    """The training jobs of one region, with their warm pools; ``executor`` runs script-mode code."""

    def __init__(
        self,
        clock: VirtualClock,
        settings: Settings,
        region: str,
        account_id: str,
        cache_root: Path,
        script_for: Callable[[str], JobScript],
        plans: TrainingPlans,
        lock: threading.RLock,
        executor: Executor | None = None,
    ) -> None:
        self._clock = clock
        self._settings = settings
        self._region = region
        self._account_id = account_id
        # Names are unique regardless of case (the ARN, the job's id, lower-cases them).
        self._jobs: Table[TrainingJob] = Table(JOB_INDEXES, fold_case=True)
        self._shared = Shared()  # what jobs' requests repeat is held once
        self._sequence = itertools.count()
        self.pools = WarmPools(settings, cache_root)
        self.local_runs = LocalRuns(clock, executor)
        self._life = JobLifecycle(
            clock, settings, self._jobs, script_for, plans, lock, self.pools, self.local_runs
        )

    def run_ended_elsewhere(self, job_name: str, started: datetime, result: RunResult, at: datetime) -> bool:
        """A run of the job started at ``started`` by another process ended at ``at``; whether it was active."""
        ended = self.local_runs.resolve(job_name, started, result, at)
        self._life.end_run(ended)
        return ended is not None

    # -- queries -----------------------------------------------------------
    @property
    def executor(self) -> Executor | None:
        """What runs the code of script-mode jobs (None: they are simulated)."""
        return self.local_runs.executor

    def get(self, name: str) -> TrainingJob:
        job = self._jobs.get(name)
        if job is None:
            raise JobNotFound()
        return job

    def all(self) -> Iterable[TrainingJob]:
        return iter(self._jobs)

    def scan(
        self, index: str, descending: bool = False, after: Position | None = None
    ) -> Iterator[tuple[Position, TrainingJob]]:
        """Jobs in the order of one of ``JOB_INDEXES``, resuming after ``after``."""
        return self._jobs.scan(index, descending, after)

    def finished(self, job: TrainingJob) -> bool:
        """Whether ``job`` has ended (Completed, Failed or Stopped)."""
        return job.status in FINISHED_JOB_STATUSES

    def running(self, job: TrainingJob) -> bool:
        """Whether ``job``'s code is running as a local process."""
        return self.local_runs.running(job) is not None

    # -- commands ----------------------------------------------------------
    def create(self, spec: dict) -> TrainingJob:
        """Create a job from a validated request; it starts at once (cold or warm)."""
        spec = self._shared.copy(spec)  # its own dicts and lists; what it repeats of other jobs' held once
        name = spec["TrainingJobName"]
        arn = sagemaker_arn(self._region, self._account_id, "training-job", name)
        if name in self._jobs:
            raise InUse(
                "Training job names must be unique within an AWS account and region, "
                f"and a training job with this name already exists ({arn})"
            )
        check_create_rules(spec, self._settings)
        plan = self._life.queue.plan_for(spec)
        at = self._clock.now()
        job = TrainingJob(name, arn, spec, at, next(self._sequence), last_modified=at, plan=plan)
        pool = self.pools.find_match(spec) if not job.resource_config.get("InstanceGroups") else None
        if pool is None and plan is None:
            self._life.check_instance_quota(job.instance_demand())
        self._jobs.put(name, job)
        if pool is not None:
            self._life.start_warm(job, pool, at)
        elif plan is not None:
            self._life.decide(self._life.queue.admit(job, at))
            if not job.transitions:
                job.enter(SecondaryStatus.PENDING, at, WAITING_MESSAGE)
        else:
            self._life.start_cold(job, at)
        return job

    def stop(self, name: str) -> TrainingJob:
        job = self.get(name)
        if job.status != JobStatus.IN_PROGRESS:
            raise InvalidRequest(
                f"The request was rejected because the training job is in status {job.status}."
            )
        self._life.begin_stopping(job, self._clock.now(), SecondaryStatus.STOPPED)
        return job

    def update_keep_alive(self, name: str, seconds: int) -> TrainingJob:
        job = self.get(name)
        check_keep_alive(seconds, self._settings)
        if job.status not in FINISHED_JOB_STATUSES:
            raise InvalidRequest(
                "You can update KeepAlivePeriodInSeconds only for a training "
                f"job that has finished; training job {name} is {job.status}."
            )
        pool = check_pool_updatable(job)
        assert job.ended_at is not None  # a finished job
        self._life.apply_pool(self.pools.update_keep_alive(pool, seconds, job.ended_at, self._clock.now()))
        job.resource_config["KeepAlivePeriodInSeconds"] = seconds
        job.last_modified = max(job.last_modified, self._clock.now())
        return job

    def touch(self, name: str) -> TrainingJob:
        """Record a change to the job's stored configuration (UpdateTrainingJob)."""
        job = self.get(name)
        job.last_modified = max(job.last_modified, self._clock.now())
        return job

    def delete(self, name: str) -> None:
        job = self.get(name)
        if job.status not in FINISHED_JOB_STATUSES:
            raise InUse(
                f"Training job {name} is in status {job.status}; only jobs in a "
                "terminal state (Completed, Failed, Stopped) can be deleted."
            )
        if job.warm_pool is not None and job.warm_pool.status == WarmPoolStatus.AVAILABLE:
            raise InUse(
                f"Training job {name} retains an Available warm pool; end it with "
                "UpdateTrainingJob (KeepAlivePeriodInSeconds=0) before deleting the job."
            )
        self._jobs.delete(name)

    def rescript(self, name: str) -> None:
        """Re-plan a running job after its script changed."""
        job = self._jobs.get(name)
        if job is None or job.status != JobStatus.IN_PROGRESS or job.segment_start is None:
            return
        self._life.cancel_events(job)
        self._life.plan_training(job, job.segment_start)

    def settle(self, job: TrainingJob, timeout: float | None) -> None:
        """Wait (without the lock) up to ``timeout`` real seconds for the job's process; record its end."""
        self._life.settle(job, timeout)
