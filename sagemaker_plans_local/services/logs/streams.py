"""CloudWatch Logs groups, streams and events, in memory (no boto3 here).

Times are epoch milliseconds, as CloudWatch gives them (``append`` also takes
an aware ``datetime``). Events of a stream are kept in timestamp order (ties
in arrival order). Every public method is thread-safe: a running process's
output may be appended from another thread while a reader polls.

Reading (``events``) follows GetLogEvents:

* without a token, ``start_from_head=True`` reads forward from the first
  event, ``False`` returns the last ``limit`` events;
* ``f/...`` tokens read forward from just after the last event returned,
  ``b/...`` tokens backward from just before the first one;
* a forward read that finds no new event returns the very token it was given,
  which is how ``sagemaker.logs`` knows it has caught up; events appended
  later are returned by the next call with that token.

Events are returned in ascending order, at most ``limit`` (10000) and at most
1 MB (message bytes + 26 per event) per call. ``start_time`` is inclusive and
``end_time`` exclusive.
"""

from __future__ import annotations

import bisect
import re
import threading
from datetime import datetime, timedelta, timezone

import attrs

from sagemaker_plans_local.core.clock import Clock
from sagemaker_plans_local.core.errors import DomainError

MAX_EVENTS = 10_000
MAX_BYTES = 1_048_576
EVENT_OVERHEAD = 26
MAX_BATCH_SPAN_MS = 24 * 3600 * 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DIGITS = 20
_MIN = (-1, -1)
_MAX = (10**_DIGITS - 2, 10**_DIGITS - 2)
_TOKEN = re.compile(rf"([fb])/(\d{{{_DIGITS}}})(\d{{{_DIGITS}}})")


# -- errors -----------------------------------------------------------------------------


class LogsError(DomainError):
    """Base of the log store's errors."""


class LogGroupNotFound(LogsError):
    def __init__(self, group: str) -> None:
        super().__init__("The specified log group does not exist.")
        self.group = group


class LogStreamNotFound(LogsError):
    def __init__(self, group: str, stream: str) -> None:
        super().__init__("The specified log stream does not exist.")
        self.group = group
        self.stream = stream


class LogGroupAlreadyExists(LogsError):
    def __init__(self, group: str) -> None:
        super().__init__("The specified log group already exists")
        self.group = group


class LogStreamAlreadyExists(LogsError):
    def __init__(self, group: str, stream: str) -> None:
        super().__init__("The specified log stream already exists")
        self.group = group
        self.stream = stream


class InvalidLogRequest(LogsError):
    """A bad token, a batch out of order, ... (CloudWatch: InvalidParameterException)."""


# -- values -------------------------------------------------------------------------------


@attrs.frozen
class LogEvent:
    timestamp: int
    message: str
    ingestion_time: int


@attrs.frozen
class LogStreamInfo:
    name: str
    creation_time: int
    first_event_timestamp: int | None
    last_event_timestamp: int | None
    last_ingestion_time: int | None
    stored_bytes: int


def to_millis(moment: datetime | int | float) -> int:
    """Epoch milliseconds of an aware (or UTC naive) datetime; numbers are taken as milliseconds."""
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return (moment - _EPOCH) // timedelta(milliseconds=1)
    return int(moment)


def _token(direction: str, position: tuple[int, int]) -> str:
    return f"{direction}/{position[0] + 1:0{_DIGITS}d}{position[1] + 1:0{_DIGITS}d}"


def _parse_token(token: str) -> tuple[str, tuple[int, int]]:
    match = _TOKEN.fullmatch(token) if isinstance(token, str) else None
    if match is None:
        raise InvalidLogRequest("The specified nextToken is invalid.")
    return match[1], (int(match[2]) - 1, int(match[3]) - 1)


class _Stream:
    __slots__ = ("name", "created", "keys", "events", "stored_bytes", "last_ingestion", "sequence")

    def __init__(self, name: str, created: int) -> None:
        self.name = name
        self.created = created
        self.keys: list[tuple[int, int]] = []
        self.events: list[LogEvent] = []
        self.stored_bytes = 0
        self.last_ingestion: int | None = None
        self.sequence = 0

    def add(self, timestamp: int, message: str, ingested: int) -> None:
        key = (timestamp, self.sequence)
        self.sequence += 1
        at = bisect.bisect_right(self.keys, key)
        self.keys.insert(at, key)
        self.events.insert(at, LogEvent(timestamp, message, ingested))
        self.stored_bytes += len(message.encode("utf-8"))
        self.last_ingestion = ingested

    def info(self) -> LogStreamInfo:
        first = self.keys[0][0] if self.keys else None
        last = self.keys[-1][0] if self.keys else None
        return LogStreamInfo(self.name, self.created, first, last, self.last_ingestion, self.stored_bytes)


class _Group:
    __slots__ = ("name", "created", "streams")

    def __init__(self, name: str, created: int) -> None:
        self.name = name
        self.created = created
        self.streams: dict[str, _Stream] = {}


class LogStore:
    """Log groups of one account and region, with their streams and events."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._groups: dict[str, _Group] = {}

    # -- groups and streams ---------------------------------------------------------
    def create_log_group(self, group: str) -> None:
        with self._lock:
            if group in self._groups:
                raise LogGroupAlreadyExists(group)
            self._groups[group] = _Group(group, self._now())

    def log_group_exists(self, group: str) -> bool:
        with self._lock:
            return group in self._groups

    def log_groups(self, prefix: str = "") -> list[tuple[str, int]]:
        """Every group whose name starts with ``prefix``, as (name, creation time), by name."""
        with self._lock:
            return sorted((g.name, g.created) for g in self._groups.values() if g.name.startswith(prefix))

    def create_log_stream(self, group: str, stream: str) -> None:
        with self._lock:
            streams = self._group(group).streams
            if stream in streams:
                raise LogStreamAlreadyExists(group, stream)
            streams[stream] = _Stream(stream, self._now())

    def streams(
        self, group: str, prefix: str = "", order_by: str = "LogStreamName", descending: bool = False
    ) -> list[LogStreamInfo]:
        """The group's streams whose names start with ``prefix``.

        ``order_by`` is ``LogStreamName`` or ``LastEventTime`` (streams without
        events first, then by name).
        """
        with self._lock:
            infos = [s.info() for s in self._group(group).streams.values() if s.name.startswith(prefix)]
        if order_by == "LastEventTime":
            infos.sort(
                key=lambda i: (i.last_event_timestamp is not None, i.last_event_timestamp or 0, i.name),
                reverse=descending,
            )
        else:
            infos.sort(key=lambda i: i.name, reverse=descending)
        return infos

    # -- writing ----------------------------------------------------------------------
    def append(self, group: str, stream: str, timestamp: datetime | int, message: str) -> None:
        """Add one event, creating the group and the stream if needed."""
        millis = to_millis(timestamp)
        with self._lock:
            now = self._now()
            found = self._groups.get(group)
            if found is None:
                found = self._groups[group] = _Group(group, now)
            target = found.streams.get(stream)
            if target is None:
                target = found.streams[stream] = _Stream(stream, now)
            target.add(millis, message, now)

    def put_log_events(self, group: str, stream: str, events: list[tuple[int, str]]) -> None:
        """PutLogEvents: add a batch to an existing stream, in chronological order, spanning at most 24 h."""
        stamps = [to_millis(timestamp) for timestamp, _ in events]
        if any(b < a for a, b in zip(stamps, stamps[1:])):
            raise InvalidLogRequest(
                "Log events in a single PutLogEvents request must be in chronological order."
            )
        if stamps and stamps[-1] - stamps[0] > MAX_BATCH_SPAN_MS:
            raise InvalidLogRequest(
                "The batch of log events in a single PutLogEvents request cannot span more than 24 hours."
            )
        with self._lock:
            target = self._stream(group, stream)
            now = self._now()
            for millis, (_, message) in zip(stamps, events):
                target.add(millis, message, now)

    # -- reading ----------------------------------------------------------------------
    def events(
        self,
        group: str,
        stream: str,
        start_time: datetime | int | None = None,
        end_time: datetime | int | None = None,
        start_from_head: bool = False,
        limit: int | None = MAX_EVENTS,
        next_token: str | None = None,
    ) -> tuple[list[LogEvent], str, str]:
        """GetLogEvents: (events, next forward token, next backward token); see the module docstring."""
        limit = MAX_EVENTS if limit is None else max(0, min(int(limit), MAX_EVENTS))
        if next_token:
            direction, position = _parse_token(next_token)
        else:
            direction, position = ("f", _MIN) if start_from_head else ("b", _MAX)
        with self._lock:
            target = self._stream(group, stream)
            keys, events = target.keys, target.events
            low = 0 if start_time is None else bisect.bisect_left(keys, (to_millis(start_time), _MIN[1]))
            high = len(keys) if end_time is None else bisect.bisect_left(keys, (to_millis(end_time), _MIN[1]))
            if direction == "f":
                first = max(bisect.bisect_right(keys, position), low)
                last = first
                budget = MAX_BYTES
                while last < high and last - first < limit:
                    cost = len(events[last].message.encode("utf-8")) + EVENT_OVERHEAD
                    if cost > budget and last > first:
                        break
                    budget -= cost
                    last += 1
                if last == first:
                    forward = _token("f", position)
                else:
                    forward = _token("f", keys[last - 1])
            else:
                last = min(bisect.bisect_left(keys, position), high)
                first = last
                budget = MAX_BYTES
                while first > low and last - first < limit:
                    cost = len(events[first - 1].message.encode("utf-8")) + EVENT_OVERHEAD
                    if cost > budget and first < last:
                        break
                    budget -= cost
                    first -= 1
                forward = _token("f", keys[last - 1] if last > 0 else _MIN)
            backward = _token("b", keys[first] if first < len(keys) else _MAX)
            return events[first:last], forward, backward

    # -- internals --------------------------------------------------------------------
    def _now(self) -> int:
        return to_millis(self._clock.now())

    def _group(self, group: str) -> _Group:
        found = self._groups.get(group)
        if found is None:
            raise LogGroupNotFound(group)
        return found

    def _stream(self, group: str, stream: str) -> _Stream:
        found = self._group(group).streams.get(stream)
        if found is None:
            raise LogStreamNotFound(group, stream)
        return found
