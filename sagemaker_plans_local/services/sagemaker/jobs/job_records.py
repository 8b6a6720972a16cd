"""The training-job record: everything DescribeTrainingJob reports about one job."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime
from pathlib import Path

import attrs

from sagemaker_plans_local.core.clock import Event
from sagemaker_plans_local.services.sagemaker.plans.training_plans import ReservedCapacity, TrainingPlan
from sagemaker_plans_local.services.sagemaker.statuses import JobStatus, SecondaryStatus, WarmPoolStatus
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import WarmPool, WarmPoolView


@attrs.define(eq=False)
class Transition:
    """One SecondaryStatusTransitions entry."""

    status: SecondaryStatus
    start: datetime
    message: str
    end: datetime | None = None


@attrs.define(eq=False)
class TrainingJob:
    """One training job and everything DescribeTrainingJob reports about it."""

    name: str
    arn: str
    spec: dict
    created_at: datetime
    sequence: int
    last_modified: datetime
    status: JobStatus = JobStatus.IN_PROGRESS
    secondary_status: SecondaryStatus = SecondaryStatus.STARTING
    transitions: list[Transition] = attrs.Factory(list)
    training_start: datetime | None = None
    training_end: datetime | None = None
    segment_start: datetime | None = None  # when the current run on instances began training
    trained_seconds: float = 0.0  # training time of earlier runs (a plan job may run in several)
    ended_at: datetime | None = None
    failure_reason: str | None = None
    instances_started: bool = False
    warm_start: bool = False
    pool: WarmPool | None = None
    warm_pool: WarmPoolView | None = None
    plan: TrainingPlan | None = None
    block: ReservedCapacity | None = None  # the plan's capacity block the job runs on
    stop_reason: SecondaryStatus = SecondaryStatus.STOPPED
    events: list[Event] = attrs.Factory(list)

    @property
    def resource_config(self) -> dict:
        return self.spec.get("ResourceConfig") or {}

    @property
    def keep_alive_seconds(self) -> int:
        return self.resource_config.get("KeepAlivePeriodInSeconds") or 0

    @property
    def instance_count(self) -> int:
        return self.resource_config.get("InstanceCount", 0)

    @property
    def max_runtime_seconds(self) -> int | None:
        return (self.spec.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds")

    @property
    def max_pending_seconds(self) -> int | None:
        return (self.spec.get("StoppingCondition") or {}).get("MaxPendingTimeInSeconds")

    @property
    def capacity_block_expiration(self) -> datetime | None:
        """End of the plan's capacity block the job runs on (for the container's environment)."""
        return self.block.end if self.block is not None else None

    @property
    def cache_dir(self) -> Path | None:
        """The persistent cache of the warm-pool chain this job runs on, if any (made on first use)."""
        pool = self.pool
        return pool.cache_dir if pool is not None and pool.state != WarmPoolStatus.TERMINATED else None

    @property
    def training_seconds(self) -> int | None:
        """Time spent training on instances, over all runs, once the job has ended.

        Whole seconds rounded up, at least 1 (the model's minimum): a job that really ran for 0.4 s
        bills 1 s, never 0.
        """
        if self.training_start is None or self.training_end is None:
            return None
        return max(1, math.ceil(round(self.trained_seconds, 6)))

    def close_segment(self, at: datetime) -> None:
        if self.segment_start is not None:
            self.trained_seconds += (at - self.segment_start).total_seconds()
            self.segment_start = None

    def instance_demand(self) -> dict[str, int]:
        """Instances of each type this job runs on."""
        resources = self.resource_config
        groups = resources.get("InstanceGroups")
        if not groups:
            return {resources["InstanceType"]: resources["InstanceCount"]}
        demand: Counter[str] = Counter()
        for group in groups:
            demand[group["InstanceType"]] += group["InstanceCount"]
        return dict(demand)

    def enter(self, secondary: SecondaryStatus, at: datetime, message: str) -> None:
        if self.transitions:
            self.transitions[-1].end = at
        self.transitions.append(Transition(secondary, at, message))
        self.secondary_status = secondary
        self.last_modified = at

    def say(self, message: str, at: datetime) -> None:
        self.transitions[-1].message = message
        self.last_modified = at
