"""The backend's virtual clock and its time-ordered queue of state changes."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterator, Protocol

Action = Callable[[datetime], None]


class Clock(Protocol):
    """What a part that only reads the time needs of the backend's clock."""

    def now(self) -> datetime: ...


class Event:
    """A state change due at ``at``; cancel it to drop it from the queue."""

    __slots__ = ("at", "action", "cancelled", "_clock")

    def __init__(self, at: datetime, action: Action, clock: "VirtualClock | None" = None) -> None:
        self.at = at
        self.action = action
        self.cancelled = False
        self._clock = clock  # set while the event is queued

    def cancel(self) -> None:
        clock = self._clock
        if clock is None:  # fired, or never queued
            self.cancelled = True
        else:
            clock._cancel(self)


def _wall_now() -> datetime:
    return datetime.fromtimestamp(time.time(), timezone.utc)


class VirtualClock:
    """Time for the whole backend.

    Manual mode (``start`` given) stands still until :meth:`advance` moves it.
    Wall mode (``start=None``) follows the wall clock, shifted by every advance.
    Due events are applied in time order, each seeing ``now()`` equal to its
    own due time in manual mode; actions receive that time as their argument.

    A durable backend sets two hooks: ``advancer`` (an advance goes through it,
    to be journaled; it calls :meth:`move`) and ``syncer`` (called before due
    changes are applied, to replay what other processes wrote). While
    :meth:`pinned` (replaying a journal) ``now()`` is the pinned moment.
    """

    def __init__(self, start: datetime | None = None, lock: threading.RLock | None = None) -> None:
        if start is not None and (start.tzinfo is None or start.utcoffset() is None):
            raise ValueError("start_time must be an aware datetime")
        self._manual = start is not None
        self._now = start.astimezone(timezone.utc) if start is not None else None
        self._offset = timedelta(0)
        self._queue: list[tuple[datetime, int, Event]] = []
        self._cancelled = 0  # cancelled events still in the queue
        self._sequence = itertools.count()
        self._lock = lock or threading.RLock()
        self._waiters: list[Callable[[datetime], None]] = []
        self._pinned: datetime | None = None
        self._reached: datetime | None = None  # the latest moment changes were applied up to
        self.advancer: Callable[[timedelta], datetime] | None = None
        self.syncer: Callable[[], None] | None = None

    def __getstate__(self) -> dict:
        """What a snapshot keeps: time and the queue, not the hooks (a durable backend sets its own)."""
        state = self.__dict__.copy()
        following = next(self._sequence)
        self._sequence = itertools.count(following)  # peeked, not taken
        state.update(_sequence=following, advancer=None, syncer=None, _pinned=None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _sequence=itertools.count(state["_sequence"]))

    @property
    def manual(self) -> bool:
        return self._manual

    @property
    def offset(self) -> timedelta:
        """How far a wall clock has been advanced ahead of real time."""
        return self._offset

    def now(self) -> datetime:
        """The current virtual time, an aware UTC datetime."""
        if self._pinned is not None:
            return self._pinned
        if self._manual:
            assert self._now is not None  # manual: a start time was given
            return self._now
        return _wall_now() + self._offset

    def schedule(self, at: datetime, action: Action) -> Event:
        """Queue ``action`` to run when the clock reaches ``at``."""
        event = Event(at, action, self)
        with self._lock:
            heapq.heappush(self._queue, (at, next(self._sequence), event))
        return event

    def queued(self) -> int:
        """Entries the queue holds: the live events and at most as many cancelled ones."""
        return len(self._queue)

    def advance(self, delta: float | int | timedelta) -> datetime:
        """Move time forward and apply every state change that falls due."""
        if not isinstance(delta, timedelta):
            delta = timedelta(seconds=delta)
        if delta < timedelta(0):
            raise ValueError("the clock only moves forward")
        if self.advancer is not None:
            return self.advancer(delta)
        return self.move(delta)

    def move(self, delta: timedelta) -> datetime:
        """:meth:`advance` without the ``advancer`` hook (what a journal replays)."""
        with self._lock:
            if self._manual:
                assert self._now is not None  # manual: a start time was given
                target = self._now + delta
                self._run_until(target)
                self._now = target
            else:
                self._offset += delta
                if self._pinned is not None:
                    self._pinned += delta
                self._run_until(self.now())
            return self.now()

    @contextlib.contextmanager
    def pinned(self, moment: datetime) -> Iterator[None]:
        """Replay at ``moment``: a manual clock moves there (never back); a wall clock reads it.

        Due changes up to the moment are applied; afterwards a wall clock follows real time again.
        """
        with self._lock:
            if self._manual:
                if moment > self.now():
                    self.move(moment - self.now())
                yield
                return
            previous = self._pinned
            self._pinned = max(m for m in (moment, previous, self._reached) if m is not None)
            try:
                self._run_until(self._pinned)
                yield
            finally:
                self._pinned = previous

    def catch_up(self) -> None:
        """Apply the state changes due by now (the wall clock moves by itself)."""
        if self.syncer is not None:
            self.syncer()
        if self._queue and self._queue[0][0] <= self.now():
            with self._lock:
                self._run_until(self.now())

    def next_due(self) -> datetime | None:
        """When the next live state change is due, if any."""
        with self._lock:
            queue = self._queue
            while queue and queue[0][2].cancelled:
                heapq.heappop(queue)
                self._cancelled -= 1
            return queue[0][0] if queue else None

    def add_waiter(self, waiter: Callable[[datetime], None]) -> None:
        """On a manual clock, call ``waiter(moment)`` before time reaches ``moment``.

        Real work running alongside virtual time (a local training process)
        uses it to finish, or to run as long as the clock is about to move,
        before the clock passes that point.
        """
        self._waiters.append(waiter)

    def settle(self, moment: datetime) -> None:
        """On a manual clock, let real work run as long as reaching ``moment`` would, without moving."""
        with self._lock:
            for waiter in list(self._waiters):
                waiter(moment)

    def _run_until(self, target: datetime) -> None:
        """Apply the changes due up to ``target`` in time order (the caller holds the lock)."""
        queue = self._queue
        if self._reached is None or target > self._reached:
            self._reached = target
        waiters = self._waiters if self._manual else ()
        pop = heapq.heappop
        while True:
            while queue and queue[0][2].cancelled:  # what next_due() does, without taking the lock again
                pop(queue)
                self._cancelled -= 1
            if waiters:
                stop = queue[0][0] if queue and queue[0][0] <= target else target
                for waiter in waiters:
                    waiter(stop)
            if not queue or queue[0][0] > target:
                return
            at, _, event = pop(queue)
            if event.cancelled:
                self._cancelled -= 1
                continue
            event._clock = None  # fired: a later cancel() changes nothing here
            if self._now is not None and at > self._now:  # a manual clock (only it has _now)
                self._now = at
            event.action(at)

    def _cancel(self, event: Event) -> None:
        """Mark a queued event cancelled; compact once cancelled entries are over half the queue."""
        with self._lock:
            queued = not event.cancelled and event._clock is self  # not fired meanwhile
            event.cancelled = True
            event._clock = None
            if not queued:
                return
            self._cancelled += 1
            queue = self._queue
            if self._cancelled * 2 > len(queue):
                queue[:] = [entry for entry in queue if not entry[2].cancelled]  # in place: loops hold it
                heapq.heapify(queue)
                self._cancelled = 0
