"""Free accelerated capacity: how many instances can still be reserved, when and where.

Per (instance type, Availability Zone) the inventory is a step function of time,
kept as sorted breakpoints so that every query is a bisect plus a linear scan
over the breakpoints of that one (type, AZ).
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime, timezone
from typing import Callable, Hashable, TypeVar

import attrs

Key = tuple[str, str]


@attrs.frozen
class CapacityBlock:
    """``count`` instances of ``instance_type`` free in one AZ for ``[start, end)``."""

    instance_type: str
    availability_zone: str
    start: datetime
    end: datetime
    count: int


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"capacity times must be aware datetimes, got naive {moment!r}")
    return moment.astimezone(timezone.utc)


class _Steps:
    """One (type, AZ): ``counts[i]`` instances are free on ``[times[i], times[i + 1])``.

    The last count is always 0; before the first breakpoint nothing is free.
    """

    __slots__ = ("deltas", "times", "counts")

    def __init__(self) -> None:
        self.deltas: dict[datetime, int] = {}
        self.times: list[datetime] = []
        self.counts: list[int] = []

    def shift(self, start: datetime, end: datetime, count: int) -> None:
        deltas = self.deltas
        for moment, change in ((start, count), (end, -count)):
            level = deltas.get(moment, 0) + change
            if level:
                deltas[moment] = level
            else:
                del deltas[moment]
        times: list[datetime] = []
        counts: list[int] = []
        level = 0
        for moment in sorted(deltas):
            level += deltas[moment]
            if not counts or counts[-1] != level:
                times.append(moment)
                counts.append(level)
        self.times, self.counts = times, counts

    def minimum(self, start: datetime, end: datetime) -> int:
        times, counts = self.times, self.counts
        i = bisect_right(times, start) - 1
        if i < 0:
            return 0
        lowest = counts[i]
        for k in range(i + 1, len(times)):
            if times[k] >= end or lowest == 0:
                break
            lowest = min(lowest, counts[k])
        return lowest


_MEMO_LIMIT = 4096
T = TypeVar("T")


class CapacityInventory:
    """Instances free for reservation: per (instance_type, availability_zone) a step function of time."""

    def __init__(self) -> None:
        self.version = 0
        self._steps: dict[Key, _Steps] = {}
        self._zones: dict[str, list[str]] = {}
        self._searches = 0
        self._memo: dict = {}
        # Changes per instance type (or UltraServer type), and clears: what a remembered value depends on.
        self._changes: dict[str | Key, int] = {}
        self._clears = 0

    # -- changes -------------------------------------------------------------
    def add(self, instance_type: str, instance_count: int, availability_zone: str,
            start: datetime, end: datetime) -> None:
        """Make ``instance_count`` more instances free in ``[start, end)``; adds stack."""
        start, end = self._checked(instance_count, start, end)
        key = (instance_type, availability_zone)
        if key not in self._steps:
            self._steps[key] = _Steps()
            self._zones[instance_type] = sorted({*self._zones.get(instance_type, ()), availability_zone})
        self._steps[key].shift(start, end, instance_count)
        self._changed(instance_type, availability_zone)

    def give_back(self, instance_type: str, availability_zone: str, start: datetime,
                  end: datetime, count: int) -> None:
        """Return the capacity of a plan whose payment failed (the same as :meth:`add`)."""
        self.add(instance_type, count, availability_zone, start, end)

    def remove(self, instance_type: str, availability_zone: str, start: datetime,
               end: datetime, count: int) -> None:
        """Take ``count`` instances out for ``[start, end)`` (capacity sold to a plan).

        Raises ValueError if fewer than ``count`` are free anywhere in the interval.
        """
        start, end = self._checked(count, start, end)
        free = self.free_count(instance_type, availability_zone, start, end)
        if free < count:
            raise ValueError(
                f"only {free} {instance_type} free in {availability_zone} over "
                f"[{start.isoformat()}, {end.isoformat()}), {count} requested")
        self._steps[(instance_type, availability_zone)].shift(start, end, -count)
        self._changed(instance_type, availability_zone)

    def clear(self) -> None:
        """Forget all capacity (and which AZs ever had some)."""
        self._steps.clear()
        self._zones.clear()
        self._memo.clear()
        self._clears += 1
        self.version += 1

    # -- queries -------------------------------------------------------------
    def free_count(self, instance_type: str, availability_zone: str,
                   start: datetime, end: datetime) -> int:
        """The fewest instances free at any moment of ``[start, end)``; 0 if unknown."""
        steps = self._steps.get((instance_type, availability_zone))
        if steps is None:
            return 0
        return steps.minimum(start, end)

    def zones(self, instance_type: str) -> list[str]:
        """The AZs that ever had capacity of ``instance_type`` (since the last clear), sorted."""
        return list(self._zones.get(instance_type, ()))

    def windows(self, instance_type: str, availability_zone: str, count: int,
                earliest: datetime, latest: datetime) -> list[tuple[datetime, datetime]]:
        """Maximal intervals inside ``[earliest, latest]`` with at least ``count`` free, in time order."""
        steps = self._steps.get((instance_type, availability_zone))
        if steps is None or latest <= earliest:
            return []
        times, counts = steps.times, steps.counts
        found: list[tuple[datetime, datetime]] = []
        opened: datetime | None = None
        for k in range(max(bisect_right(times, earliest) - 1, 0), len(times)):
            moment = times[k]
            if moment >= latest:
                break
            if counts[k] >= count:
                if opened is None:
                    opened = max(moment, earliest)
            elif opened is not None:
                found.append((opened, moment))
                opened = None
        if opened is not None:
            found.append((opened, latest))
        return found

    def blocks(self) -> list[CapacityBlock]:
        """The inventory as disjoint pieces of constant free count, by type, AZ and start."""
        pieces = []
        for (instance_type, az), steps in sorted(self._steps.items()):
            times, counts = steps.times, steps.counts
            for k in range(len(times) - 1):
                if counts[k]:
                    pieces.append(CapacityBlock(instance_type, az, times[k], times[k + 1], counts[k]))
        return pieces

    def remembered(self, key: Hashable, scope: str | Key, compute: Callable[[], T]) -> T:
        """``compute()``, remembered under ``key`` until the capacity of ``scope`` next changes.

        ``scope`` is an instance type (or UltraServer type), or one (type, AZ): for
        pure functions of that capacity (a search's candidate blocks, one AZ's free
        runs), a repeat costs a lookup until capacity there is added, sold or
        returned; changes elsewhere keep it.
        """
        stamp = (self._clears, self._changes.get(scope, 0))
        entry = self._memo.get(key)
        if entry is not None and entry[0] == stamp:
            return entry[1]
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        value = compute()
        self._memo[key] = (stamp, value)
        return value

    def next_search_number(self) -> int:
        """A new number for each offering search, so ids from two searches never collide."""
        self._searches += 1
        return self._searches

    def _changed(self, instance_type: str, availability_zone: str) -> None:
        for scope in (instance_type, (instance_type, availability_zone)):
            self._changes[scope] = self._changes.get(scope, 0) + 1
        self.version += 1

    @staticmethod
    def _checked(count: int, start: datetime, end: datetime) -> tuple[datetime, datetime]:
        start, end = _utc(start), _utc(end)
        if count < 1:
            raise ValueError(f"instance count must be at least 1, got {count}")
        if end <= start:
            raise ValueError(f"end {end.isoformat()} must be after start {start.isoformat()}")
        return start, end
