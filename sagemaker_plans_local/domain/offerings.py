"""SearchTrainingPlanOfferings: free capacity turned into at most three offerings.

Timing. Blocks lie on a day grid. Its origin is the earliest moment a block may
start: max(now, StartTimeAfter) rounded up to the next half hour (:00 or :30);
the grid points after it are every 11:30 UTC. A block of ``d`` days starting at
grid point ``j`` ends at grid point ``j + d``: it always ends at 11:30 UTC, and
one starting at an origin that is not 11:30 runs a partial first day (so an
offering's duration need not be a multiple of 24 h). No block starts later
than now + 56 days; with EndTimeBefore every block ends by then.

Search. First, one contiguous block of the requested days in one AZ with
enough instances free throughout. Only if there is none at all, the days are
split over two blocks (each at least one day, the second starting at or after
the first's end). HyperPod offerings keep both blocks in one AZ; training-job
offerings may switch AZ between them.

Ranking, best first (at most 3 offerings, each differing from the others in the
start or AZ of at least one block):

- contiguous: earliest start, then AZ name;
- two blocks: earliest end of the second block, then earliest start, then
  same-AZ before cross-AZ, then AZ names (first block's, then second's), then
  earliest start of the second block.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime, time, timedelta, timezone
from decimal import Decimal
from itertools import islice
from typing import Iterator

import attrs

from .capacity import CapacityInventory
from .errors import InvalidRequest
from .pricing import PriceList

TARGETS = ("training-job", "hyperpod-cluster")
#: Targets the API model lists that this emulator does not plan for.
UNSUPPORTED_TARGETS = ("endpoint", "studio-apps")
INSTANCE_COUNTS = (1, 2, 4, 8, 16, 32, 64)
MAX_DAYS = 182
MAX_LEAD = timedelta(days=56)
CAPACITY_END = time(11, 30)  # UTC: every block ends at 11:30 UTC
MAX_EXTENSION_DAILY_DAYS = 14
MAX_OFFERINGS = 3

DAY = timedelta(days=1)
HALF_HOUR = timedelta(minutes=30)

#: A block on the grid: (AZ, start index, end index).
Slot = tuple[str, int, int]
#: Runs of grid days with enough capacity: (start index, end index, AZ).
Run = tuple[int, int, str]


def ceil_half_hour(moment: datetime) -> datetime:
    """``moment`` in UTC, rounded up to the next :00 or :30."""
    moment = moment.astimezone(timezone.utc)
    floor = moment.replace(minute=moment.minute // 30 * 30, second=0, microsecond=0)
    return floor if floor == moment else floor + HALF_HOUR


@attrs.frozen
class DayGrid:
    """Where blocks may start and end: ``origin``, then every 11:30 UTC after it."""

    origin: datetime
    first: datetime  # the first 11:30 UTC strictly after origin

    @classmethod
    def from_moment(cls, moment: datetime) -> "DayGrid":
        """The grid whose origin is ``moment`` rounded up to the next half hour."""
        origin = ceil_half_hour(moment)
        first = datetime.combine(origin.date(), CAPACITY_END, timezone.utc)
        return cls(origin, first if first > origin else first + DAY)

    def at(self, index: int) -> datetime:
        """Grid point ``index`` (0 is the origin)."""
        return self.origin if index == 0 else self.first + (index - 1) * DAY

    def index_at_or_after(self, moment: datetime) -> int:
        """The first grid point at or after ``moment``."""
        if moment <= self.origin:
            return 0
        return 1 - ((self.first - moment) // DAY)

    def index_at_or_before(self, moment: datetime) -> int:
        """The last grid point at or before ``moment``; -1 before the origin."""
        if moment < self.first:
            return 0 if moment >= self.origin else -1
        return 1 + (moment - self.first) // DAY


@attrs.frozen
class OfferedBlock:
    """One reserved-capacity block of an offering."""

    instance_type: str
    availability_zone: str
    start: datetime
    end: datetime
    count: int

    @property
    def duration(self) -> timedelta:
        return self.end - self.start


@attrs.frozen
class PlanOffering:
    """One answer of SearchTrainingPlanOfferings: one or two blocks, in time order."""

    offering_id: str
    target: str
    instance_type: str
    instance_count: int
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
class ExtensionOffering:
    """A block that extends a plan's last block by ``duration_hours`` in the same AZ."""

    offering_id: str
    instance_type: str
    instance_count: int
    availability_zone: str
    start: datetime
    end: datetime
    duration_hours: int
    upfront_fee: Decimal
    currency: str = "USD"


def search_offerings(inventory: CapacityInventory, prices: PriceList, *, now: datetime,
                     instance_type: str, instance_count: int, duration_hours: int, target: str,
                     start_after: datetime | None = None,
                     end_before: datetime | None = None) -> list[PlanOffering]:
    """Up to 3 offerings for the request, best first; [] when nothing fits.

    Raises InvalidRequest when the request breaks a service rule.
    """
    days = _check_request(now, instance_count, duration_hours, target, start_after, end_before)
    grid = DayGrid.from_moment(start_after or now)
    last_start = grid.index_at_or_before(now + MAX_LEAD)
    last_end = last_start + days
    if end_before is not None:
        last_end = min(last_end, grid.index_at_or_before(end_before))
    if last_start < 0 or last_end < 1:
        return []
    def find() -> list:
        runs = _runs(inventory, grid, instance_type, instance_count, last_end)
        return (_contiguous(runs, days, last_start)
                or _split(runs, days, last_start, last_end, same_zone=target == "hyperpod-cluster"))

    picks = inventory.remembered(
        ("offerings", instance_type, instance_count, days, target, grid.origin, last_start, last_end), find)
    if not picks:
        return []
    number = inventory.next_search_number()
    offerings = []
    for pick in picks:
        blocks = tuple(OfferedBlock(instance_type, az, grid.at(j), grid.at(k), instance_count)
                       for az, j, k in pick)
        fee = sum((prices.fee(instance_type, instance_count, block.duration) for block in blocks),
                  Decimal("0.00"))
        offering_id = "tpo-" + _digest(number, target, instance_type, instance_count, blocks)
        offerings.append(PlanOffering(offering_id, target, instance_type, instance_count, blocks,
                                      start_after, end_before, fee))
    return offerings


def search_extensions(inventory: CapacityInventory, prices: PriceList, *, now: datetime,
                      instance_type: str, instance_count: int, availability_zone: str,
                      plan_end: datetime, duration_hours: int) -> list[ExtensionOffering]:
    """The extension ``[plan_end, plan_end + days)`` if its capacity is free, else [].

    ``duration_hours`` rounds up to whole days: 1 to 14 days, or a multiple of 7
    days up to 182; anything else raises InvalidRequest.
    """
    days = math.ceil(duration_hours / 24)
    if not (1 <= days <= MAX_EXTENSION_DAILY_DAYS or (days % 7 == 0 and 0 < days <= MAX_DAYS)):
        raise InvalidRequest(
            f"DurationHours {duration_hours} is not a valid extension: use 1 to "
            f"{MAX_EXTENSION_DAILY_DAYS} days (24 to {MAX_EXTENSION_DAILY_DAYS * 24} hours) or a "
            f"multiple of 7 days up to {MAX_DAYS} days ({MAX_DAYS * 24} hours).")
    if plan_end <= now:
        raise InvalidRequest("The training plan has already ended and cannot be extended.")
    end = plan_end + days * DAY
    if inventory.free_count(instance_type, availability_zone, plan_end, end) < instance_count:
        return []
    block = OfferedBlock(instance_type, availability_zone, plan_end, end, instance_count)
    offering_id = "tpeo-" + _digest(inventory.next_search_number(), "extension", instance_type,
                                    instance_count, (block,))
    fee = prices.fee(instance_type, instance_count, block.duration)
    return [ExtensionOffering(offering_id, instance_type, instance_count, availability_zone,
                              plan_end, end, days * 24, fee)]


# -- request rules ------------------------------------------------------------
def _check_request(now: datetime, instance_count: int, duration_hours: int, target: str,
                   start_after: datetime | None, end_before: datetime | None) -> int:
    if target in UNSUPPORTED_TARGETS:
        raise InvalidRequest(f"TargetResources {target!r} is not supported by this emulator; "
                             f"use one of: {', '.join(TARGETS)}.")
    if target not in TARGETS:
        raise InvalidRequest(f"TargetResources {target!r} is not valid; use one of: {', '.join(TARGETS)}.")
    if instance_count not in INSTANCE_COUNTS:
        raise InvalidRequest(f"InstanceCount {instance_count} is not valid; use one of: "
                             f"{', '.join(map(str, INSTANCE_COUNTS))}.")
    days = math.ceil(duration_hours / 24)
    if not 1 <= days <= MAX_DAYS:
        raise InvalidRequest(f"DurationHours {duration_hours} is not valid: a training plan lasts "
                             f"1 to {MAX_DAYS} days (1 to {MAX_DAYS * 24} hours, rounded up to whole days).")
    earliest = now
    if start_after is not None:
        if start_after < now:
            raise InvalidRequest("StartTimeAfter must be in the future.")
        if start_after > now + MAX_LEAD:
            raise InvalidRequest(f"StartTimeAfter must be at most {MAX_LEAD.days} days "
                                 "(8 weeks) from now.")
        earliest = start_after
    if end_before is not None and end_before < earliest + DAY:
        raise InvalidRequest("EndTimeBefore must be at least 24 hours after StartTimeAfter "
                             "(or now, when StartTimeAfter is not given).")
    return days


# -- search ---------------------------------------------------------------------
def _runs(inventory: CapacityInventory, grid: DayGrid, instance_type: str, count: int,
          last_end: int) -> list[Run]:
    """Maximal runs of grid days with ``count`` instances free, by start (then AZ)."""
    latest = grid.at(last_end)
    at_or_after, at_or_before = grid.index_at_or_after, grid.index_at_or_before
    runs = []
    for az in inventory.zones(instance_type):
        for start, end in inventory.windows(instance_type, az, count, grid.origin, latest):
            first, stop = at_or_after(start), at_or_before(end)
            if stop > first:
                runs.append((first, stop, az))
    runs.sort()
    return runs


def _contiguous(runs: list[Run], days: int, last_start: int) -> list[tuple[Slot]]:
    """The best single blocks of ``days`` days: earliest start, then AZ."""
    found: list[tuple[int, str]] = []
    for first, stop, az in runs:
        if len(found) == MAX_OFFERINGS and first > found[-1][0]:
            break  # runs come by start: no later run can beat the third best
        last = min(stop - days, last_start, first + MAX_OFFERINGS - 1)
        if last >= first:
            found.extend((j, az) for j in range(first, last + 1))
            found.sort()
            del found[MAX_OFFERINGS:]
    return [((az, j, j + days),) for j, az in found]


def _split(runs: list[Run], days: int, last_start: int, last_end: int,
           same_zone: bool) -> list[tuple[Slot, Slot]]:
    """The best pairs of blocks summing to ``days`` days (ranking in the module docstring)."""
    usable = [run for run in runs if run[0] <= last_start]
    if days < 2 or not usable:
        return []
    partners: dict[tuple[str | None, int], list[Run]] = {}  # (AZ or any, fewest days) -> runs
    ranked: list[tuple[tuple, tuple[Slot, Slot]]] = []
    # (end, start) of the third best so far: a pick ranking strictly after it cannot enter.
    bound = (math.inf, math.inf)
    for a1, c1, az1 in usable:
        if (a1 + days, a1) > bound:
            break  # runs come by start: later ones end and start no earlier
        length = c1 - a1
        key = (az1 if same_zone else None, days - length)
        if key not in partners:
            partners[key] = [run for run in usable if run[1] - run[0] >= key[1]
                             and (not same_zone or run[2] == az1)]
        for a2, c2, az2 in partners[key]:
            if a2 + 1 > bound[0]:
                break
            # The earliest end of block 2 (block 1 taking the start of its run).
            low = max(a1 + days, a2 + 1, a2 + days - length)
            if (low, a1) > bound or low > min(last_start + days - 1, c2, last_end):
                continue
            ranked.extend(islice(_pair_picks((a1, c1, az1), (a2, c2, az2), low, days, last_start,
                                             last_end), MAX_OFFERINGS))
            ranked.sort(key=lambda ranked_pick: ranked_pick[0])
            del ranked[MAX_OFFERINGS:]
            if len(ranked) == MAX_OFFERINGS:
                bound = ranked[-1][0][:2]
    return [pick for _, pick in ranked]


def _pair_picks(first: Run, second: Run, low: int, days: int, last_start: int,
                last_end: int) -> Iterator[tuple[tuple, tuple[Slot, Slot]]]:
    """Block 1 in run ``first`` and block 2 in run ``second``, best first, with rank keys.

    Only the best pick for each pair of block starts comes out.

    With block 2 ending at ``end`` and block 1 taking ``d1`` days from ``j1``,
    block 2 starts at ``end - days + d1``; it follows block 1 iff
    ``j1 <= end - days``. ``low`` is the earliest feasible end; there ``j1`` is
    the run's start, which always leaves block 1 the most room.
    """
    a1, c1, az1 = first
    a2, c2, az2 = second
    seen = set()  # block starts already offered: a later end with the same starts only ranks lower
    for end in range(low, min(last_start + days - 1, c2, last_end) + 1):
        d1_low = max(1, days - end + a2)
        for j1 in range(a1, min(last_start, end - days, c1 - 1) + 1):
            d1_high = min(days - 1, c1 - j1, last_start - end + days)
            if d1_high < d1_low:
                break  # later starts leave block 1 even less room
            for d1 in range(d1_low, d1_high + 1):
                j2 = end - days + d1
                if (j1, j2) in seen:
                    continue
                seen.add((j1, j2))
                yield ((end, j1, az1 != az2, az1, az2, j2), ((az1, j1, j1 + d1), (az2, j2, end)))


def _digest(number: int, kind: str, instance_type: str, count: int,
            blocks: tuple[OfferedBlock, ...]) -> str:
    content = "|".join([str(number), kind, instance_type, str(count)] + [
        f"{b.availability_zone},{b.start.isoformat()},{b.end.isoformat()}" for b in blocks])
    return hashlib.sha1(content.encode()).hexdigest()
