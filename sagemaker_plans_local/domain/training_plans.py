"""Training plans: bought offerings, their reserved-capacity blocks and statuses.

A plan is ``Pending`` while its payment runs, ``Scheduled`` once paid,
``Active`` while one of its blocks runs, ``Scheduled`` again between blocks
and ``Expired`` after the last; ``Failed`` when payment fails. Jobs, warm
pools and HyperPod nodes take instances from the active block through
:meth:`TrainingPlans.allocate`; subscribers hear when a block becomes active
and when its instances are taken back (30 min before its end, 1 h for HyperPod).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Callable, Iterable, Iterator

import attrs

from ..store import Position, Table
from .arns import sagemaker_arn
from .capacity import CapacityInventory
from .clock import Event, VirtualClock
from .errors import InUse, InvalidRequest, NotFound
from .offerings import ExtensionOffering, PlanOffering, search_extensions, search_offerings
from .pricing import PriceList
from .settings import Settings

#: How long an offering id can be bought after the search that produced it (chosen).
OFFERING_LIFETIME = timedelta(hours=24)
#: The sorted indexes of the plan table: name, start, status (re-sorted as it changes).
PLAN_INDEXES = {
    "name": lambda plan: plan.name,
    "start": lambda plan: plan.start.timestamp(),
    "status": lambda plan: plan.status,
}
#: When a block's running instances are taken back, before its end.
CUTOFF = {"training-job": timedelta(minutes=30), "hyperpod-cluster": timedelta(hours=1)}

MESSAGES = {
    "Pending": "Payment in progress.",
    "Scheduled": "Payment confirmed, training plan scheduled.",
    "Active": "Training plan is active: reserved capacity is available.",
    "Expired": "Training plan has expired: all reserved capacity has ended.",
    "Failed": "Payment failed; the reserved capacity was released.",
}

Listener = Callable[["TrainingPlan", str, "ReservedCapacity", datetime], None]


@attrs.frozen
class PlanScript:
    """How a named plan's payment ends."""

    payment_succeeds: bool = True


@attrs.define(eq=False)
class ReservedCapacity:
    """One reserved-capacity block of a plan."""

    rc_id: str
    arn: str
    instance_type: str
    availability_zone: str
    start: datetime
    end: datetime
    count: int
    status: str = "Pending"
    events: list[Event] = attrs.Factory(list)

    @property
    def duration(self) -> timedelta:
        return self.end - self.start


@attrs.define(eq=False)
class Extension:
    """One ExtendTrainingPlan purchase."""

    offering: ExtensionOffering
    extended_at: datetime


@attrs.define(eq=False)
class TrainingPlan:
    """A bought training plan and who uses its instances."""

    name: str
    arn: str
    target: str
    instance_type: str
    instance_count: int
    created_at: datetime
    upfront_fee: Decimal
    currency: str
    capacities: list[ReservedCapacity]
    status: str = "Pending"
    paid: bool = False
    failed: bool = False
    extensions: list[Extension] = attrs.Factory(list)
    consumers: dict[str, int] = attrs.Factory(dict)

    @property
    def status_message(self) -> str:
        return MESSAGES[self.status]

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
        return max(0, self.instance_count - self.in_use)

    @property
    def cutoff_offset(self) -> timedelta:
        return CUTOFF[self.target]

    def active_block(self) -> ReservedCapacity | None:
        return next((rc for rc in self.capacities if rc.status == "Active"), None)

    def has_block_after(self, at: datetime) -> bool:
        return any(rc.start >= at for rc in self.capacities)


def hours_and_minutes(duration: timedelta) -> tuple[int, int]:
    minutes = math.ceil(duration.total_seconds() / 60)
    return minutes // 60, minutes % 60


class TrainingPlans:
    """The training plans, offerings and extensions of one region."""

    def __init__(self, clock: VirtualClock, settings: Settings, region: str, account_id: str,
                 inventory: CapacityInventory, prices: PriceList,
                 script_for: Callable[[str], PlanScript]) -> None:
        self._clock = clock
        self._settings = settings
        self._region = region
        self._account_id = account_id
        self._inventory = inventory
        self._prices = prices
        self._script_for = script_for
        # Names are unique regardless of case (the ARN lower-cases them); indexes for ListTrainingPlans.
        self._plans: Table[TrainingPlan] = Table(PLAN_INDEXES, fold_case=True)
        self._offerings: dict[str, tuple[PlanOffering, datetime]] = {}
        self._extension_offerings: dict[str, tuple[ExtensionOffering, TrainingPlan, datetime]] = {}
        self._listeners: list[Listener] = []
        self._rc_ids = itertools.count(1)

    # -- queries -------------------------------------------------------------
    def now(self) -> datetime:
        return self._clock.now()

    def get(self, name_or_arn: str) -> TrainingPlan:
        name = name_or_arn.rsplit("training-plan/", 1)[-1] if name_or_arn.startswith("arn:") else name_or_arn
        plan = self._plans.get(name)
        if plan is None or (name_or_arn.startswith("arn:") and plan.arn != name_or_arn):
            raise NotFound(f"Training plan {name_or_arn} does not exist.")
        return plan

    def all(self) -> Iterable[TrainingPlan]:
        return iter(self._plans)

    def scan(self, index: str, descending: bool = False,
             after: Position | None = None) -> Iterator[tuple[Position, TrainingPlan]]:
        """Plans in the order of one of ``PLAN_INDEXES``, resuming after ``after``."""
        return self._plans.scan(index, descending, after)

    def reserved_capacity(self, arn: str) -> tuple[TrainingPlan, ReservedCapacity]:
        for plan in self._plans:
            for rc in plan.capacities:
                if rc.arn == arn:
                    return plan, rc
        raise NotFound(f"Reserved capacity {arn} does not exist.")

    def subscribe(self, listener: Listener) -> None:
        """Hear ``(plan, "active" | "cutoff" | "ended", block, at)`` events."""
        self._listeners.append(listener)

    # -- offerings -----------------------------------------------------------
    def search(self, *, instance_type: str, instance_count: int, duration_hours: int, target: str,
               start_after: datetime | None = None, end_before: datetime | None = None) -> list[PlanOffering]:
        now = self._clock.now()
        offerings = search_offerings(
            self._inventory, self._prices, now=now, instance_type=instance_type,
            instance_count=instance_count, duration_hours=duration_hours, target=target,
            start_after=start_after, end_before=end_before)
        self._forget_expired(now)
        for offering in offerings:
            self._offerings[offering.offering_id] = (offering, now + OFFERING_LIFETIME)
        return offerings

    def search_extensions(self, plan_arn: str, duration_hours: int) -> list[ExtensionOffering]:
        plan = self.get(plan_arn)
        if plan.status not in ("Scheduled", "Active", "Pending"):
            raise InvalidRequest(f"Training plan {plan.name} is {plan.status} and cannot be extended.")
        last = plan.capacities[-1]
        now = self._clock.now()
        offerings = search_extensions(
            self._inventory, self._prices, now=now, instance_type=last.instance_type,
            instance_count=last.count, availability_zone=last.availability_zone,
            plan_end=last.end, duration_hours=duration_hours)
        for offering in offerings:
            self._extension_offerings[offering.offering_id] = (offering, plan, now + OFFERING_LIFETIME)
        return offerings

    # -- plans -----------------------------------------------------------------
    def create(self, name: str, offering_id: str) -> TrainingPlan:
        """Buy an offering: its capacity leaves the inventory; payment completes later."""
        if name in self._plans:
            raise InUse(f"Training plan {name} already exists.")
        now = self._clock.now()
        offering = self._live_offering(offering_id, now)
        for block in offering.blocks:
            self._inventory.remove(block.instance_type, block.availability_zone, block.start,
                                   block.end, block.count)
        self._offerings.pop(offering_id, None)
        arn = sagemaker_arn(self._region, self._account_id, "training-plan", name)
        capacities = [self._new_block(block.instance_type, block.availability_zone, block.start,
                                      block.end, block.count) for block in offering.blocks]
        plan = TrainingPlan(name, arn, offering.target, offering.instance_type, offering.instance_count,
                            now, offering.upfront_fee, offering.currency, capacities)
        self._plans.put(name, plan)
        for rc in capacities:
            self._schedule_block(plan, rc)
        delay = timedelta(seconds=self._settings.plan_payment_seconds)
        self._clock.schedule(now + delay, lambda at: self._settle_payment(plan, at))
        return plan

    def extend(self, offering_id: str) -> tuple[TrainingPlan, Extension]:
        now = self._clock.now()
        entry = self._extension_offerings.get(offering_id)
        if entry is None or entry[2] <= now:
            raise NotFound(f"Training plan extension offering {offering_id} was not found or has expired.")
        offering, plan, _ = entry
        last = plan.capacities[-1]
        if plan.status in ("Expired", "Failed") or offering.start != last.end:
            raise NotFound(f"Training plan extension offering {offering_id} no longer applies to "
                           f"training plan {plan.name}.")
        if self._inventory.free_count(offering.instance_type, offering.availability_zone,
                                      offering.start, offering.end) < offering.instance_count:
            raise NotFound(f"Training plan extension offering {offering_id} is no longer available.")
        self._inventory.remove(offering.instance_type, offering.availability_zone, offering.start,
                               offering.end, offering.instance_count)
        del self._extension_offerings[offering_id]
        for event in last.events:
            event.cancel()
        last.events.clear()
        last.end = offering.end
        self._schedule_block(plan, last)
        plan.upfront_fee += offering.upfront_fee
        extension = Extension(offering, now)
        plan.extensions.append(extension)
        if last.status == "Active" and now >= offering.start - plan.cutoff_offset:
            # Its instances were already taken back: the extended block hands them out again.
            self._notify(plan, "active", last, now)
        return plan, extension

    # -- instances -------------------------------------------------------------
    def allocate(self, plan: TrainingPlan, consumer: str, count: int, at: datetime) -> ReservedCapacity | None:
        """Take ``count`` instances of the active block for ``consumer``, if free and before cutoff."""
        rc = plan.active_block()
        if rc is None or at >= rc.end - plan.cutoff_offset:
            return None
        if plan.instance_count - plan.in_use < count:
            return None
        plan.consumers[consumer] = plan.consumers.get(consumer, 0) + count
        return rc

    def release(self, plan: TrainingPlan, consumer: str) -> None:
        plan.consumers.pop(consumer, None)

    def hand_over(self, plan: TrainingPlan, giver: str, taker: str) -> None:
        """Move the instances held by ``giver`` to ``taker`` (a job's warm pool, and back)."""
        if giver in plan.consumers:
            plan.consumers[taker] = plan.consumers.pop(giver)

    # -- lifecycle -------------------------------------------------------------
    def _new_block(self, instance_type: str, zone: str, start: datetime, end: datetime,
                   count: int) -> ReservedCapacity:
        digest = hashlib.sha1(f"{self._region}/{next(self._rc_ids)}/{start}".encode()).hexdigest()[:16]
        rc_id = f"rc-{digest}"
        return ReservedCapacity(rc_id, sagemaker_arn(self._region, self._account_id, "reserved-capacity", rc_id),
                                instance_type, zone, start, end, count)

    def _schedule_block(self, plan: TrainingPlan, rc: ReservedCapacity) -> None:
        schedule = self._clock.schedule
        now = self._clock.now()
        if rc.start > now:
            rc.events.append(schedule(rc.start, lambda at: self._refresh(plan, at)))
        rc.events.append(schedule(max(now, rc.end - plan.cutoff_offset),
                                  lambda at: self._cutoff(plan, rc, at)))
        rc.events.append(schedule(max(now, rc.end), lambda at: self._refresh(plan, at)))

    def _settle_payment(self, plan: TrainingPlan, at: datetime) -> None:
        if self._script_for(plan.name).payment_succeeds:
            plan.paid = True
        else:
            plan.failed = True
            for rc in plan.capacities:
                for event in rc.events:
                    event.cancel()
                self._inventory.give_back(rc.instance_type, rc.availability_zone, rc.start, rc.end, rc.count)
        self._refresh(plan, at)

    def _cutoff(self, plan: TrainingPlan, rc: ReservedCapacity, at: datetime) -> None:
        if rc.status == "Active":
            self._notify(plan, "cutoff", rc, at)

    def _refresh(self, plan: TrainingPlan, at: datetime) -> None:
        became_active = []
        for rc in plan.capacities:
            if plan.failed:
                status = "Failed"
            elif not plan.paid:
                status = "Pending"
            elif at < rc.start:
                status = "Scheduled"
            elif at < rc.end:
                status = "Active"
            else:
                status = "Expired"
            if status == "Active" and rc.status != "Active":
                became_active.append(rc)
            if status == "Expired" and rc.status == "Active":
                plan.consumers.clear()
                self._notify(plan, "ended", rc, at)
            rc.status = status
        statuses = {rc.status for rc in plan.capacities}
        if plan.failed or not plan.paid:
            plan.status = "Failed" if plan.failed else "Pending"
        elif "Active" in statuses:
            plan.status = "Active"
        elif statuses == {"Expired"}:
            plan.status = "Expired"
        else:
            plan.status = "Scheduled"
        self._plans.reindex(plan.name)
        for rc in became_active:
            self._notify(plan, "active", rc, at)

    def _notify(self, plan: TrainingPlan, event: str, rc: ReservedCapacity, at: datetime) -> None:
        for listener in list(self._listeners):
            listener(plan, event, rc, at)

    def _live_offering(self, offering_id: str, now: datetime) -> PlanOffering:
        entry = self._offerings.get(offering_id)
        missing = NotFound(f"Training plan offering {offering_id} was not found, has expired or "
                           "its capacity is no longer available.")
        if entry is None or entry[1] <= now:
            raise missing
        offering = entry[0]
        for block in offering.blocks:
            if self._inventory.free_count(block.instance_type, block.availability_zone,
                                          block.start, block.end) < block.count:
                raise missing
        return offering

    def _forget_expired(self, now: datetime) -> None:
        # Offerings are stored in the order they expire (the clock only moves forward).
        offerings = self._offerings
        while offerings:
            offering_id, (_, expires) = next(iter(offerings.items()))
            if expires > now:
                break
            del offerings[offering_id]
