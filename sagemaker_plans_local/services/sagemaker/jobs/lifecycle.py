"""The life of training jobs on the clock: provisioning, training, stopping, the end.

:class:`JobLifecycle` is the one part that changes a job's status and
schedules its changes on the clock. It subscribes to the clock (local runs'
ends) and the plans' events itself and applies the decisions its
collaborators return: the warm pools (:mod:`..warm_pools.pools`), the plan
queue (:mod:`..plans.plan_jobs`) and the local runs (:mod:`.local_runs`).
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from datetime import datetime, timedelta
from typing import Callable, Iterable, Mapping

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.settings import Settings, quota_for
from sagemaker_plans_local.core.store import Table
from sagemaker_plans_local.services.sagemaker.jobs.execution import Run, RunResult
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
from sagemaker_plans_local.services.sagemaker.jobs.job_rules import keeps_pool, limit_exceeded
from sagemaker_plans_local.services.sagemaker.jobs.local_runs import LocalRuns, RunEnded
from sagemaker_plans_local.services.sagemaker.jobs.phases import (
    STOPPING_SECONDS,
    JobScript,
    Provisioning,
    Step,
    Timeline,
    seconds_between,
    training_steps,
)
from sagemaker_plans_local.services.sagemaker.plans.plan_jobs import (
    Fail,
    Interrupt,
    PlanQueue,
    QueueDecision,
    Start,
    Stop,
)
from sagemaker_plans_local.services.sagemaker.plans.plan_records import PlanEvent
from sagemaker_plans_local.services.sagemaker.plans.training_plans import (
    ReservedCapacity,
    TrainingPlan,
    TrainingPlans,
)
from sagemaker_plans_local.services.sagemaker.statuses import JobStatus, SecondaryStatus, WarmPoolStatus
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import (
    PoolChange,
    PoolEnded,
    PoolKept,
    WarmPool,
    WarmPools,
    WarmPoolView,
    pool_key,
)

STOP_MESSAGES = {
    SecondaryStatus.STOPPED: "Training job stopped",
    SecondaryStatus.MAX_RUNTIME_EXCEEDED: "Training job stopped: the maximum allowed runtime was exceeded",
}
INTERRUPTED_MESSAGE = (
    "The reserved capacity block is ending; waiting for compute capacity "
    "in the next block of the training plan"
)
LAUNCHING_MESSAGE = "Launching requested ML instances"
TRAINING_MESSAGE = "Training image download completed. Training in progress."
UPLOADING_MESSAGE = "Uploading generated training model"


class JobLifecycle:
    """Moves the jobs of ``jobs`` along the clock; owns their quota usage."""

    def __init__(
        self,
        clock: VirtualClock,
        settings: Settings,
        jobs: Table[TrainingJob],
        script_for: Callable[[str], JobScript],
        plans: TrainingPlans,
        lock: threading.RLock,
        pools: WarmPools,
        local_runs: LocalRuns,
    ) -> None:
        self._clock = clock
        self._settings = settings
        self._jobs = jobs
        self._script_for = script_for
        self._lock = lock
        self.pools = pools
        self.local_runs = local_runs
        # Instances of running jobs off plans counted against the training-instance quota, by type.
        self._usage: Counter[str] = Counter()
        clock.add_waiter(self._wait_for_runs)
        self.queue = PlanQueue(plans)
        plans.subscribe(self._on_plan_event)

    def start_cold(self, job: TrainingJob, at: datetime) -> None:
        """Start a job off any plan on new instances (counted against the quota)."""
        self._use(job, 1)
        self.start_on_capacity(job, None, at)

    def settle(self, job: TrainingJob, timeout: float | None) -> None:
        """Wait (without the lock) up to ``timeout`` real seconds for the job's process; record its end."""
        run = self.local_runs.running(job)
        if run is None:
            return
        result = run.wait(timeout)
        if result is not None:
            with self._lock:
                self.end_run(self.local_runs.record(job, run, result))

    def _service_seconds(self, seconds: float) -> float:
        return self._settings.service_seconds(seconds, self._clock.manual)

    def _schedule(self, job: TrainingJob, at: datetime, action: Callable[[datetime], None]) -> None:
        job.events.append(self._clock.schedule(at, action))

    def cancel_events(self, job: TrainingJob) -> None:
        for event in job.events:
            event.cancel()
        job.events.clear()

    def start_warm(self, job: TrainingJob, pool: WarmPool, at: datetime) -> None:
        """Start ``job`` on the Available ``pool`` it matched."""
        giver = pool_key(pool)
        handover = self.pools.claim(pool, job.name, at)
        previous = self._jobs.get(handover.previous)
        assert previous is not None  # an Available pool's holder cannot be deleted
        previous.warm_pool = WarmPoolView(
            WarmPoolStatus.REUSED, handover.retained_seconds, reused_by=job.name
        )
        previous.last_modified = at
        job.pool = pool
        job.warm_pool = WarmPoolView(WarmPoolStatus.IN_USE)
        job.warm_start = True
        job.instances_started = True
        if job.plan is not None:
            self.queue.adopt(job, giver)
            job.block = job.plan.active_block()
        else:
            self._use(job, 1)
        job.enter(SecondaryStatus.STARTING, at, "Starting the training job")
        warm = Provisioning.warm(self._service_seconds(self._settings.warm_start_seconds))
        self._plan_provisioning(job, at, warm)

    def _plan_provisioning(self, job: TrainingJob, at: datetime, plan: Provisioning) -> None:
        if plan.launching:
            self._schedule(job, at + plan.launching, functools.partial(job.say, LAUNCHING_MESSAGE))
        self._schedule(job, at + plan.preparing, functools.partial(self._preparing, job))
        self._schedule(job, at + plan.training_start, functools.partial(self._start_training, job))

    def _open_pool(self, job: TrainingJob) -> WarmPool:
        return self.pools.open(job.name, job.spec, job.plan.arn if job.plan is not None else None)

    def _preparing(self, job: TrainingJob, at: datetime) -> None:
        job.instances_started = True
        job.say("Preparing the instances for training", at)

    def start_on_capacity(self, job: TrainingJob, block: ReservedCapacity | None, at: datetime) -> None:
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
            job.pool = self._open_pool(job)
        job.enter(SecondaryStatus.DOWNLOADING, at, "Downloading input data")
        if self.local_runs.runs(job):
            self._run_locally(job, at)
        else:
            self.plan_training(job, at)

    def _run_locally(self, job: TrainingJob, at: datetime) -> None:
        """Run the job's entry point for real; its end comes from the process."""
        job.enter(SecondaryStatus.TRAINING, at, TRAINING_MESSAGE)
        run = self.local_runs.start(job, at)
        threading.Thread(target=self._watch, args=(job, run), daemon=True, name=f"watch-{job.name}").start()
        max_runtime = job.max_runtime_seconds
        if max_runtime is not None:
            cutoff = at + timedelta(seconds=max(0.0, max_runtime - job.trained_seconds))
            self._schedule(
                job,
                cutoff,
                functools.partial(self.begin_stopping, job, final=SecondaryStatus.MAX_RUNTIME_EXCEEDED),
            )

    def _watch(self, job: TrainingJob, run: Run) -> None:
        """The watcher thread of a local run: records its end as soon as the process exits."""
        result = run.wait(None)
        assert result is not None  # no timeout: wait returns the run's result
        with self._lock:
            self.end_run(self.local_runs.record(job, run, result))
            self._clock.catch_up()

    def _wait_for_runs(self, moment: datetime) -> None:
        """The clock's waiter: before a manual clock reaches ``moment``, let running processes catch up."""
        for ended in self.local_runs.wait_until(moment):
            self.end_run(ended)

    def end_run(self, ended: RunEnded | None) -> None:
        if ended is not None:
            self._clock.schedule(ended.at, functools.partial(self._run_ended, ended.job, ended.result))

    def _run_ended(self, job: TrainingJob, result: RunResult, at: datetime) -> None:
        if job.status == JobStatus.STOPPING:
            self._finish(job, at, JobStatus.STOPPED, job.stop_reason, STOP_MESSAGES[job.stop_reason])
        elif job.status != JobStatus.IN_PROGRESS:
            return
        elif result.exit_code == 0:
            self.cancel_events(job)
            job.enter(SecondaryStatus.UPLOADING, at, UPLOADING_MESSAGE)
            self._finish(job, at, JobStatus.COMPLETED, SecondaryStatus.COMPLETED, "Training job completed")
        else:
            reason = result.failure_reason or f"exit code {result.exit_code}"
            if not reason.startswith(("ClientError: ", "InternalServerError: ")):
                reason = "AlgorithmError: " + reason
            self._fail(job, at, reason)

    def plan_training(self, job: TrainingJob, start: datetime) -> None:
        """Schedule the simulated rest of a training segment that started at ``start``."""
        script = self._script_for(job.name)
        runtime = script.runtime_seconds
        timeline = Timeline(
            runtime if runtime is not None else self._service_seconds(self._settings.job_runtime_seconds),
            job.trained_seconds,
            job.max_runtime_seconds,
            script.fails,
            downloading=job.secondary_status == SecondaryStatus.DOWNLOADING,
            uploads=job.secondary_status in (SecondaryStatus.DOWNLOADING, SecondaryStatus.TRAINING),
        )
        for at, step in training_steps(timeline, start, self._clock.now()):
            self._schedule(job, at, functools.partial(self._take_step, job, step, script))

    def _take_step(self, job: TrainingJob, step: Step, script: JobScript, at: datetime) -> None:
        if step == Step.TRAINING:
            job.enter(SecondaryStatus.TRAINING, at, TRAINING_MESSAGE)
        elif step == Step.UPLOADING:
            job.enter(SecondaryStatus.UPLOADING, at, UPLOADING_MESSAGE)
        elif step == Step.MAX_RUNTIME:
            self.begin_stopping(job, at, SecondaryStatus.MAX_RUNTIME_EXCEEDED)
        elif step == Step.FAILED:
            failure = script.failure_message()
            self._finish(job, at, JobStatus.FAILED, SecondaryStatus.FAILED, "Training job failed", failure)
        else:
            self._finish(job, at, JobStatus.COMPLETED, SecondaryStatus.COMPLETED, "Training job completed")

    def begin_stopping(self, job: TrainingJob, at: datetime, final: SecondaryStatus) -> None:
        self.cancel_events(job)
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
            functools.partial(
                self._finish, job, status=JobStatus.STOPPED, secondary=final, message=STOP_MESSAGES[final]
            ),
        )

    def _fail(self, job: TrainingJob, at: datetime, reason: str) -> None:
        self.cancel_events(job)
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
            self._use(job, -1)
        keep = keeps_pool(status, job.instances_started, failure_reason)
        self._release_pool(job, at, keep and (job.plan is None or job.block is not None))
        if job.plan is not None:
            pool = job.pool
            heir = pool_key(pool) if pool is not None and pool.state == WarmPoolStatus.AVAILABLE else None
            self.decide(self.queue.leave(job, at, heir=heir))
        job.block = None

    # -- decisions of the plan queue and the warm pools ------------------------
    def decide(self, decisions: Iterable[QueueDecision]) -> None:
        """Apply the plan queue's decisions, each as it is made."""
        for decision in decisions:
            if isinstance(decision, Start):
                self.start_on_capacity(decision.job, decision.block, decision.at)
            elif isinstance(decision, Interrupt):
                self._interrupt(decision.job, decision.at)
            elif isinstance(decision, Fail):
                self._fail(decision.job, decision.at, decision.reason)
            elif isinstance(decision, Stop):
                self.cancel_events(decision.job)
                self._finish(
                    decision.job, decision.at, JobStatus.STOPPED, SecondaryStatus.STOPPED, decision.message
                )
            else:
                expired = functools.partial(self._pending_expired, decision.job)
                self.queue.watch(decision.job, self._clock.schedule(decision.due, expired))

    def _pending_expired(self, job: TrainingJob, at: datetime) -> None:
        self.decide([self.queue.pending_expired(job, at)])

    def _interrupt(self, job: TrainingJob, at: datetime) -> None:
        """The plan's block took the instances back: wait, progress kept, for the next block."""
        self.cancel_events(job)
        self.local_runs.abandon(job)
        job.close_segment(at)
        job.block = None
        job.enter(SecondaryStatus.PENDING, at, INTERRUPTED_MESSAGE)

    def _on_plan_event(
        self, plan: TrainingPlan, event: PlanEvent, rc: ReservedCapacity, at: datetime
    ) -> None:
        if event == PlanEvent.CUTOFF:
            for ended in self.pools.terminate_plan_pools(plan.arn, at):
                self._pool_ended(ended)
        self.decide(self.queue.on_plan_event(plan, event, rc, at))

    def _release_pool(self, job: TrainingJob, at: datetime, keep: bool) -> None:
        """``job`` ended at ``at``: its warm pool stays Available (``keep``) or ends."""
        keep_alive = job.keep_alive_seconds
        pool = job.pool
        if pool is None:
            if not keep_alive:
                return
            if not keep:
                job.warm_pool = WarmPoolView(WarmPoolStatus.TERMINATED, 0)
                return
            pool = job.pool = self._open_pool(job)
        change = self.pools.release(pool, keep_alive, at, keep)
        if isinstance(change, PoolKept):
            job.warm_pool = WarmPoolView(WarmPoolStatus.AVAILABLE)
        self.apply_pool(change)

    def apply_pool(self, change: PoolChange | None) -> None:
        if isinstance(change, PoolKept):
            expire = functools.partial(self._expire_pool, change.pool)
            self.pools.expire_with(change.pool, self._clock.schedule(change.expires_at, expire))
        elif change is not None:
            self._pool_ended(change)

    def _expire_pool(self, pool: WarmPool, at: datetime) -> None:
        self.apply_pool(self.pools.terminate(pool, at))

    def _pool_ended(self, ended: PoolEnded) -> None:
        """Show the pool's ended holder Terminated; free the pool's instances."""
        pool, at = ended.pool, ended.at
        holder = self._jobs.get(pool.holder)
        if holder is not None and holder.ended_at is not None:
            holder.warm_pool = WarmPoolView(WarmPoolStatus.TERMINATED, seconds_between(holder.ended_at, at))
            holder.last_modified = max(holder.last_modified, at)
        self.local_runs.release_pool(pool.pool_id)
        if holder is not None and holder.plan is not None and holder.ended_at is not None:
            self.decide(self.queue.release_pool(holder.plan, pool_key(pool), at))

    # -- quotas ----------------------------------------------------------------
    def _use(self, job: TrainingJob, sign: int) -> None:
        """Count the job's instances in (1) or out (-1) of the quota usage."""
        usage = self._usage
        for instance_type, count in job.instance_demand().items():
            usage[instance_type] += sign * count

    def check_instance_quota(self, demand: Mapping[str, int]) -> None:
        for instance_type, count in demand.items():
            limit = quota_for(self._settings.instance_quota, instance_type)
            used = self._usage[instance_type] + self.pools.idle(instance_type)
            if limit is not None and used + count > limit:
                raise limit_exceeded(instance_type, limit, used, count)
