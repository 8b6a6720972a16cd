"""SearchTrainingPlanOfferings: free capacity turned into at most three offerings.

Timing (AWS's guide and its sample). The *origin*, the earliest a block may
start, is max(now + 30 min, StartTimeAfter) rounded up to the whole minute.
Blocks start at the origin or at an 11:30 UTC after it, and end at 11:30 UTC.
No block starts later than now + 56 days; with EndTimeBefore every block ends
by then.

Totals. An offering never totals less than DurationHours. With
``D = ceil(DurationHours / 24)``, an offering whose first block starts at
11:30 UTC totals D days. One that starts at an origin off 11:30 runs a
partial first day and totals either the least whole number of grid days
that reaches DurationHours, or the partial day plus D whole days (AWS's
sample: a 15-hour search at 19:08:27 UTC offers 15 h 51 min and 39 h 51 min
from 19:39, and 24 h from 11:30 the next day).

Blocks. One block, or two (each at least one grid day, the second starting
at or after the first's end). *Chosen:* in one AZ the second starts after a
gap (adjacent blocks would be one block); only ``training-job`` offerings may
change AZ between blocks, every other target keeps one AZ.

Ranking, best first (*chosen*), at most 3 offerings that differ in their
blocks' times: earliest end of the last block; then one block before two;
then earliest start; then earliest start of the second block; then earliest
end of the first; among AZs for the same times, one AZ before two, then AZ
names. One answer may so mix one- and two-block offerings (as the guide's
48-hour example does).

UltraServers. A search by UltraServerType and UltraServerCount reserves
whole UltraServers: the inventory counts them under the UltraServer type,
and the offering's instances are count x the UltraServer's instances.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import math
from datetime import datetime, timedelta
from decimal import Decimal
from typing import cast

import attrs

from sagemaker_plans_local.core.errors import InvalidRequest
from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityInventory
from sagemaker_plans_local.services.sagemaker.plans.offering_search import (
    DAY,
    DayGrid,
    Slot,
    Total,
    best_picks,
    ceil_minute,
)
from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList
from sagemaker_plans_local.services.sagemaker.plans.ultraservers import UltraServerType

INSTANCE_COUNTS = (1, 2, 4, 8, 16, 32, 64)
MAX_DAYS = 182
MAX_LEAD = timedelta(days=56)
#: The earliest a block can start after the search (AWS's sample: 11:08:27 -> 11:39).
LEAD_IN = timedelta(minutes=30)
#: How far in the past StartTimeAfter may be and still mean "from now" (chosen).
START_TOLERANCE = timedelta(minutes=1)
MAX_EXTENSION_DAILY_DAYS = 14


class PlanTarget(str, enum.Enum):
    """The SageMakerResourceName targets the domain treats apart (a plan keeps the request's string)."""

    TRAINING_JOB = "training-job"
    HYPERPOD_CLUSTER = "hyperpod-cluster"


#: Only ``training-job`` plans may change AZ between blocks (chosen for the targets AWS is silent on).
MOVABLE_TARGETS = (PlanTarget.TRAINING_JOB,)


@attrs.frozen
class Capacity:
    """What a search asks for: instances of a type, or whole UltraServers."""

    instance_type: str
    instance_count: int
    ultra_server: UltraServerType | None = None
    ultra_server_count: int | None = None

    @classmethod
    def ultra(cls, ultra_server: UltraServerType, count: int) -> "Capacity":
        return cls(ultra_server.instance_type, count * ultra_server.instances, ultra_server, count)

    @property
    def key(self) -> str:
        """The inventory's name for it: the instance type or the UltraServer type."""
        return self.ultra_server.name if self.ultra_server else self.instance_type

    @property
    def units(self) -> int:
        """How many of ``key`` it takes from the inventory."""
        # ultra() sets ultra_server_count with ultra_server
        return cast(int, self.ultra_server_count) if self.ultra_server else self.instance_count


class HeldCapacity:
    """``instance_type`` and instance counts read from the record's ``capacity``."""

    __slots__ = ()
    capacity: Capacity

    @property
    def instance_type(self) -> str:
        return self.capacity.instance_type

    @property
    def instance_count(self) -> int:
        return self.capacity.instance_count

    @property
    def count(self) -> int:
        return self.capacity.instance_count


class Interval:
    """``duration`` of a record with ``start`` and ``end``."""

    __slots__ = ()
    start: datetime
    end: datetime

    @property
    def duration(self) -> timedelta:
        return self.end - self.start


@attrs.frozen
class OfferedBlock(HeldCapacity, Interval):
    """One reserved-capacity block of an offering."""

    capacity: Capacity
    availability_zone: str
    start: datetime
    end: datetime


@attrs.frozen
class PlanOffering(HeldCapacity):
    """One answer of SearchTrainingPlanOfferings: one or two blocks, in time order."""

    offering_id: str
    target: str
    capacity: Capacity
    blocks: tuple[OfferedBlock, ...]
    requested_start_after: datetime | None
    requested_end_before: datetime | None
    upfront_fee: Decimal
    currency: str = "USD"

    @property
    def start(self) -> datetime:
        return self.blocks[0].start

    @property
    def end(self) -> datetime:
        return self.blocks[-1].end

    @property
    def duration(self) -> timedelta:
        return sum((block.duration for block in self.blocks), timedelta(0))


@attrs.frozen
class ExtensionOffering(HeldCapacity, Interval):
    """A block that extends a plan's last block by ``duration_hours`` in the same AZ."""

    offering_id: str
    capacity: Capacity
    availability_zone: str
    start: datetime
    end: datetime
    duration_hours: int
    upfront_fee: Decimal
    currency: str = "USD"


def origin_of(now: datetime, start_after: datetime | None) -> datetime:
    """The earliest moment a block of a search at ``now`` may start."""
    earliest = now + LEAD_IN
    return ceil_minute(max(earliest, start_after) if start_after is not None else earliest)


def search_offerings(
    inventory: CapacityInventory,
    prices: PriceList,
    *,
    now: datetime,
    capacity: Capacity,
    duration_hours: int,
    target: str,
    start_after: datetime | None = None,
    end_before: datetime | None = None,
) -> list[PlanOffering]:
    """Up to 3 offerings for the request, best first; [] when nothing fits.

    Raises InvalidRequest when the request breaks a service rule.
    """
    _check_request(now, capacity, duration_hours, start_after, end_before)
    grid = DayGrid.from_origin(origin_of(now, start_after))
    last_start = grid.index_at_or_before(now + MAX_LEAD)
    if last_start < 0:
        return []
    totals = grid.totals(duration_hours, last_start)
    last_end = last_start + max(days for days, _, _ in totals)
    if end_before is not None:
        last_end = min(last_end, grid.index_at_or_before(end_before))
    one_zone = target not in MOVABLE_TARGETS

    window = (duration_hours, last_start, last_end, one_zone)
    picks = inventory.remembered(
        (
            "offerings",
            capacity.key,
            capacity.units,
            duration_hours,
            one_zone,
            grid.origin,
            last_start,
            last_end,
        ),
        capacity.key,
        functools.partial(_picks, inventory, capacity, grid, totals, window),
    )
    if not picks:
        return []
    number = inventory.next_search_number()
    return [
        _offering(prices, number, target, capacity, grid, pick, start_after, end_before) for pick in picks
    ]


def _picks(
    inventory: CapacityInventory,
    capacity: Capacity,
    grid: DayGrid,
    totals: list[Total],
    window: tuple[int, int, int, bool],
) -> list[tuple[Slot, ...]]:
    """The best picks of a search ``window`` (hours, last start, last end, one AZ), remembered by
    the free runs they come from: a change that leaves the runs in the window as they were
    (capacity added beyond it, or elsewhere in time) reuses them."""
    _, last_start, last_end, one_zone = window
    runs = _runs(inventory, grid, capacity, last_end)
    content = tuple((az, tuple(spans)) for az, spans in sorted(runs.items()))
    return inventory.cached(
        ("picks", content, grid.origin, *window),
        lambda: best_picks(runs, totals, last_start, last_end, one_zone),
    )


def _offering(
    prices: PriceList,
    number: int,
    target: str,
    capacity: Capacity,
    grid: DayGrid,
    pick: tuple[Slot, ...],
    start_after: datetime | None,
    end_before: datetime | None,
) -> PlanOffering:
    """The offering of one pick of day slots (search ``number``): its blocks, fee and id."""
    blocks = tuple(OfferedBlock(capacity, az, grid.at(j), grid.at(k)) for az, j, k in pick)
    fee = sum((_fee(prices, capacity, block.duration) for block in blocks), Decimal("0.00"))
    offering_id = "tpo-" + _digest(number, target, capacity, blocks)
    return PlanOffering(offering_id, target, capacity, blocks, start_after, end_before, fee)


def search_extensions(
    inventory: CapacityInventory,
    prices: PriceList,
    *,
    now: datetime,
    capacity: Capacity,
    availability_zone: str,
    plan_end: datetime,
    duration_hours: int,
) -> list[ExtensionOffering]:
    """The extension ``[plan_end, plan_end + days)`` if its capacity is free, else [].

    ``duration_hours`` rounds up to whole days: 1 to 14 days, or a multiple of 7
    days up to 182; anything else raises InvalidRequest.
    """
    days = math.ceil(duration_hours / 24)
    if not (1 <= days <= MAX_EXTENSION_DAILY_DAYS or (days % 7 == 0 and 0 < days <= MAX_DAYS)):
        raise InvalidRequest(
            f"DurationHours {duration_hours} is not a valid extension: use 1 to "
            f"{MAX_EXTENSION_DAILY_DAYS} days (24 to {MAX_EXTENSION_DAILY_DAYS * 24} hours) or a "
            f"multiple of 7 days up to {MAX_DAYS} days ({MAX_DAYS * 24} hours)."
        )
    if plan_end <= now:
        raise InvalidRequest("The training plan has already ended and cannot be extended.")
    end = plan_end + days * DAY
    if inventory.free_count(capacity.key, availability_zone, plan_end, end) < capacity.units:
        return []
    block = OfferedBlock(capacity, availability_zone, plan_end, end)
    offering_id = "tpeo-" + _digest(inventory.next_search_number(), "extension", capacity, (block,))
    return [
        ExtensionOffering(
            offering_id,
            capacity,
            availability_zone,
            plan_end,
            end,
            days * 24,
            _fee(prices, capacity, block.duration),
        )
    ]


# -- request rules ------------------------------------------------------------
def _check_request(
    now: datetime,
    capacity: Capacity,
    duration_hours: int,
    start_after: datetime | None,
    end_before: datetime | None,
) -> None:
    if capacity.ultra_server is None and capacity.instance_count not in INSTANCE_COUNTS:
        raise InvalidRequest(
            f"InstanceCount {capacity.instance_count} is not valid; use one of: "
            f"{', '.join(map(str, INSTANCE_COUNTS))}."
        )
    days = math.ceil(duration_hours / 24)
    if not 1 <= days <= MAX_DAYS:
        raise InvalidRequest(
            f"DurationHours {duration_hours} is not valid: a training plan lasts "
            f"1 to {MAX_DAYS} days (1 to {MAX_DAYS * 24} hours, rounded up to whole days)."
        )
    earliest = now
    if start_after is not None:
        if start_after < now - START_TOLERANCE:
            raise InvalidRequest("StartTimeAfter must be in the future.")
        if start_after > now + MAX_LEAD:
            raise InvalidRequest(f"StartTimeAfter must be at most {MAX_LEAD.days} days (8 weeks) from now.")
        earliest = max(start_after, now)
    if end_before is not None and end_before < earliest + DAY:
        raise InvalidRequest(
            "EndTimeBefore must be at least 24 hours after StartTimeAfter "
            "(or now, when StartTimeAfter is not given)."
        )


# -- search ---------------------------------------------------------------------
def _runs(
    inventory: CapacityInventory, grid: DayGrid, capacity: Capacity, last_end: int
) -> dict[str, list[tuple[int, int]]]:
    """Per AZ, the maximal runs of grid days with the capacity free, in time order.

    Each AZ's runs are remembered until that AZ's capacity changes, so a search
    right after one AZ changed recomputes that AZ only.
    """
    latest = grid.at(last_end)
    runs: dict[str, list[tuple[int, int]]] = {}
    for az in inventory.zones(capacity.key):
        spans = inventory.remembered(
            ("runs", capacity.key, az, capacity.units, grid.origin, latest),
            (capacity.key, az),
            functools.partial(_zone_runs, inventory, grid, capacity, az, latest),
        )
        if spans:
            runs[az] = spans
    return runs


def _zone_runs(
    inventory: CapacityInventory, grid: DayGrid, capacity: Capacity, az: str, latest: datetime
) -> list[tuple[int, int]]:
    spans = []
    for start, end in inventory.windows(capacity.key, az, capacity.units, grid.origin, latest):
        first, stop = grid.index_at_or_after(start), grid.index_at_or_before(end)
        if stop > first:
            spans.append((first, stop))
    return spans


def _fee(prices: PriceList, capacity: Capacity, duration: timedelta) -> Decimal:
    return prices.fee(capacity.instance_type, capacity.instance_count, duration)


def _digest(number: int, kind: str, capacity: Capacity, blocks: tuple[OfferedBlock, ...]) -> str:
    content = "|".join(
        [str(number), kind, capacity.key, str(capacity.units)]
        + [f"{b.availability_zone},{b.start.isoformat()},{b.end.isoformat()}" for b in blocks]
    )
    return hashlib.sha1(content.encode()).hexdigest()
