"""Training jobs: creation rules, status progression on the clock, stop, update, delete."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable, Iterable, Iterator

from sagemaker_plans_local.core.arns import sagemaker_arn
from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.errors import InUse, InvalidRequest, JobNotFound
from sagemaker_plans_local.core.settings import Settings, quota_for
from sagemaker_plans_local.core.store import Position, Table
from sagemaker_plans_local.services.sagemaker.jobs.execution import RunResult
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
from sagemaker_plans_local.services.sagemaker.jobs.job_rules import (
    check_create_rules,
    check_keep_alive,
    limit_exceeded,
)
from sagemaker_plans_local.services.sagemaker.jobs.local_runs import LocalRuns
from sagemaker_plans_local.services.sagemaker.jobs.phases import (
    STOPPING_SECONDS,
    JobScript,
    Provisioning,
    TrainingPhases,
)
from sagemaker_plans_local.services.sagemaker.plans.plan_jobs import PlanQueue
from sagemaker_plans_local.services.sagemaker.plans.training_plans import (
    ReservedCapacity,
    TrainingPlan,
    TrainingPlans,
)
from sagemaker_plans_local.services.sagemaker.statuses import (
    FINISHED_JOB_STATUSES,
    JobStatus,
    SecondaryStatus,
    WarmPoolStatus,
)
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import WarmPool, WarmPools, pool_key

#: Failures after which SageMaker keeps the warm pool (the cluster is healthy).
POOL_SAFE_FAILURES = ("AlgorithmError", "ClientError")
STOP_MESSAGES = {
    SecondaryStatus.STOPPED: "Training job stopped",
    SecondaryStatus.MAX_RUNTIME_EXCEEDED: "Training job stopped: the maximum allowed runtime was exceeded",
}
#: The sorted indexes of the job table: creation order, name, status (re-sorted as it changes).
JOB_INDEXES = {
    "created": lambda job: job.created_at.timestamp(),
    "name": lambda job: job.name,
    "status": lambda job: job.status,
}
WAITING_MESSAGE = "Waiting for compute capacity from the training plan"
INTERRUPTED_MESSAGE = (
    "The reserved capacity block is ending; waiting for compute capacity "
    "in the next block of the training plan"
)


class TrainingJobs:
    """The training jobs of one region, with their warm pools."""

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
    ) -> None:
        self._clock = clock
        self._settings = settings
        self._region = region
        self._account_id = account_id
        self._script_for = script_for
        # Names are unique regardless of case (the ARN, the job's id, lower-cases them).
        self._jobs: Table[TrainingJob] = Table(JOB_INDEXES, fold_case=True)
        self._sequence = itertools.count()
        # Instances counted against the training-instance quota, by type.
        self._usage: Counter[str] = Counter()
        self.pools = WarmPools(clock, settings, cache_root, self._count_idle, self._pool_ended)
        self.local_runs = LocalRuns(clock, lock, self._run_ended)
        self._queue = PlanQueue(
            clock,
            plans,
            self._start_on_capacity,
            self._interrupt,
            self._fail,
            self._stop_pending,
            self._end_plan_pools,
        )

    # -- queries -----------------------------------------------------------
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

    # -- commands ----------------------------------------------------------
    def create(self, spec: dict) -> TrainingJob:
        """Create a job from a validated request; it starts at once (cold or warm)."""
        name = spec["TrainingJobName"]
        arn = sagemaker_arn(self._region, self._account_id, "training-job", name)
        if name in self._jobs:
            raise InUse(
                "Training job names must be unique within an AWS account and region, "
                f"and a training job with this name already exists ({arn})"
            )
        check_create_rules(spec, self._settings)
        plan = self._queue.plan_for(spec)
        at = self._clock.now()
        job = TrainingJob(name, arn, spec, at, next(self._sequence), last_modified=at, plan=plan)
        pool = self.pools.find_match(spec) if not job.resource_config.get("InstanceGroups") else None
        if pool is None and plan is None:
            self._check_instance_quota(job.instance_demand())
        self._jobs.put(name, job)
        if pool is not None:
            giver = pool_key(pool)
            self.pools.claim(pool, job, at)
            job.warm_start = True
            job.instances_started = True
            if plan is not None:
                self._queue.adopt(job, giver)
                job.block = plan.active_block()
            else:
                self._usage.update(job.instance_demand())
            job.enter(SecondaryStatus.STARTING, at, "Starting the training job")
            warm = Provisioning.warm(self._service_seconds(self._settings.warm_start_seconds))
            self._plan_provisioning(job, at, warm)
        elif plan is not None:
            self._queue.admit(job, at)
            if not job.transitions:
                job.enter(SecondaryStatus.PENDING, at, WAITING_MESSAGE)
        else:
            self._usage.update(job.instance_demand())
            self._start_on_capacity(job, None, at)
        return job

    def stop(self, name: str) -> TrainingJob:
        job = self.get(name)
        if job.status != JobStatus.IN_PROGRESS:
            raise InvalidRequest(
                f"The request was rejected because the training job is in status {job.status}."
            )
        self._begin_stopping(job, self._clock.now(), SecondaryStatus.STOPPED)
        return job

    def update_keep_alive(self, name: str, seconds: int) -> TrainingJob:
        job = self.get(name)
        check_keep_alive(seconds, self._settings)
        if job.status not in FINISHED_JOB_STATUSES:
            raise InvalidRequest(
                "You can update KeepAlivePeriodInSeconds only for a training "
                f"job that has finished; training job {name} is {job.status}."
            )
        self.pools.update_keep_alive(job, seconds, self._clock.now())
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
        self._cancel_events(job)
        self._plan_training(job, job.segment_start)

    # -- progression ---------------------------------------------------------
    def _service_seconds(self, seconds: float) -> float:
        return self._settings.service_seconds(seconds, self._clock.manual)

    def _schedule(self, job: TrainingJob, at: datetime, action: Callable[[datetime], None]) -> None:
        job.events.append(self._clock.schedule(at, action))

    def _cancel_events(self, job: TrainingJob) -> None:
        for event in job.events:
            event.cancel()
        job.events.clear()

    def _plan_provisioning(self, job: TrainingJob, at: datetime, plan: Provisioning) -> None:
        if plan.launching:
            self._schedule(job, at + plan.launching, lambda t: job.say("Launching requested ML instances", t))
        self._schedule(job, at + plan.preparing, lambda t: self._preparing(job, t))
        self._schedule(job, at + plan.training_start, lambda t: self._start_training(job, t))

    def _preparing(self, job: TrainingJob, at: datetime) -> None:
        job.instances_started = True
        job.say("Preparing the instances for training", at)

    def _start_on_capacity(self, job: TrainingJob, block: ReservedCapacity | None, at: datetime) -> None:
        """Provision ``job`` cold (on its plan's ``block`` when it has one)."""
        job.block = block
        job.enter(SecondaryStatus.STARTING, at, "Starting the training job")
        self._plan_provisioning(
            job, at, Provisioning.cold(self._service_seconds(self._settings.cold_start_seconds))
        )

    def _start_training(self, job: TrainingJob, at: datetime) -> None:
        job.events.clear()
        if job.training_start is None:
            job.training_start = at
        job.segment_start = at
        if job.pool is None and job.keep_alive_seconds:
            self.pools.open(job)
        job.enter(SecondaryStatus.DOWNLOADING, at, "Downloading input data")
        if self.local_runs.runs(job):
            self._run_locally(job, at)
        else:
            self._plan_training(job, at)

    def _run_locally(self, job: TrainingJob, at: datetime) -> None:
        """Run the job's entry point for real; its end comes from the process."""
        job.enter(SecondaryStatus.TRAINING, at, "Training image download completed. Training in progress.")
        self.local_runs.start(job, at)
        max_runtime = job.max_runtime_seconds
        if max_runtime is not None:
            cutoff = at + timedelta(seconds=max(0.0, max_runtime - job.trained_seconds))
            self._schedule(
                job, cutoff, lambda t: self._begin_stopping(job, t, SecondaryStatus.MAX_RUNTIME_EXCEEDED)
            )

    def _run_ended(self, job: TrainingJob, result: RunResult, at: datetime) -> None:
        if job.status == JobStatus.STOPPING:
            self._finish(job, at, JobStatus.STOPPED, job.stop_reason, STOP_MESSAGES[job.stop_reason])
        elif job.status != JobStatus.IN_PROGRESS:
            return
        elif result.exit_code == 0:
            self._cancel_events(job)
            job.enter(SecondaryStatus.UPLOADING, at, "Uploading generated training model")
            self._finish(job, at, JobStatus.COMPLETED, SecondaryStatus.COMPLETED, "Training job completed")
        else:
            reason = result.failure_reason or f"exit code {result.exit_code}"
            if not reason.startswith("ClientError: "):
                reason = "AlgorithmError: " + reason
            self._fail(job, at, reason)

    def _plan_training(self, job: TrainingJob, start: datetime) -> None:
        script = self._script_for(job.name)
        runtime: float | None = script.runtime_seconds
        if runtime is None:
            runtime = self._service_seconds(self._settings.job_runtime_seconds)
        remaining = max(0.0, runtime - job.trained_seconds)
        phases = TrainingPhases.for_runtime(remaining)
        now = self._clock.now()
        if job.secondary_status == SecondaryStatus.DOWNLOADING:
            self._schedule(
                job,
                max(now, start + phases.training),
                lambda t: job.enter(
                    SecondaryStatus.TRAINING, t, "Training image download completed. Training in progress."
                ),
            )
        max_runtime = job.max_runtime_seconds
        if max_runtime is not None and runtime > max_runtime:
            cutoff = max(now, start + timedelta(seconds=max_runtime - job.trained_seconds))
            self._schedule(
                job, cutoff, lambda t: self._begin_stopping(job, t, SecondaryStatus.MAX_RUNTIME_EXCEEDED)
            )
            return
        end = max(now, start + phases.end)
        if script.fails:
            self._schedule(
                job,
                end,
                lambda t: self._finish(
                    job,
                    t,
                    JobStatus.FAILED,
                    SecondaryStatus.FAILED,
                    "Training job failed",
                    script.failure_message(),
                ),
            )
            return
        if job.secondary_status in (SecondaryStatus.DOWNLOADING, SecondaryStatus.TRAINING):
            self._schedule(
                job,
                max(now, start + phases.uploading),
                lambda t: job.enter(SecondaryStatus.UPLOADING, t, "Uploading generated training model"),
            )
        self._schedule(
            job,
            end,
            lambda t: self._finish(
                job, t, JobStatus.COMPLETED, SecondaryStatus.COMPLETED, "Training job completed"
            ),
        )

    def _begin_stopping(self, job: TrainingJob, at: datetime, final: SecondaryStatus) -> None:
        self._cancel_events(job)
        job.status = JobStatus.STOPPING
        self._jobs.reindex(job.name)
        job.stop_reason = final
        job.enter(SecondaryStatus.STOPPING, at, "Stopping the training job")
        if self.local_runs.running(job) is not None:
            self.local_runs.stop(job)  # Stopped when the process has exited
            return
        self._schedule(
            job,
            at + timedelta(seconds=self._service_seconds(STOPPING_SECONDS)),
            lambda t: self._finish(job, t, JobStatus.STOPPED, final, STOP_MESSAGES[final]),
        )

    def _interrupt(self, job: TrainingJob, at: datetime) -> None:
        """The plan's block took the instances back: wait, progress kept, for the next block."""
        self._cancel_events(job)
        self.local_runs.abandon(job)
        job.close_segment(at)
        job.block = None
        job.enter(SecondaryStatus.PENDING, at, INTERRUPTED_MESSAGE)

    def _stop_pending(self, job: TrainingJob, at: datetime, message: str) -> None:
        """A job that waited on its plan past its MaxPendingTimeInSeconds: Stopped, never started."""
        self._cancel_events(job)
        self._finish(job, at, JobStatus.STOPPED, SecondaryStatus.STOPPED, message)

    def _fail(self, job: TrainingJob, at: datetime, reason: str) -> None:
        self._cancel_events(job)
        self.local_runs.abandon(job)
        self._finish(job, at, JobStatus.FAILED, SecondaryStatus.FAILED, "Training job failed", reason)

    def _finish(
        self,
        job: TrainingJob,
        at: datetime,
        status: JobStatus,
        secondary: SecondaryStatus,
        message: str,
        failure_reason: str | None = None,
    ) -> None:
        job.events.clear()
        job.status = status
        self._jobs.reindex(job.name)
        job.failure_reason = failure_reason
        job.enter(secondary, at, message)
        job.transitions[-1].end = at
        job.ended_at = at
        job.close_segment(at)
        if job.training_start is not None:
            job.training_end = at
        if job.plan is None:
            self._usage.subtract(job.instance_demand())
        if status == JobStatus.COMPLETED:
            keep = True
        elif status == JobStatus.STOPPED:
            keep = job.instances_started
        else:
            keep = failure_reason is not None and failure_reason.startswith(POOL_SAFE_FAILURES)
        self.pools.release(job, at, keep and (job.plan is None or job.block is not None))
        if job.plan is not None:
            pool = job.pool
            heir = pool_key(pool) if pool is not None and pool.state == WarmPoolStatus.AVAILABLE else None
            self._queue.leave(job, at, heir=heir)
        job.block = None

    def _pool_ended(self, pool: WarmPool, at: datetime) -> None:
        self.local_runs.release_pool(pool.pool_id)
        plan = pool.holder.plan
        if plan is not None and pool.holder.ended_at is not None:
            self._queue.release_pool(plan, pool_key(pool), at)

    def _end_plan_pools(self, plan: TrainingPlan, at: datetime) -> None:
        self.pools.terminate_where(lambda pool: pool.holder.plan is plan, at)

    # -- quotas ----------------------------------------------------------------
    def _count_idle(self, instance_type: str, delta: int) -> None:
        self._usage[instance_type] += delta

    def _check_instance_quota(self, demand: Counter[str]) -> None:
        for instance_type, count in demand.items():
            limit = quota_for(self._settings.instance_quota, instance_type)
            used = self._usage[instance_type]
            if limit is not None and used + count > limit:
                raise limit_exceeded(instance_type, limit, used, count)
