"""Free accelerated capacity: how many instances can still be reserved, when and where.

Per (instance type, Availability Zone) the inventory is a step function of time,
kept as its breakpoints (the change of free count at each moment) in a treap
whose nodes also know their subtree's total change and lowest running count:
adding or removing a block is two O(log n) updates, a free count is an
O(log n) walk, and windows and blocks walk only the breakpoints they return.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterator
from datetime import datetime, timezone
from itertools import pairwise
from typing import TypeVar

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


_NONE = float("inf")  # the lowest count of no breakpoints at all
_priorities = random.Random(8)  # treap priorities; seeded so that a run's shapes repeat


class _Node:
    """A breakpoint: the free count changes by ``delta`` at ``moment``.

    ``total`` is the sum of the subtree's deltas, ``low`` the lowest running sum
    just after one of its breakpoints (counted from the subtree's first).
    """

    __slots__ = ("delta", "left", "low", "moment", "priority", "right", "total")

    def __init__(self, moment: datetime, delta: int) -> None:
        self.moment, self.delta = moment, delta
        self.priority = _priorities.random()
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.total, self.low = delta, delta

    def update(self) -> None:
        left, right = self.left, self.right
        before = left.total if left is not None else 0
        here = before + self.delta
        low = here if left is None or left.low > here else left.low
        if right is not None:
            self.total = here + right.total
            low = min(low, here + right.low)
        else:
            self.total = here
        self.low = low


def _rotated_right(node: _Node) -> _Node:
    top = node.left
    assert top is not None
    node.left, top.right = top.right, node
    node.update()
    top.update()
    return top


def _rotated_left(node: _Node) -> _Node:
    top = node.right
    assert top is not None
    node.right, top.left = top.left, node
    node.update()
    top.update()
    return top


def _merged(left: _Node | None, right: _Node | None) -> _Node | None:
    """The treap of ``left`` then ``right`` (every moment of ``left`` earlier)."""
    if left is None:
        return right
    if right is None:
        return left
    if left.priority > right.priority:
        left.right = _merged(left.right, right)
        left.update()
        return left
    right.left = _merged(left, right.left)
    right.update()
    return right


def _shifted(node: _Node | None, moment: datetime, change: int) -> _Node | None:
    """The treap with ``change`` added at ``moment`` (a breakpoint that comes to 0 goes)."""
    if node is None:
        return _Node(moment, change)
    if moment == node.moment:
        node.delta += change
        if not node.delta:
            return _merged(node.left, node.right)
    elif moment < node.moment:
        node.left = child = _shifted(node.left, moment, change)
        if child is not None and child.priority > node.priority:
            return _rotated_right(node)
    else:
        node.right = child = _shifted(node.right, moment, change)
        if child is not None and child.priority > node.priority:
            return _rotated_left(node)
    node.update()
    return node


class _Steps:
    """One (type, AZ): the free count is the sum of the deltas at or before a moment.

    Every delta is non-zero, so the count changes at each breakpoint; before the
    first nothing is free and after the last the count is back to 0.
    """

    __slots__ = ("root",)

    def __init__(self) -> None:
        self.root: _Node | None = None

    def shift(self, start: datetime, end: datetime, count: int) -> None:
        self.root = _shifted(_shifted(self.root, start, count), end, -count)

    def level(self, moment: datetime) -> int:
        """The count free at ``moment``: the sum of the deltas at or before it."""
        level, node = 0, self.root
        while node is not None:
            if node.moment <= moment:
                level += (node.left.total if node.left is not None else 0) + node.delta
                node = node.right
            else:
                node = node.left
        return level

    def minimum(self, start: datetime, end: datetime) -> int:
        """The lowest count over ``[start, end)``."""
        lowest = self.level(start)
        if lowest <= 0:
            return 0
        node, before = self.root, 0
        while node is not None and not start < node.moment < end:
            if node.moment <= start:
                before += (node.left.total if node.left is not None else 0) + node.delta
                node = node.right
            else:
                node = node.left
        if node is None:
            return lowest
        here = before + (node.left.total if node.left is not None else 0) + node.delta
        inner = min(_low_after(node.left, start, before), here, _low_before(node.right, end, here))
        return int(min(lowest, inner))

    def breakpoints(self, moment: datetime | None) -> Iterator[tuple[datetime, int]]:
        """``(moment, count from then on)`` in time order, from the last breakpoint at or
        before ``moment`` (from the first if there is none, or ``moment`` is None)."""
        first = None if moment is None else self._at_or_before(moment)
        level, stack, node = 0, [], self.root
        while node is not None:
            if first is None or node.moment >= first:
                stack.append(node)
                node = node.left
            else:
                level += (node.left.total if node.left is not None else 0) + node.delta
                node = node.right
        while stack:
            node = stack.pop()
            level += node.delta
            yield node.moment, level
            node = node.right
            while node is not None:
                stack.append(node)
                node = node.left

    def _at_or_before(self, moment: datetime) -> datetime | None:
        found, node = None, self.root
        while node is not None:
            if node.moment <= moment:
                found, node = node.moment, node.right
            else:
                node = node.left
        return found


def _low_after(node: _Node | None, start: datetime, before: int) -> float:
    """The lowest count just after a breakpoint later than ``start`` in ``node``'s subtree,
    ``before`` being the sum of the deltas ahead of the subtree."""
    lowest = _NONE
    while node is not None:
        left_total = node.left.total if node.left is not None else 0
        if node.moment > start:
            here = before + left_total + node.delta
            lowest = min(lowest, here, here + node.right.low if node.right is not None else _NONE)
            node = node.left
        else:
            before += left_total + node.delta
            node = node.right
    return lowest


def _low_before(node: _Node | None, end: datetime, before: int) -> float:
    """The lowest count just after a breakpoint earlier than ``end`` in ``node``'s subtree."""
    lowest = _NONE
    while node is not None:
        if node.moment < end:
            left = node.left
            if left is not None:
                lowest = min(lowest, before + left.low)
                before += left.total
            before += node.delta
            lowest = min(lowest, before)
            node = node.right
        else:
            node = node.left
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
    def add(
        self, instance_type: str, instance_count: int, availability_zone: str, start: datetime, end: datetime
    ) -> None:
        """Make ``instance_count`` more instances free in ``[start, end)``; adds stack."""
        start, end = self._checked(instance_count, start, end)
        key = (instance_type, availability_zone)
        if key not in self._steps:
            self._steps[key] = _Steps()
            self._zones[instance_type] = sorted({*self._zones.get(instance_type, ()), availability_zone})
        self._steps[key].shift(start, end, instance_count)
        self._changed(instance_type, availability_zone)

    def give_back(
        self, instance_type: str, availability_zone: str, start: datetime, end: datetime, count: int
    ) -> None:
        """Return the capacity of a plan whose payment failed (the same as :meth:`add`)."""
        self.add(instance_type, count, availability_zone, start, end)

    def remove(
        self, instance_type: str, availability_zone: str, start: datetime, end: datetime, count: int
    ) -> None:
        """Take ``count`` instances out for ``[start, end)`` (capacity sold to a plan).

        Raises ValueError if fewer than ``count`` are free anywhere in the interval.
        """
        start, end = self._checked(count, start, end)
        free = self.free_count(instance_type, availability_zone, start, end)
        if free < count:
            raise ValueError(
                f"only {free} {instance_type} free in {availability_zone} over "
                f"[{start.isoformat()}, {end.isoformat()}), {count} requested"
            )
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
    def free_count(self, instance_type: str, availability_zone: str, start: datetime, end: datetime) -> int:
        """The fewest instances free at any moment of ``[start, end)``; 0 if unknown."""
        steps = self._steps.get((instance_type, availability_zone))
        if steps is None:
            return 0
        return steps.minimum(start, end)

    def zones(self, instance_type: str) -> list[str]:
        """The AZs that ever had capacity of ``instance_type`` (since the last clear), sorted."""
        return list(self._zones.get(instance_type, ()))

    def windows(
        self, instance_type: str, availability_zone: str, count: int, earliest: datetime, latest: datetime
    ) -> list[tuple[datetime, datetime]]:
        """Maximal intervals inside ``[earliest, latest]`` with at least ``count`` free, in time order."""
        steps = self._steps.get((instance_type, availability_zone))
        if steps is None or latest <= earliest:
            return []
        found: list[tuple[datetime, datetime]] = []
        opened: datetime | None = None
        for moment, level in steps.breakpoints(earliest):
            if moment >= latest:
                break
            if level >= count:
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
            for (start, count), (end, _) in pairwise(steps.breakpoints(None)):
                if count:
                    pieces.append(CapacityBlock(instance_type, az, start, end, count))
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

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` of a pure function of ``key`` (whatever the capacity), remembered."""
        entry = self._memo.get(key)
        if entry is not None:
            return entry[1]
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        value = compute()
        self._memo[key] = (None, value)
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
