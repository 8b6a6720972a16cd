"""Where offering blocks may lie and which ones a search picks (see ``offerings`` for the rules).

Everything here works in grid indices: 0 is the origin, ``i >= 1`` the i-th
11:30 UTC after it. A block ``(az, j, k)`` runs from grid point ``j`` to grid
point ``k`` (``k - j`` grid days).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from datetime import datetime, time, timedelta, timezone

import attrs

CAPACITY_END = time(11, 30)  # UTC: every block ends at 11:30 UTC
DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)
MAX_OFFERINGS = 3

#: A block on the grid: (AZ, start index, end index).
Slot = tuple[str, int, int]
#: How an offering may total: (grid days, first start index, last start index).
Total = tuple[int, int, int]


def ceil_minute(moment: datetime) -> datetime:
    """``moment`` in UTC, rounded up to the whole minute."""
    moment = moment.astimezone(timezone.utc)
    floor = moment.replace(second=0, microsecond=0)
    return floor if floor == moment else floor + MINUTE


@attrs.frozen
class DayGrid:
    """Where blocks may start and end: ``origin``, then every 11:30 UTC after it."""

    origin: datetime
    first: datetime  # the first 11:30 UTC strictly after origin

    @classmethod
    def from_origin(cls, origin: datetime) -> "DayGrid":
        origin = origin.astimezone(timezone.utc)
        first = datetime.combine(origin.date(), CAPACITY_END, timezone.utc)
        return cls(origin, first if first > origin else first + DAY)

    @property
    def partial(self) -> bool:
        """Whether a block from the origin runs a partial first day (the origin is not 11:30)."""
        return self.first - self.origin < DAY

    def at(self, index: int) -> datetime:
        """Grid point ``index`` (0 is the origin)."""
        return self.origin if index == 0 else self.first + (index - 1) * DAY

    def index_at_or_after(self, moment: datetime) -> int:
        """The first grid point at or after ``moment``."""
        if moment <= self.origin:
            return 0
        return 1 - (self.first - moment).days  # a timedelta's days are its floor division by DAY

    def index_at_or_before(self, moment: datetime) -> int:
        """The last grid point at or before ``moment``; -1 before the origin."""
        if moment < self.first:
            return 0 if moment >= self.origin else -1
        return 1 + (moment - self.first).days

    def totals(self, hours: int, last_start: int) -> list[Total]:
        """The grid days an offering may total, by where its first block starts.

        From 11:30 UTC: ``ceil(hours / 24)`` days. From a partial origin: the
        fewest grid days reaching ``hours``, or the partial day plus
        ``ceil(hours / 24)`` whole days.
        """
        days = math.ceil(hours / 24)
        if not self.partial:
            return [(days, 0, last_start)]
        short = (hours * 3600 - (self.first - self.origin).total_seconds()) / 86400
        fewest = 1 + max(0, math.ceil(short))
        return [(days, 1, last_start)] + [(n, 0, 0) for n in sorted({fewest, days + 1})]


class _Zones:
    """The runs of each AZ (disjoint, in time order), found by bisect on their starts and ends."""

    def __init__(self, runs: dict[str, list[tuple[int, int]]], last_start: int) -> None:
        self.runs = runs
        self.last_start = last_start
        self.names = sorted(runs)
        self.longest = {az: max((c - a for a, c in spans), default=0) for az, spans in runs.items()}
        self._firsts = {az: [a for a, _ in spans] for az, spans in runs.items()}
        self._stops = {az: [c for _, c in spans] for az, spans in runs.items()}

    def fits(self, az: str, j: int, k: int) -> bool:
        """Whether a block from grid point ``j`` (at most ``last_start``) to ``k`` lies in one run."""
        if j > self.last_start:
            return False
        i = bisect_right(self._firsts[az], j) - 1
        return i >= 0 and j < self._stops[az][i] and k <= self._stops[az][i]

    def starts(self, az: str, days: int, low: int, high: int) -> list[int]:
        """The first three starts in ``[low, high]`` of a block of ``days`` days in ``az``."""
        found: list[int] = []
        if self.longest[az] < days:
            return found
        runs = self.runs[az]
        high = min(high, self.last_start)
        for i in range(bisect_left(self._stops[az], low + days), len(runs)):
            a, c = runs[i]
            if a > high:
                break
            first = max(a, low)
            found.extend(range(first, min(c - days, high, first + MAX_OFFERINGS - len(found) - 1) + 1))
            if len(found) == MAX_OFFERINGS:
                break
        return found


def best_picks(
    runs: dict[str, list[tuple[int, int]]],
    totals: list[Total],
    last_start: int,
    last_end: int,
    one_zone: bool,
) -> list[tuple[Slot, ...]]:
    """The three best offerings as slots (ranking in the ``offerings`` docstring).

    Ends are tried in increasing order; all offerings ending at one index are
    collected before the next, so the search stops after the first ends that
    give three distinct layouts. Two-block offerings are only looked for while
    they can still make the three.
    """
    zones = _Zones(runs, last_start)
    if not zones.names:
        return []
    longest = max(zones.longest.values())
    picks = _Picks()
    by_first_start = sorted(totals, key=lambda total: total[1])
    for end in range(1, last_end + 1):
        for days, low, high in totals:
            _singles(zones, end, days, low, high, picks)
        if picks.full():
            break  # one-block offerings rank before two-block ones with the same end
        picks.start_pairs()
        for days, low, high in by_first_start:
            _pairs(zones, end, days, low, high, longest, one_zone, picks)
        if picks.full():
            break
    return picks.ranked()


class _Picks:
    """The best offering per layout (its blocks' grid times) found so far."""

    def __init__(self) -> None:
        self.best: dict[tuple, tuple[tuple, tuple[Slot, ...]]] = {}
        self.pairs: list[tuple[int, int]] = []  # (j1, j2) of the pair layouts found at this end
        self.needed = MAX_OFFERINGS

    def full(self) -> bool:
        return len(self.best) >= MAX_OFFERINGS

    def start_pairs(self) -> None:
        self.pairs, self.needed = [], MAX_OFFERINGS - len(self.best)

    def bound(self) -> tuple[int, int] | None:
        """Pairs ranking after this (first start, second start) cannot make the three any more."""
        return self.pairs[self.needed - 1] if len(self.pairs) >= self.needed else None

    def offer(self, key: tuple, slots: tuple[Slot, ...]) -> None:
        layout = tuple((j, k) for _, j, k in slots)
        if layout not in self.best:
            if len(slots) == 2:
                self.pairs.append((slots[0][1], slots[1][1]))
                self.pairs.sort()
            self.best[layout] = (key, slots)
        elif key < self.best[layout][0]:
            self.best[layout] = (key, slots)

    def ranked(self) -> list[tuple[Slot, ...]]:
        return [slots for _, slots in sorted(self.best.values())[:MAX_OFFERINGS]]


def _singles(zones: _Zones, end: int, days: int, low: int, high: int, picks: _Picks) -> None:
    j = end - days
    if low <= j <= high:
        for az in zones.names:
            if zones.fits(az, j, end):
                picks.offer((end, 1, j, 0, 0, False, az, ""), ((az, j, end),))


def _pairs(
    zones: _Zones, end: int, days: int, low: int, high: int, longest: int, one_zone: bool, picks: _Picks
) -> None:
    """Two blocks totalling ``days``, the second ending at ``end``, second starts in increasing order.

    For each first block only its best second AZ is offered (one AZ before
    two, then AZ names): the layout is the same whatever the AZs.
    """
    for second in range(min(days - 1, longest), max(1, days - longest) - 1, -1):
        j2, first = end - second, days - second
        bound = picks.bound()
        if bound is not None and (low, j2) > bound:
            return  # later second starts rank lower still
        if j2 - first < low or j2 > zones.last_start:
            continue
        top = min(high, j2 - first) if bound is None else min(high, j2 - first, bound[0])
        homes = [az for az in zones.names if zones.fits(az, j2, end)]
        for az1 in homes if one_zone else zones.names:
            for j1 in zones.starts(az1, first, low, top):
                k1 = j1 + first
                az2 = _second_zone(az1, homes, k1 < j2, one_zone)
                if az2 is not None:
                    picks.offer((end, 2, j1, j2, k1, az1 != az2, az1, az2), ((az1, j1, k1), (az2, j2, end)))


def _second_zone(az1: str, homes: list[str], gap: bool, one_zone: bool) -> str | None:
    """The best AZ for a second block after one in ``az1``; in one AZ the blocks need a gap."""
    if gap and az1 in homes:
        return az1
    if one_zone:
        return None
    return next((az for az in homes if az != az1), None)
