"""Training jobs on training plans: admission, waiting for capacity, block cutoffs.

A job on a plan runs only on the plan's active block. Without free instances
it waits (``InProgress``/``Pending``) in the plan's queue; waiting counts
against ``MaxPendingTimeInSeconds`` only while the plan is ``Active``: an
explicit limit that runs out stops the job (the API reference: "pending before
it is stopped"); the 2-day default fails it with ``InsufficientCapacityError``.
At a block's cutoff its jobs go back to waiting and resume, with
their progress, in the next block; with no block left they fail.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable, Mapping

from sagemaker_plans_local.core.clock import Event, VirtualClock
from sagemaker_plans_local.core.errors import InvalidRequest
from sagemaker_plans_local.services.sagemaker.plans.offerings import PlanTarget
from sagemaker_plans_local.services.sagemaker.plans.plan_records import PlanEvent
from sagemaker_plans_local.services.sagemaker.plans.training_plans import (
    ReservedCapacity,
    TrainingPlan,
    TrainingPlans,
)
from sagemaker_plans_local.services.sagemaker.statuses import USABLE_PLAN_STATUSES, PlanStatus

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob

#: Pending limit when the job sets no MaxPendingTimeInSeconds.
DEFAULT_MAX_PENDING = timedelta(days=2)
INSUFFICIENT_CAPACITY = (
    "InsufficientCapacityError: The training job waited longer than its maximum "
    "pending time for compute capacity from training plan {plan}."
)
#: The StatusMessage of a job stopped by its MaxPendingTimeInSeconds (chosen wording).
PENDING_STOPPED = "Training job stopped: the maximum allowed pending time was exceeded"
NO_BLOCK_LEFT = (
    "CapacityError: The reserved capacity of training plan {plan} ended before the "
    "training job completed, and the plan has no later capacity block."
)


def consumer_key(job: "TrainingJob") -> str:
    return f"job:{job.name}"


def plan_of(job: "TrainingJob") -> TrainingPlan:
    """The plan of a job on a plan (the only jobs this module sees)."""
    assert job.plan is not None
    return job.plan


class PlanQueue:
    """Admits jobs to their plans' capacity and moves them at block boundaries."""

    def __init__(
        self,
        clock: VirtualClock,
        plans: TrainingPlans,
        start: Callable[["TrainingJob", ReservedCapacity, datetime], None],
        interrupt: Callable[["TrainingJob", datetime], None],
        fail: Callable[["TrainingJob", datetime, str], None],
        stop: Callable[["TrainingJob", datetime, str], None],
        end_pools: Callable[[TrainingPlan, datetime], None],
    ) -> None:
        self._clock = clock
        self._plans = plans
        self._start = start
        self._interrupt = interrupt
        self._fail = fail
        self._stop = stop
        self._end_pools = end_pools
        self._waiting: dict[str, list["TrainingJob"]] = {}
        self._running: dict[str, dict[str, "TrainingJob"]] = {}
        self._timers: dict[str, tuple[Event, datetime]] = {}
        self._waited: dict[str, timedelta] = {}
        plans.subscribe(self._on_plan_event)

    def plan_for(self, spec: Mapping) -> TrainingPlan | None:
        """The plan a CreateTrainingJob request names, after checking it can be used."""
        resources = spec.get("ResourceConfig") or {}
        arn = resources.get("TrainingPlanArn")
        if not arn:
            return None
        plan = self._plans.get(arn)
        if resources.get("InstanceGroups"):
            raise InvalidRequest(
                "A training plan cannot be used with heterogeneous clusters (InstanceGroups)."
            )
        if plan.target != PlanTarget.TRAINING_JOB:
            raise InvalidRequest(
                f"Training plan {plan.name} targets {plan.target}; it cannot be used for training jobs."
            )
        if resources["InstanceType"] != plan.instance_type:
            raise InvalidRequest(
                f"The instance type {resources['InstanceType']} does not match the "
                f"instance type {plan.instance_type} of training plan {plan.name}."
            )
        if resources["InstanceCount"] > plan.usable_count:
            raise InvalidRequest(
                f"The instance count {resources['InstanceCount']} exceeds the "
                f"{plan.usable_count} usable instances of training plan {plan.name}."
            )
        if plan.status not in USABLE_PLAN_STATUSES:
            raise InvalidRequest(
                f"Training plan {plan.name} is {plan.status}; only Scheduled or "
                "Active plans can run training jobs."
            )
        return plan

    def admit(self, job: "TrainingJob", at: datetime) -> None:
        """Start ``job`` on its plan's free instances, or queue it."""
        rc = self._plans.allocate(plan_of(job), consumer_key(job), job.instance_count, at)
        if rc is not None:
            self._run(job, rc, at)
        else:
            self._wait(job, at)

    def adopt(self, job: "TrainingJob", giver: str) -> None:
        """``job`` takes over instances held for it by ``giver`` (a warm pool)."""
        self._plans.hand_over(plan_of(job), giver, consumer_key(job))
        self._running.setdefault(plan_of(job).arn, {})[job.name] = job

    def leave(self, job: "TrainingJob", at: datetime, heir: str | None = None) -> None:
        """``job`` ended: free its instances (or hand them to ``heir``) and admit waiters."""
        plan = plan_of(job)
        self._stop_timer(job, at)
        waiting = self._waiting.get(plan.arn, [])
        if job in waiting:
            waiting.remove(job)
        self._running.get(plan.arn, {}).pop(job.name, None)
        if heir is not None:
            self._plans.hand_over(plan, consumer_key(job), heir)
        else:
            self._plans.release(plan, consumer_key(job))
        self._admit_waiting(plan, at)

    def release_pool(self, plan: TrainingPlan, key: str, at: datetime) -> None:
        self._plans.release(plan, key)
        self._admit_waiting(plan, at)

    # -- internals -------------------------------------------------------------
    def _run(self, job: "TrainingJob", rc: ReservedCapacity, at: datetime) -> None:
        self._running.setdefault(plan_of(job).arn, {})[job.name] = job
        self._stop_timer(job, at)
        self._start(job, rc, at)

    def _wait(self, job: "TrainingJob", at: datetime) -> None:
        self._waiting.setdefault(plan_of(job).arn, []).append(job)
        if plan_of(job).status == PlanStatus.ACTIVE:
            self._start_timer(job, at)

    def _admit_waiting(self, plan: TrainingPlan, at: datetime) -> None:
        for job in list(self._waiting.get(plan.arn, [])):
            rc = self._plans.allocate(plan, consumer_key(job), job.instance_count, at)
            if rc is not None:
                self._waiting[plan.arn].remove(job)
                self._run(job, rc, at)

    def _on_plan_event(
        self, plan: TrainingPlan, event: PlanEvent, rc: ReservedCapacity, at: datetime
    ) -> None:
        if event == PlanEvent.ACTIVE:
            for job in self._waiting.get(plan.arn, []):
                self._start_timer(job, at)
            self._admit_waiting(plan, at)
        elif event == PlanEvent.CUTOFF:
            self._end_pools(plan, at)
            for job in list(self._running.get(plan.arn, {}).values()):
                self._running[plan.arn].pop(job.name, None)
                self._plans.release(plan, consumer_key(job))
                if plan.has_block_after(rc.end):
                    self._interrupt(job, at)
                    self._wait(job, at)
                else:
                    self._fail(job, at, NO_BLOCK_LEFT.format(plan=plan.name))
            for job in self._waiting.get(plan.arn, []):
                self._stop_timer(job, at)
        elif event == PlanEvent.ENDED and not plan.has_block_after(rc.end):
            for job in list(self._waiting.get(plan.arn, [])):
                self._fail(job, at, NO_BLOCK_LEFT.format(plan=plan.name))

    def _start_timer(self, job: "TrainingJob", at: datetime) -> None:
        if job.name in self._timers:
            return
        limit = job.max_pending_seconds
        budget = (timedelta(seconds=limit) if limit else DEFAULT_MAX_PENDING) - self._waited.get(
            job.name, timedelta(0)
        )
        event = self._clock.schedule(at + max(budget, timedelta(0)), lambda t: self._pending_too_long(job, t))
        self._timers[job.name] = (event, at)

    def _pending_too_long(self, job: "TrainingJob", at: datetime) -> None:
        """An explicit MaxPendingTimeInSeconds stops the job; the default limit fails it."""
        if job.max_pending_seconds:
            self._stop(job, at, PENDING_STOPPED)
        else:
            self._fail(job, at, INSUFFICIENT_CAPACITY.format(plan=plan_of(job).name))

    def _stop_timer(self, job: "TrainingJob", at: datetime) -> None:
        entry = self._timers.pop(job.name, None)
        if entry is not None:
            event, since = entry
            event.cancel()
            self._waited[job.name] = self._waited.get(job.name, timedelta(0)) + (at - since)
