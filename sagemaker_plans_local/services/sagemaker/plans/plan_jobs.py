"""Training jobs on training plans: admission, waiting for capacity, block cutoffs.

A job on a plan runs only on the plan's active block. Without free instances
it waits (``InProgress``/``Pending``) in the plan's queue; waiting counts
against ``MaxPendingTimeInSeconds`` only while the plan is ``Active``: an
explicit limit that runs out stops the job (the API reference: "pending before
it is stopped"); the 2-day default fails it with ``InsufficientCapacityError``.
At a block's cutoff its jobs go back to waiting and resume, with
their progress, in the next block; with no block left they fail.

:class:`PlanQueue` never touches a job or the clock: its commands yield
decisions (:class:`Start`, :class:`Interrupt`, :class:`Fail`, :class:`Stop`,
:class:`PendingLimit`) that the job service applies, each before the queue
goes on (so each decision takes effect as if applied in place).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Iterator, Mapping, Union

import attrs

from sagemaker_plans_local.core.clock import Event
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


@attrs.frozen
class Start:
    """Provision ``job`` cold on its plan's capacity ``block`` at ``at``."""

    job: "TrainingJob"
    block: ReservedCapacity
    at: datetime


@attrs.frozen
class Interrupt:
    """The block took ``job``'s instances back at ``at``: it waits, progress kept, for the next block."""

    job: "TrainingJob"
    at: datetime


@attrs.frozen
class Fail:
    """``job`` fails at ``at`` with FailureReason ``reason``."""

    job: "TrainingJob"
    at: datetime
    reason: str


@attrs.frozen
class Stop:
    """``job`` waited past its MaxPendingTimeInSeconds: Stopped at ``at``, never started."""

    job: "TrainingJob"
    at: datetime
    message: str


@attrs.frozen
class PendingLimit:
    """``job``'s pending budget runs out at ``due``: ask :meth:`PlanQueue.pending_expired` then.

    The job service schedules that and hands the event to :meth:`PlanQueue.watch`.
    """

    job: "TrainingJob"
    due: datetime


QueueDecision = Union[Start, Interrupt, Fail, Stop, PendingLimit]


@attrs.define
class _Timer:
    """A job's running pending budget: since when it counts, and the event that ends it."""

    since: datetime
    event: Event | None = None


class PlanQueue:
    """Admits jobs to their plans' capacity and moves them at block boundaries."""

    def __init__(self, plans: TrainingPlans) -> None:
        self._plans = plans
        self._waiting: dict[str, list["TrainingJob"]] = {}
        self._running: dict[str, dict[str, "TrainingJob"]] = {}
        self._timers: dict[str, _Timer] = {}
        self._waited: dict[str, timedelta] = {}

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

    def admit(self, job: "TrainingJob", at: datetime) -> Iterator[QueueDecision]:
        """Start ``job`` on its plan's free instances, or queue it."""
        rc = self._plans.allocate(plan_of(job), consumer_key(job), job.instance_count, at)
        if rc is not None:
            yield from self._run(job, rc, at)
        else:
            yield from self._wait(job, at)

    def adopt(self, job: "TrainingJob", giver: str) -> None:
        """``job`` takes over instances held for it by ``giver`` (a warm pool)."""
        self._plans.hand_over(plan_of(job), giver, consumer_key(job))
        self._running.setdefault(plan_of(job).arn, {})[job.name] = job

    def leave(self, job: "TrainingJob", at: datetime, heir: str | None = None) -> Iterator[QueueDecision]:
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
        yield from self._admit_waiting(plan, at)

    def release_pool(self, plan: TrainingPlan, key: str, at: datetime) -> Iterator[QueueDecision]:
        """The warm pool ``key`` on ``plan`` ended: free its instances, admit waiters."""
        self._plans.release(plan, key)
        yield from self._admit_waiting(plan, at)

    def on_plan_event(
        self, plan: TrainingPlan, event: PlanEvent, rc: ReservedCapacity, at: datetime
    ) -> Iterator[QueueDecision]:
        """What the plan's jobs do when its block ``rc`` becomes active, is cut off, or ends."""
        if event == PlanEvent.ACTIVE:
            for job in self._waiting.get(plan.arn, []):
                yield from self._start_timer(job, at)
            yield from self._admit_waiting(plan, at)
        elif event == PlanEvent.CUTOFF:
            for job in list(self._running.get(plan.arn, {}).values()):
                self._running[plan.arn].pop(job.name, None)
                self._plans.release(plan, consumer_key(job))
                if plan.has_block_after(rc.end):
                    yield Interrupt(job, at)
                    yield from self._wait(job, at)
                else:
                    yield Fail(job, at, NO_BLOCK_LEFT.format(plan=plan.name))
            for job in self._waiting.get(plan.arn, []):
                self._stop_timer(job, at)
        elif event == PlanEvent.ENDED and not plan.has_block_after(rc.end):
            for job in list(self._waiting.get(plan.arn, [])):
                yield Fail(job, at, NO_BLOCK_LEFT.format(plan=plan.name))

    def watch(self, job: "TrainingJob", event: Event) -> None:
        """``event`` calls :meth:`pending_expired` for ``job`` when its :class:`PendingLimit` is due."""
        self._timers[job.name].event = event

    def pending_expired(self, job: "TrainingJob", at: datetime) -> Stop | Fail:
        """An explicit MaxPendingTimeInSeconds stops the job; the default limit fails it."""
        if job.max_pending_seconds:
            return Stop(job, at, PENDING_STOPPED)
        return Fail(job, at, INSUFFICIENT_CAPACITY.format(plan=plan_of(job).name))

    # -- internals -------------------------------------------------------------
    def _run(self, job: "TrainingJob", rc: ReservedCapacity, at: datetime) -> Iterator[QueueDecision]:
        self._running.setdefault(plan_of(job).arn, {})[job.name] = job
        self._stop_timer(job, at)
        yield Start(job, rc, at)

    def _wait(self, job: "TrainingJob", at: datetime) -> Iterator[QueueDecision]:
        self._waiting.setdefault(plan_of(job).arn, []).append(job)
        if plan_of(job).status == PlanStatus.ACTIVE:
            yield from self._start_timer(job, at)

    def _admit_waiting(self, plan: TrainingPlan, at: datetime) -> Iterator[QueueDecision]:
        for job in list(self._waiting.get(plan.arn, [])):
            rc = self._plans.allocate(plan, consumer_key(job), job.instance_count, at)
            if rc is not None:
                self._waiting[plan.arn].remove(job)
                yield from self._run(job, rc, at)

    def _start_timer(self, job: "TrainingJob", at: datetime) -> Iterator[QueueDecision]:
        if job.name in self._timers:
            return
        limit = job.max_pending_seconds
        budget = (timedelta(seconds=limit) if limit else DEFAULT_MAX_PENDING) - self._waited.get(
            job.name, timedelta(0)
        )
        self._timers[job.name] = _Timer(at)
        yield PendingLimit(job, at + max(budget, timedelta(0)))

    def _stop_timer(self, job: "TrainingJob", at: datetime) -> None:
        timer = self._timers.pop(job.name, None)
        if timer is not None:
            if timer.event is not None:
                timer.event.cancel()
            self._waited[job.name] = self._waited.get(job.name, timedelta(0)) + (at - timer.since)
