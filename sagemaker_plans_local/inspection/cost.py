"""What AWS would bill for what a backend holds, from its describe answers (docs/cost-report.md).

Plans bill their ``UpfrontFee``; jobs ``BillableTimeInSeconds`` x instance
count x the on-demand price (nothing beyond the plan for a job on a plan);
warm pools ``ResourceRetainedBillableTimeInSeconds`` x instance count x the
price. Each item is rounded to the cent (ROUND_HALF_UP); totals are sums of
items. Warm starts are reported as savings: the provisioning time they avoided.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from decimal import Decimal
from typing import Any, Iterator

import attrs

from sagemaker_plans_local.inspection.prices import CURRENCY, TrainingPrices
from sagemaker_plans_local.inspection.snapshot import Snapshot

PLAN = "training-plan"
TRAINING = "training"
WARM_POOL = "warm-pool"
NO_PRICE = "no price"
# Phases during which a running job is on its instances (what BillableTimeInSeconds counts once it ends).
_ON_INSTANCES = frozenset({"Downloading", "Training", "Uploading", "Stopping"})
ROW_HEADER = ("kind", "resource", "instance type", "count", "seconds", "amount (USD)")


@attrs.frozen
class CostItem:
    """One billed line; ``amount`` None: no price (``reason`` says why)."""

    kind: str
    resource: str
    instance_type: str
    instance_count: int
    seconds: int
    amount: Decimal | None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """The line as ``cost --json`` prints it (amount a decimal string; ``reason`` instead when unpriced)."""
        line: dict[str, Any] = {
            "kind": self.kind,
            "resource": self.resource,
            "instance_type": self.instance_type,
            "instance_count": self.instance_count,
            "seconds": self.seconds,
        }
        if self.amount is None:
            line["reason"] = self.reason
        else:
            line["amount"] = str(self.amount)
        return line


@attrs.frozen
class WarmStart:
    """``job`` reused the pool of ``pool_of`` and started in ``warm_seconds`` instead of ``cold_seconds``."""

    job: str
    pool_of: str
    instance_type: str
    instance_count: int
    cold_seconds: int
    warm_seconds: int
    amount: Decimal | None

    @property
    def avoided_seconds(self) -> int:
        """Provisioning seconds the warm start avoided (never negative)."""
        return max(self.cold_seconds - self.warm_seconds, 0)

    def to_json(self) -> dict[str, Any]:
        """The warm start with its avoided seconds and their worth (None: no price)."""
        return {
            "job": self.job,
            "pool_of": self.pool_of,
            "instance_type": self.instance_type,
            "instance_count": self.instance_count,
            "cold_seconds": self.cold_seconds,
            "warm_seconds": self.warm_seconds,
            "avoided_seconds": self.avoided_seconds,
            "amount": None if self.amount is None else str(self.amount),
        }


@attrs.frozen
class Savings:
    """What warm pools saved: each warm start's avoided provisioning time, at the on-demand price."""

    warm_starts: tuple[WarmStart, ...]

    @property
    def seconds(self) -> int:
        """Provisioning seconds avoided (wall-clock, summed over warm starts)."""
        return sum(start.avoided_seconds for start in self.warm_starts)

    @property
    def amount(self) -> Decimal:
        """The avoided instance time at the on-demand price, priced warm starts only."""
        return sum((start.amount for start in self.warm_starts if start.amount is not None), Decimal("0.00"))

    def to_json(self) -> dict[str, Any]:
        """``{"seconds": n, "amount": "<decimal>", "warm_starts": [...]}``."""
        return {
            "seconds": self.seconds,
            "amount": str(self.amount),
            "warm_starts": [start.to_json() for start in self.warm_starts],
        }


@attrs.frozen
class CostReport:
    """What AWS would bill: priced ``items``, ``unpriced`` lines, and the warm pools' ``savings``."""

    items: tuple[CostItem, ...]
    unpriced: tuple[CostItem, ...]
    savings: Savings
    prices_source: str
    currency: str = CURRENCY

    @property
    def total(self) -> Decimal:
        """The sum of the priced items (each already rounded to the cent)."""
        return sum((item.amount for item in self.items if item.amount is not None), Decimal("0.00"))

    def by_instance_type(self) -> dict[str, Decimal]:
        """Totals of the priced items per instance type, sorted by type."""
        totals: dict[str, Decimal] = defaultdict(lambda: Decimal("0.00"))
        for item in self.items:
            totals[item.instance_type] += item.amount or Decimal(0)
        return dict(sorted(totals.items()))

    def to_json(self) -> dict[str, Any]:
        """``{"currency", "total", "items"}``; an ``"unpriced"`` list is added only when some line has no price."""
        report: dict[str, Any] = {
            "currency": self.currency,
            "total": str(self.total),
            "items": [item.to_json() for item in self.items],
        }
        if self.unpriced:
            report["unpriced"] = [item.to_json() for item in self.unpriced]
        return report

    def rows(self) -> list[tuple[str, str, str, str, str, str]]:
        """Table rows (see ``ROW_HEADER``), priced items then "no price" lines; resources by their name."""
        return [
            (
                item.kind,
                item.resource.rsplit("/", 1)[-1],
                item.instance_type,
                str(item.instance_count),
                str(item.seconds),
                NO_PRICE if item.amount is None else str(item.amount),
            )
            for item in (*self.items, *self.unpriced)
        ]


def cost_report(snapshot: Snapshot, prices: TrainingPrices | None = None) -> CostReport:
    """The cost of everything in ``snapshot``; ``prices``: the environment's list (or the bundled one) if None."""
    prices = TrainingPrices.from_environment() if prices is None else prices
    lines = [
        *(_plan_item(plan) for plan in snapshot.plans),
        *(item for job in snapshot.jobs for item in _job_items(job, prices, snapshot.now)),
        *(item for job in snapshot.jobs for item in _pool_items(job, prices, snapshot.now)),
    ]
    return CostReport(
        items=tuple(line for line in lines if line.amount is not None),
        unpriced=tuple(line for line in lines if line.amount is None),
        savings=Savings(tuple(_warm_starts(snapshot, prices))),
        prices_source=prices.source,
    )


def _plan_item(plan: dict[str, Any]) -> CostItem:
    blocks = plan.get("ReservedCapacitySummaries") or [{}]
    seconds = plan.get("DurationHours", 0) * 3600 + plan.get("DurationMinutes", 0) * 60
    currency = plan.get("CurrencyCode", CURRENCY)
    fee = Decimal(str(plan.get("UpfrontFee", "0")))
    if plan.get("Status") == "Failed":  # the payment failed: nothing is billed
        fee = Decimal("0.00")
    amount, reason = (fee, "") if currency == CURRENCY else (None, f"fee in {currency}")
    return CostItem(
        kind=PLAN,
        resource=plan["TrainingPlanArn"],
        instance_type=blocks[0].get("InstanceType", ""),
        instance_count=plan.get("TotalInstanceCount", 0),
        seconds=seconds,
        amount=amount,
        reason=reason,
    )


def _groups(job: dict[str, Any]) -> list[tuple[str, int]]:
    resources = job["ResourceConfig"]
    groups = resources.get("InstanceGroups") or [resources]
    return [(group["InstanceType"], group["InstanceCount"]) for group in groups]


def _priced(
    kind: str, job: dict[str, Any], instance: tuple[str, int], seconds: int, prices: TrainingPrices
) -> CostItem:
    instance_type, count = instance
    on_plan = bool(job["ResourceConfig"].get("TrainingPlanArn"))
    amount = Decimal("0.00") if on_plan else prices.amount(instance_type, count, seconds)
    reason = NO_PRICE if amount is None else ""
    return CostItem(kind, job["TrainingJobArn"], instance_type, count, seconds, amount, reason)


def _job_items(job: dict[str, Any], prices: TrainingPrices, now: datetime) -> Iterator[CostItem]:
    seconds = job.get("BillableTimeInSeconds")
    if seconds is None:  # still running: the time on instances so far
        seconds = _phase_seconds(job, _ON_INSTANCES, now)
    for instance in _groups(job):
        yield _priced(TRAINING, job, instance, seconds, prices)


def _pool_items(job: dict[str, Any], prices: TrainingPrices, now: datetime) -> Iterator[CostItem]:
    status = job.get("WarmPoolStatus") or {}
    seconds = status.get("ResourceRetainedBillableTimeInSeconds")
    if seconds is None and status.get("Status") == "Available" and job.get("TrainingEndTime"):
        seconds = int((now - job["TrainingEndTime"]).total_seconds())  # still kept: idle so far
    if seconds:
        for instance in _groups(job):
            yield _priced(WARM_POOL, job, instance, seconds, prices)


def _phase_seconds(job: dict[str, Any], phases: frozenset[str], now: datetime) -> int:
    spans = (
        (transition.get("EndTime") or now) - transition["StartTime"]
        for transition in job.get("SecondaryStatusTransitions", ())
        if transition["Status"] in phases
    )
    return int(sum(span.total_seconds() for span in spans))


def _warm_starts(snapshot: Snapshot, prices: TrainingPrices) -> list[WarmStart]:
    """Each job that reused a pool, in creation order: its warm start against its chain's cold one."""
    order = {job["TrainingJobArn"]: index for index, job in enumerate(snapshot.jobs)}
    starting = frozenset({"Starting"})
    found = []
    for first, *reusers in snapshot.pool_chains():
        cold = _phase_seconds(first, starting, snapshot.now)
        for previous, job in zip([first, *reusers], reusers):
            warm = _phase_seconds(job, starting, snapshot.now)
            instance_type, count = _groups(job)[0]
            amount = prices.amount(instance_type, count, max(cold - warm, 0))
            found.append(
                WarmStart(
                    job["TrainingJobArn"],
                    previous["TrainingJobArn"],
                    instance_type,
                    count,
                    cold,
                    warm,
                    amount,
                )
            )
    return sorted(found, key=lambda start: order[start.job])
