"""A policy's answers: cost split, per-job records, waits, warm starts, plan use, makespan (docs/what-if.md).

Plain records a notebook can show: :class:`PolicyResult` (``to_json()`` gives the documented keys) and its
:class:`JobRecord` per workload job, each built from the facts read back (:mod:`.readback`).
"""

from __future__ import annotations

import math
from datetime import datetime
from decimal import Decimal
from typing import Any, Iterable, Sequence

import attrs

from sagemaker_plans_local.inspection.prices import CURRENCY, to_cent
from sagemaker_plans_local.simulation.readback import ZERO, AttemptFacts, Money, PlanFacts
from sagemaker_plans_local.simulation.runner import Submitted
from sagemaker_plans_local.simulation.workload import Workload

COMPLETED = "Completed"
REFUSED = "Refused"
NOT_RUN = "NotRun"


@attrs.frozen
class JobRecord:
    """One workload job under one policy: how it ended, its times (seconds), its cost (its attempts' items)."""

    name: str
    instance_type: str
    instance_count: int
    outcome: str  #: Completed, Failed, Stopped, Refused (CreateTrainingJob said no) or NotRun (its ``after``)
    reason: str
    attempts: tuple[str, ...]
    on_plan: bool
    overflowed: bool
    warm_start: bool
    submitted: datetime | None
    started: datetime | None
    ended: datetime | None
    wait_seconds: float
    provisioning_seconds: float
    training_seconds: int
    plan_seconds: int  #: the training seconds on a plan
    cost: Decimal

    def to_json(self) -> dict[str, Any]:
        """The record with times in ISO 8601 and the cost a decimal string."""
        record = attrs.asdict(self)
        for key in ("submitted", "started", "ended"):
            record[key] = None if record[key] is None else record[key].isoformat()
        record["attempts"] = list(self.attempts)
        record["cost"] = str(self.cost)
        return record


@attrs.frozen
class PolicyResult:
    """Everything one policy gave on the workload."""

    policy: str
    start: datetime
    plan_fees: Decimal
    training: Decimal
    warm_pool: Decimal
    jobs: tuple[JobRecord, ...]
    plans: tuple[PlanFacts, ...]
    unpriced: tuple[str, ...] = ()  #: instance types without a price (their lines are not in the total)
    currency: str = CURRENCY

    @property
    def total(self) -> Decimal:
        return self.plan_fees + self.training + self.warm_pool

    @property
    def completed(self) -> int:
        return sum(job.outcome == COMPLETED for job in self.jobs)

    @property
    def failed(self) -> int:
        """Jobs that did not complete: failed, stopped, refused, or never submitted."""
        return len(self.jobs) - self.completed

    @property
    def warm_starts(self) -> int:
        return sum(job.warm_start for job in self.jobs)

    def outcomes(self) -> dict[str, int]:
        """How many jobs ended each way (Completed, Failed, Stopped, Refused, NotRun), and why (reason prefix)."""
        counts: dict[str, int] = {}
        for job in self.jobs:
            key = job.outcome if not job.reason else f"{job.outcome}: {job.reason.split(':')[0]}"
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))

    def wait(self) -> dict[str, float]:
        """Queue wait (the Pending phases) of the jobs that were created: p50, p95, max."""
        return spread(job.wait_seconds for job in self.jobs if job.attempts)

    def provisioning(self) -> dict[str, float]:
        """Provisioning (the Starting phases) of the jobs that were created: p50, p95, max."""
        return spread(job.provisioning_seconds for job in self.jobs if job.attempts)

    @property
    def plan_utilization(self) -> float | None:
        """Instance-seconds the plans' jobs trained over the instance-seconds bought; None without a plan."""
        bought = sum(plan.bought_instance_seconds for plan in self.plans)
        if not bought:
            return None
        used = sum(job.plan_seconds * job.instance_count for job in self.jobs)
        return round(used / bought, 4)

    @property
    def last_end(self) -> datetime | None:
        """When the last job ended."""
        return max((job.ended for job in self.jobs if job.ended is not None), default=None)

    @property
    def makespan_seconds(self) -> float:
        """From the workload's start to the last job's end."""
        return 0.0 if self.last_end is None else (self.last_end - self.start).total_seconds()

    @property
    def cost_per_job(self) -> Decimal:
        """The total over the jobs, to the cent."""
        return to_cent(self.total / len(self.jobs)) if self.jobs else ZERO

    def to_json(self) -> dict[str, Any]:
        """The documented keys (``--json``), then a few more (outcomes, provisioning, plans, unpriced)."""
        return {
            "policy": self.policy,
            "total": str(self.total),
            "plan_fees": str(self.plan_fees),
            "training": str(self.training),
            "warm_pool": str(self.warm_pool),
            "jobs": len(self.jobs),
            "completed": self.completed,
            "failed": self.failed,
            "warm_starts": self.warm_starts,
            "wait_seconds": self.wait(),
            "plan_utilization": self.plan_utilization,
            "makespan_seconds": number(self.makespan_seconds),
            "cost_per_job": str(self.cost_per_job),
            "last_end": None if self.last_end is None else self.last_end.isoformat(),
            "provisioning_seconds": self.provisioning(),
            "outcomes": self.outcomes(),
            "overflowed": sum(job.overflowed for job in self.jobs),
            "plans": [_plan_json(plan) for plan in self.plans],
            "unpriced_instance_types": list(self.unpriced),
        }


def number(value: float) -> float | int:
    """Seconds as JSON gives them: an int when whole, else to the millisecond."""
    return int(value) if float(value).is_integer() else round(value, 3)


def spread(values: Iterable[float]) -> dict[str, float]:
    """p50, p95 (nearest rank: the smallest value at least that share of the values reach) and max; 0s if none."""
    ordered = sorted(values)
    if not ordered:
        return {"p50": 0, "p95": 0, "max": 0}
    rank = lambda share: ordered[max(math.ceil(share * len(ordered)), 1) - 1]  # noqa: E731
    return {"p50": number(rank(0.5)), "p95": number(rank(0.95)), "max": number(ordered[-1])}


def _plan_json(plan: PlanFacts) -> dict[str, Any]:
    return {
        "arn": plan.arn,
        "instance_type": plan.instance_type,
        "instance_count": plan.instance_count,
        "start": None if plan.start is None else plan.start.isoformat(),
        "end": None if plan.end is None else plan.end.isoformat(),
        "fee": str(plan.fee),
    }


def policy_result(
    policy: str,
    workload: Workload,
    submitted: Submitted,
    facts: Sequence[AttemptFacts],
    plans: list[PlanFacts],
    money: Money,
) -> PolicyResult:
    """The answers of one run: each workload job's record from its attempts' facts."""
    by_job: dict[int, list[AttemptFacts]] = {}
    for fact in sorted(facts, key=lambda fact: fact.created):  # read in chunks: back in creation order
        by_job.setdefault(fact.job, []).append(fact)
    reusers = {fact.reused_by.casefold() for fact in facts if fact.reused_by}
    records = tuple(
        _record(index, workload, by_job.get(index, []), submitted, reusers)
        for index in range(len(workload.jobs))
    )
    return PolicyResult(
        policy,
        workload.start,
        money.plan_fees,
        money.training,
        money.warm_pool,
        records,
        tuple(plans),
        tuple(sorted(money.unpriced)),
    )


def _record(
    index: int, workload: Workload, attempts: list[AttemptFacts], submitted: Submitted, reusers: set[str]
) -> JobRecord:
    job = workload.jobs[index]
    last = attempts[-1] if attempts else None
    if last is not None:
        outcome, reason = last.status, last.reason
    elif index in submitted.refused:
        outcome, reason = REFUSED, ": ".join(submitted.refused[index])
    else:
        outcome, reason = NOT_RUN, submitted.not_run.get(index, "never submitted")
    return JobRecord(
        name=job.name,
        instance_type=job.instance_type,
        instance_count=job.instance_count,
        outcome=outcome,
        reason=reason,
        attempts=tuple(fact.name for fact in attempts),
        on_plan=any(fact.on_plan for fact in attempts),
        overflowed=index in submitted.overflowed,
        warm_start=any(fact.name.casefold() in reusers for fact in attempts),
        submitted=attempts[0].created if attempts else None,
        started=next((fact.started for fact in attempts if fact.started is not None), None),
        ended=None if last is None else last.ended,
        wait_seconds=sum(fact.wait_seconds for fact in attempts),
        provisioning_seconds=sum(fact.provisioning_seconds for fact in attempts),
        training_seconds=sum(fact.billable_seconds for fact in attempts),
        plan_seconds=sum(fact.billable_seconds for fact in attempts if fact.on_plan),
        cost=sum((fact.cost for fact in attempts), ZERO),
    )
