"""What a policy's run did, read back through the API: each job's describe answer and the cost report.

Jobs are described in chunks, each chunk priced by :func:`~sagemaker_plans_local.inspection.cost.cost_report`
and then dropped, so memory follows the chunk, not the workload. Waiting and provisioning come from each
job's ``SecondaryStatusTransitions`` (``Pending`` and ``Starting``), money from the cost report's items.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from decimal import Decimal
from typing import Any, Iterable, Iterator

import attrs

from sagemaker_plans_local.inspection.cost import PLAN, TRAINING, WARM_POOL, CostItem, cost_report
from sagemaker_plans_local.inspection.prices import TrainingPrices
from sagemaker_plans_local.inspection.snapshot import Snapshot
from sagemaker_plans_local.simulation.runner import Attempt, Call, Submitted

#: Jobs described (and priced) at a time.
CHUNK = 500
ZERO = Decimal("0.00")


@attrs.frozen
class AttemptFacts:
    """One training job's outcome, times and cost, from its describe answer and its cost items."""

    name: str
    job: int
    on_plan: bool
    status: str
    reason: str
    created: datetime
    started: datetime | None
    ended: datetime | None
    wait_seconds: float
    provisioning_seconds: float
    billable_seconds: int
    instance_count: int
    cost: Decimal
    reused_by: str | None  #: the job that took this job's warm pool


@attrs.frozen
class PlanFacts:
    """A plan bought: its type, count, time, fee and the instance-seconds it sold."""

    arn: str
    instance_type: str
    instance_count: int
    start: datetime | None
    end: datetime | None
    fee: Decimal
    bought_instance_seconds: int


@attrs.define
class Money:
    """The cost report's totals by kind, and its lines without a price (instance types)."""

    plan_fees: Decimal = ZERO
    training: Decimal = ZERO
    warm_pool: Decimal = ZERO
    unpriced: set[str] = attrs.Factory(set)

    def add(self, item: CostItem) -> None:
        if item.amount is None:
            self.unpriced.add(item.instance_type)
        elif item.kind == PLAN:
            self.plan_fees += item.amount
        elif item.kind == TRAINING:
            self.training += item.amount
        elif item.kind == WARM_POOL:
            self.warm_pool += item.amount


class Reader:
    """Turns describe answers into facts and money, a chunk at a time (``take``), then the rest (``finish``)."""

    def __init__(self, prices: TrainingPrices) -> None:
        self.prices = prices
        self.money = Money()
        self.facts: list[AttemptFacts] = []

    def take(self, pairs: list[tuple[Attempt, dict[str, Any]]], now: datetime) -> None:
        """The facts of ``pairs`` (attempt, its describe answer), priced by the cost report."""
        report = cost_report(Snapshot(now, tuple(answer for _, answer in pairs), ()), self.prices)
        costs: dict[str, Decimal] = defaultdict(lambda: ZERO)
        for item in (*report.items, *report.unpriced):
            self.money.add(item)
            costs[item.resource] += item.amount or ZERO
        self.facts += [
            _facts(attempt, answer, costs[answer["TrainingJobArn"]], now) for attempt, answer in pairs
        ]

    def finish(
        self, call: Call, now: datetime, submitted: Submitted
    ) -> tuple[list[AttemptFacts], list[PlanFacts], Money]:
        """Read every attempt not taken yet (in chunks), then the plans: all the facts, the plans' and the money."""
        left = [attempt for attempt in submitted.attempts if attempt.name not in submitted.retired]
        for chunk in _chunks(left):
            self.take(
                [
                    (attempt, call("DescribeTrainingJob", {"TrainingJobName": attempt.name}))
                    for attempt in chunk
                ],
                now,
            )
        plans = [
            _clean(call("DescribeTrainingPlan", {"TrainingPlanName": arn.rpartition("/")[2]}))
            for arn in submitted.plans.values()
        ]
        fees: dict[str, Decimal] = {}
        for item in cost_report(Snapshot(now, (), tuple(plans)), self.prices).items:
            self.money.add(item)
            fees[item.resource] = item.amount or ZERO
        plan_facts = [_plan_facts(plan, fees.get(plan["TrainingPlanArn"], ZERO)) for plan in plans]
        return self.facts, plan_facts, self.money


def _chunks(attempts: list[Attempt]) -> Iterator[list[Attempt]]:
    for start in range(0, len(attempts), CHUNK):
        yield attempts[start : start + CHUNK]


def _clean(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "ResponseMetadata"}


def _facts(attempt: Attempt, answer: dict[str, Any], cost: Decimal, now: datetime) -> AttemptFacts:
    transitions = answer.get("SecondaryStatusTransitions", [])
    ended = answer.get("TrainingEndTime")
    if ended is None and answer["TrainingJobStatus"] in ("Completed", "Failed", "Stopped") and transitions:
        ended = transitions[-1]["StartTime"]
    return AttemptFacts(
        name=attempt.name,
        job=attempt.job,
        on_plan=attempt.on_plan,
        status=answer["TrainingJobStatus"],
        reason=answer.get("FailureReason") or _stop_reason(answer, transitions),
        created=answer["CreationTime"],
        started=answer.get("TrainingStartTime"),
        ended=ended,
        wait_seconds=_seconds_in(transitions, "Pending", now),
        provisioning_seconds=_seconds_in(transitions, "Starting", now),
        billable_seconds=answer.get("BillableTimeInSeconds") or 0,
        instance_count=answer["ResourceConfig"].get("InstanceCount", 0),
        cost=cost,
        reused_by=(answer.get("WarmPoolStatus") or {}).get("ReusedByJob"),
    )


def _stop_reason(answer: dict[str, Any], transitions: list[dict[str, Any]]) -> str:
    if answer["TrainingJobStatus"] != "Stopped" or not transitions:
        return ""
    return str(transitions[-1].get("StatusMessage", "Stopped"))


def _seconds_in(transitions: Iterable[dict[str, Any]], status: str, now: datetime) -> float:
    return sum(
        ((step.get("EndTime") or now) - step["StartTime"]).total_seconds()
        for step in transitions
        if step["Status"] == status
    )


def _plan_facts(plan: dict[str, Any], fee: Decimal) -> PlanFacts:
    blocks = plan.get("ReservedCapacitySummaries") or [{}]
    seconds = plan.get("DurationHours", 0) * 3600 + plan.get("DurationMinutes", 0) * 60
    count = plan.get("TotalInstanceCount", 0)
    return PlanFacts(
        plan["TrainingPlanArn"],
        blocks[0].get("InstanceType", ""),
        count,
        plan.get("StartTime"),
        plan.get("EndTime"),
        fee,
        seconds * count,
    )
