"""Training-plan records: plans, their reserved-capacity blocks and extensions, and plan rules."""

from __future__ import annotations

import enum
import math
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Callable

import attrs

from sagemaker_plans_local.core.clock import Event
from sagemaker_plans_local.core.errors import InvalidRequest
from sagemaker_plans_local.services.sagemaker.plans.offerings import (
    Capacity,
    ExtensionOffering,
    HeldCapacity,
    Interval,
    PlanOffering,
    PlanTarget,
)
from sagemaker_plans_local.services.sagemaker.plans.ultraservers import DEFAULT_SPARES
from sagemaker_plans_local.services.sagemaker.statuses import USABLE_PLAN_STATUSES, PlanStatus

#: When a block's running instances are taken back, before its end (chosen for other targets: 30 min).
CUTOFF: dict[str, timedelta] = {
    PlanTarget.TRAINING_JOB: timedelta(minutes=30),
    PlanTarget.HYPERPOD_CLUSTER: timedelta(hours=1),
}
#: Payment must be complete this long before the first block starts (the AWS guide).
PAYMENT_DEADLINE = timedelta(minutes=5)
#: A plan can be extended only while its end is this near (the guide's training-plan extension page).
EXTENSION_WINDOW = (timedelta(hours=1), timedelta(days=56))

MESSAGES = {
    PlanStatus.PENDING: "Payment in progress.",
    PlanStatus.SCHEDULED: "Payment confirmed, training plan scheduled.",
    PlanStatus.ACTIVE: "Training plan is active: reserved capacity is available.",
    PlanStatus.EXPIRED: "Training plan has expired: all reserved capacity has ended.",
    PlanStatus.FAILED: "Payment failed; the reserved capacity was released.",
}
LATE_PAYMENT = (
    "Payment could not be completed 5 minutes before the first reserved capacity "
    "starts; the reserved capacity was released."
)


class PlanEvent(str, enum.Enum):
    """What subscribers of the plans hear about one of a plan's blocks."""

    ACTIVE = "active"  # the block hands out instances (again)
    CUTOFF = "cutoff"  # the block takes its running instances back, before its end
    ENDED = "ended"  # the block has expired


Listener = Callable[["TrainingPlan", PlanEvent, "ReservedCapacity", datetime], None]


@attrs.frozen
class PlanScript:
    """How a named plan's payment ends."""

    payment_succeeds: bool = True


@attrs.define(eq=False)
class ReservedCapacity(HeldCapacity, Interval):
    """One reserved-capacity block of a plan; ``ultra_servers`` are the ids of its UltraServers."""

    rc_id: str
    arn: str
    capacity: Capacity
    availability_zone: str
    start: datetime
    end: datetime
    status: PlanStatus = PlanStatus.PENDING
    events: list[Event] = attrs.Factory(list)
    ultra_servers: list[str] = attrs.Factory(list)


@attrs.define(eq=False)
class Extension:
    """One ExtendTrainingPlan purchase; its payment completes ``plan_payment_seconds`` later (chosen)."""

    offering: ExtensionOffering
    extended_at: datetime
    paid: bool = False


@attrs.define(eq=False)
class TrainingPlan(HeldCapacity):
    """A bought training plan and who uses its instances."""

    name: str
    arn: str
    target: str
    capacity: Capacity
    created_at: datetime
    upfront_fee: Decimal
    currency: str
    capacities: list[ReservedCapacity]
    spares_per_ultra_server: int = 0
    status: PlanStatus = PlanStatus.PENDING
    paid: bool = False
    failed: bool = False
    failure_message: str = MESSAGES[PlanStatus.FAILED]
    extensions: list[Extension] = attrs.Factory(list)
    consumers: dict[str, int] = attrs.Factory(dict)

    @property
    def status_message(self) -> str:
        return self.failure_message if self.status == PlanStatus.FAILED else MESSAGES[self.status]

    @property
    def spare_count(self) -> int:
        """Instances held back as UltraServer spares (0 for instance plans)."""
        return self.spares_per_ultra_server * (self.capacity.ultra_server_count or 0)

    @property
    def usable_count(self) -> int:
        """Instances jobs and instance groups may take: all but the spares."""
        return self.instance_count - self.spare_count

    @property
    def start(self) -> datetime:
        return self.capacities[0].start

    @property
    def end(self) -> datetime:
        return self.capacities[-1].end

    @property
    def duration(self) -> timedelta:
        return sum((rc.duration for rc in self.capacities), timedelta(0))

    @property
    def in_use(self) -> int:
        return sum(self.consumers.values())

    @property
    def available(self) -> int:
        """Instances usable now: free ones of the active block, 0 outside one (chosen)."""
        return max(0, self.usable_count - self.in_use) if self.active_block() else 0

    @property
    def available_spares(self) -> int:
        return self.spare_count if self.active_block() else 0

    @property
    def cutoff_offset(self) -> timedelta:
        return CUTOFF.get(self.target, CUTOFF[PlanTarget.TRAINING_JOB])

    @property
    def payment_pending(self) -> bool:
        return not self.paid or any(not ext.paid for ext in self.extensions)

    def active_block(self) -> ReservedCapacity | None:
        return next((rc for rc in self.capacities if rc.status == PlanStatus.ACTIVE), None)

    def has_block_after(self, at: datetime) -> bool:
        return any(rc.start >= at for rc in self.capacities)


def hours_and_minutes(duration: timedelta) -> tuple[int, int]:
    minutes = math.ceil(duration.total_seconds() / 60)
    return minutes // 60, minutes % 60


def check_extendable(plan: TrainingPlan, now: datetime) -> None:
    """InvalidRequest unless ``plan`` may be extended now (the guide's training-plan extension page)."""
    if plan.status not in USABLE_PLAN_STATUSES or plan.payment_pending:
        state = "has a payment pending" if plan.status in USABLE_PLAN_STATUSES else f"is {plan.status}"
        raise InvalidRequest(
            f"Training plan {plan.name} {state}; only Active or Scheduled training "
            "plans without a pending payment can be extended."
        )
    low, high = EXTENSION_WINDOW
    if not low <= plan.end - now <= high:
        raise InvalidRequest(
            f"Training plan {plan.name} can be extended only between 1 hour and "
            f"{high.days} days before it expires; it expires at {plan.end.isoformat()}."
        )


def spares_for(offering: PlanOffering, requested: int | None) -> int:
    """Spare instances per UltraServer of a plan bought from ``offering``."""
    ultra = offering.capacity.ultra_server
    if ultra is None:
        if requested:
            raise InvalidRequest(
                "SpareInstanceCountPerUltraServer applies only to UltraServer training plan offerings."
            )
        return 0
    spares = DEFAULT_SPARES if requested is None else requested
    if spares >= ultra.instances:
        raise InvalidRequest(
            f"SpareInstanceCountPerUltraServer {spares} must be less than the "
            f"{ultra.instances} instances of an {ultra.name} UltraServer."
        )
    return spares


def forget_expired(offerings: dict, now: datetime) -> None:
    """Drop expired offerings: stored in the order they expire (the clock only moves forward)."""
    while offerings:
        offering_id, entry = next(iter(offerings.items()))
        if entry[1] > now:
            break
        del offerings[offering_id]
