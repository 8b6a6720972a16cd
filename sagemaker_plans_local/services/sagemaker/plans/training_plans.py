"""Training plans: bought offerings, their reserved-capacity blocks and statuses.

A plan is ``Pending`` while its payment runs, ``Scheduled`` once paid,
``Active`` while one of its blocks runs, ``Scheduled`` again between blocks
and ``Expired`` after the last; ``Failed`` when payment fails or cannot
complete 5 minutes before the first block starts (AWS's purchase deadline;
the capacity goes back to the inventory). Jobs, warm
pools and HyperPod nodes take instances from the active block through
:meth:`TrainingPlans.allocate`; subscribers hear when a block becomes active
and when its instances are taken back (30 min before its end, 1 h for HyperPod).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import operator
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Iterator

from sagemaker_plans_local.core.arns import sagemaker_arn
from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.errors import InUse, NotFound
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.core.store import Position, Table
from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityInventory
from sagemaker_plans_local.services.sagemaker.plans.offerings import (
    Capacity,
    ExtensionOffering,
    PlanOffering,
    search_extensions,
    search_offerings,
)
from sagemaker_plans_local.services.sagemaker.plans.plan_records import (
    LATE_PAYMENT,
    MESSAGES,
    PAYMENT_DEADLINE,
    Extension,
    Listener,
    PlanEvent,
    PlanScript,
    ReservedCapacity,
    TrainingPlan,
    check_extendable,
    forget_expired,
    spares_for,
)
from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList
from sagemaker_plans_local.services.sagemaker.statuses import PlanStatus

#: How long an offering id can be bought after the search that produced it (chosen).
OFFERING_LIFETIME = timedelta(hours=24)


#: The sorted indexes of the plan table: name, start, status (re-sorted as it changes).
def _start(plan: TrainingPlan) -> float:
    return plan.start.timestamp()


PLAN_INDEXES: dict[str, Callable[[TrainingPlan], Any]] = {
    "name": operator.attrgetter("name"),
    "start": _start,
    "status": operator.attrgetter("status"),
}


class TrainingPlans:
    """The training plans, offerings and extensions of one region."""

    def __init__(
        self,
        clock: VirtualClock,
        settings: Settings,
        region: str,
        account_id: str,
        inventory: CapacityInventory,
        prices: PriceList,
        script_for: Callable[[str], PlanScript],
    ) -> None:
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
        self._extension_offerings: dict[str, tuple[ExtensionOffering, datetime, TrainingPlan]] = {}
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

    def scan(
        self, index: str, descending: bool = False, after: Position | None = None
    ) -> Iterator[tuple[Position, TrainingPlan]]:
        """Plans in the order of one of ``PLAN_INDEXES``, resuming after ``after``."""
        return self._plans.scan(index, descending, after)

    def reserved_capacity(self, arn: str) -> tuple[TrainingPlan, ReservedCapacity]:
        for plan in self._plans:
            for rc in plan.capacities:
                if rc.arn == arn:
                    return plan, rc
        raise NotFound(f"Reserved capacity {arn} does not exist.")

    def subscribe(self, listener: Listener) -> None:
        """Hear ``(plan, PlanEvent, block, at)`` events."""
        self._listeners.append(listener)

    # -- offerings -----------------------------------------------------------
    def search(
        self,
        *,
        duration_hours: int,
        target: str,
        capacity: Capacity | None = None,
        instance_type: str = "",
        instance_count: int = 0,
        start_after: datetime | None = None,
        end_before: datetime | None = None,
    ) -> list[PlanOffering]:
        """Offerings for ``capacity`` (or ``instance_count`` x ``instance_type``), remembered for purchase."""
        capacity = capacity or Capacity(instance_type, instance_count)
        now = self._clock.now()
        offerings = search_offerings(
            self._inventory,
            self._prices,
            now=now,
            capacity=capacity,
            duration_hours=duration_hours,
            target=target,
            start_after=start_after,
            end_before=end_before,
        )
        forget_expired(self._offerings, now)
        for offering in offerings:
            self._offerings[offering.offering_id] = (offering, now + OFFERING_LIFETIME)
        return offerings

    def search_extensions(self, plan_arn: str, duration_hours: int) -> list[ExtensionOffering]:
        plan = self.get(plan_arn)
        now = self._clock.now()
        check_extendable(plan, now)
        last = plan.capacities[-1]
        offerings = search_extensions(
            self._inventory,
            self._prices,
            now=now,
            capacity=last.capacity,
            availability_zone=last.availability_zone,
            plan_end=last.end,
            duration_hours=duration_hours,
        )
        forget_expired(self._extension_offerings, now)
        for offering in offerings:
            self._extension_offerings[offering.offering_id] = (offering, now + OFFERING_LIFETIME, plan)
        return offerings

    # -- plans -----------------------------------------------------------------
    def create(self, name: str, offering_id: str, spares_per_ultra_server: int | None = None) -> TrainingPlan:
        """Buy an offering: its capacity leaves the inventory; payment completes later."""
        if name in self._plans:
            raise InUse(f"Training plan {name} already exists.")
        now = self._clock.now()
        offering = self._live_offering(offering_id, now)
        spares = spares_for(offering, spares_per_ultra_server)
        for block in offering.blocks:
            self._inventory.remove(
                block.capacity.key, block.availability_zone, block.start, block.end, block.capacity.units
            )
        self._offerings.pop(offering_id, None)
        arn = sagemaker_arn(self._region, self._account_id, "training-plan", name)
        capacities = [
            self._new_block(block.capacity, block.availability_zone, block.start, block.end)
            for block in offering.blocks
        ]
        plan = TrainingPlan(
            name,
            arn,
            offering.target,
            offering.capacity,
            now,
            offering.upfront_fee,
            offering.currency,
            capacities,
            spares,
        )
        self._plans.put(name, plan)
        for rc in capacities:
            self._schedule_block(plan, rc)
        paid_at = now + self._payment_time()
        deadline = plan.start - PAYMENT_DEADLINE
        if paid_at <= deadline:
            self._clock.schedule(paid_at, functools.partial(self._settle_payment, plan))
        elif deadline > now:
            self._clock.schedule(deadline, functools.partial(self._fail_payment, plan, message=LATE_PAYMENT))
        else:  # bought too late to pay in time (chosen: created, and Failed at once)
            self._fail_payment(plan, now, LATE_PAYMENT)
        return plan

    def extend(self, offering_id: str) -> tuple[TrainingPlan, Extension]:
        now = self._clock.now()
        entry = self._extension_offerings.get(offering_id)
        if entry is None or entry[1] <= now:
            raise NotFound(f"Training plan extension offering {offering_id} was not found or has expired.")
        offering, _, plan = entry
        last = plan.capacities[-1]
        check_extendable(plan, now)
        key, units = offering.capacity.key, offering.capacity.units
        if (
            offering.start != last.end
            or self._inventory.free_count(key, offering.availability_zone, offering.start, offering.end)
            < units
        ):
            raise NotFound(
                f"Training plan extension offering {offering_id} is no longer available "
                f"for training plan {plan.name}."
            )
        self._inventory.remove(key, offering.availability_zone, offering.start, offering.end, units)
        del self._extension_offerings[offering_id]
        for event in last.events:
            event.cancel()
        last.events.clear()
        last.end = offering.end
        self._schedule_block(plan, last)
        plan.upfront_fee += offering.upfront_fee
        extension = Extension(offering, now)
        plan.extensions.append(extension)
        self._clock.schedule(now + self._payment_time(), functools.partial(_mark_paid, extension))
        if last.status == PlanStatus.ACTIVE and now >= offering.start - plan.cutoff_offset:
            # Its instances were already taken back: the extended block hands them out again.
            self._notify(plan, PlanEvent.ACTIVE, last, now)
        return plan, extension

    # -- instances -------------------------------------------------------------
    def allocate(
        self, plan: TrainingPlan, consumer: str, count: int, at: datetime
    ) -> ReservedCapacity | None:
        """Take ``count`` instances of the active block for ``consumer``, if free and before cutoff."""
        rc = plan.active_block()
        if rc is None or at >= rc.end - plan.cutoff_offset:
            return None
        if plan.usable_count - plan.in_use < count:
            return None
        plan.consumers[consumer] = plan.consumers.get(consumer, 0) + count
        return rc

    def release(self, plan: TrainingPlan, consumer: str, keep: int = 0) -> None:
        """Give back ``consumer``'s instances of ``plan``, all but ``keep`` of them."""
        if keep > 0 and consumer in plan.consumers:
            plan.consumers[consumer] = min(keep, plan.consumers[consumer])
        else:
            plan.consumers.pop(consumer, None)

    def hand_over(self, plan: TrainingPlan, giver: str, taker: str) -> None:
        """Move the instances held by ``giver`` to ``taker`` (a job's warm pool, and back)."""
        if giver in plan.consumers:
            plan.consumers[taker] = plan.consumers.pop(giver)

    # -- lifecycle -------------------------------------------------------------
    def _payment_time(self) -> timedelta:
        """How long a payment takes to settle (a simulated service phase)."""
        return timedelta(
            seconds=self._settings.service_seconds(self._settings.plan_payment_seconds, self._clock.manual)
        )

    def _new_block(self, capacity: Capacity, zone: str, start: datetime, end: datetime) -> ReservedCapacity:
        digest = hashlib.sha1(f"{self._region}/{next(self._rc_ids)}/{start}".encode()).hexdigest()[:16]
        rc_id = f"rc-{digest}"
        servers = [f"us-{digest[:8]}{n:04d}" for n in range(capacity.ultra_server_count or 0)]
        return ReservedCapacity(
            rc_id,
            sagemaker_arn(self._region, self._account_id, "reserved-capacity", rc_id),
            capacity,
            zone,
            start,
            end,
            ultra_servers=servers,
        )

    def _schedule_block(self, plan: TrainingPlan, rc: ReservedCapacity) -> None:
        schedule = self._clock.schedule
        now = self._clock.now()
        if rc.start > now:
            rc.events.append(schedule(rc.start, functools.partial(self._refresh, plan)))
        rc.events.append(
            schedule(max(now, rc.end - plan.cutoff_offset), functools.partial(self._cutoff, plan, rc))
        )
        rc.events.append(schedule(max(now, rc.end), functools.partial(self._refresh, plan)))

    def _settle_payment(self, plan: TrainingPlan, at: datetime) -> None:
        if self._script_for(plan.name).payment_succeeds:
            plan.paid = True
            self._refresh(plan, at)
        else:
            self._fail_payment(plan, at, MESSAGES[PlanStatus.FAILED])

    def _fail_payment(self, plan: TrainingPlan, at: datetime, message: str) -> None:
        plan.failed = True
        plan.failure_message = message
        for rc in plan.capacities:
            for event in rc.events:
                event.cancel()
            self._inventory.give_back(
                rc.capacity.key, rc.availability_zone, rc.start, rc.end, rc.capacity.units
            )
        self._refresh(plan, at)

    def _cutoff(self, plan: TrainingPlan, rc: ReservedCapacity, at: datetime) -> None:
        if rc.status == PlanStatus.ACTIVE:
            self._notify(plan, PlanEvent.CUTOFF, rc, at)

    def _refresh(self, plan: TrainingPlan, at: datetime) -> None:
        became_active = []
        for rc in plan.capacities:
            if plan.failed:
                status = PlanStatus.FAILED
            elif not plan.paid:
                status = PlanStatus.PENDING
            elif at < rc.start:
                status = PlanStatus.SCHEDULED
            elif at < rc.end:
                status = PlanStatus.ACTIVE
            else:
                status = PlanStatus.EXPIRED
            if status == PlanStatus.ACTIVE and rc.status != PlanStatus.ACTIVE:
                became_active.append(rc)
            if status == PlanStatus.EXPIRED and rc.status == PlanStatus.ACTIVE:
                plan.consumers.clear()
                self._notify(plan, PlanEvent.ENDED, rc, at)
            rc.status = status
        statuses = {rc.status for rc in plan.capacities}
        if plan.failed or not plan.paid:
            plan.status = PlanStatus.FAILED if plan.failed else PlanStatus.PENDING
        elif PlanStatus.ACTIVE in statuses:
            plan.status = PlanStatus.ACTIVE
        elif statuses == {PlanStatus.EXPIRED}:
            plan.status = PlanStatus.EXPIRED
        else:
            plan.status = PlanStatus.SCHEDULED
        self._plans.reindex(plan.name)
        for rc in became_active:
            self._notify(plan, PlanEvent.ACTIVE, rc, at)

    def _notify(self, plan: TrainingPlan, event: PlanEvent, rc: ReservedCapacity, at: datetime) -> None:
        for listener in list(self._listeners):
            listener(plan, event, rc, at)

    def _live_offering(self, offering_id: str, now: datetime) -> PlanOffering:
        entry = self._offerings.get(offering_id)
        missing = NotFound(
            f"Training plan offering {offering_id} was not found, has expired or "
            "its capacity is no longer available."
        )
        if entry is None or entry[1] <= now:
            raise missing
        offering = entry[0]
        for block in offering.blocks:
            if (
                self._inventory.free_count(
                    block.capacity.key, block.availability_zone, block.start, block.end
                )
                < block.capacity.units
            ):
                raise missing
        return offering


def _mark_paid(extension: Extension, at: datetime) -> None:
    """An extension's payment completed (a clock event)."""
    extension.paid = True
