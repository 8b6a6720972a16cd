"""Timestamps exactly as botocore parses them, without its per-value cost."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

from botocore.utils import parse_timestamp
from dateutil.tz import tzlocal

from sagemaker_plans_local.protocol.json_wire import encode_timestamp

_CACHE_LIMIT = 1 << 16
_zone: list = [None, None]  # [time.tzname it was built for, tzlocal]
_parsed: dict[float, datetime] = {}
_by_moment: dict[datetime, datetime] = {}


def _local_zone() -> tzlocal:
    # tzlocal reads the zone when built; time.tzset() rebinds time.tzname, so rebuild then.
    if _zone[0] is not time.tzname:
        _zone[:] = [time.tzname, tzlocal()]
        _parsed.clear()
        _by_moment.clear()
    return _zone[1]


def parse_wire_timestamp(value: Any) -> datetime:
    """Equal to botocore's ``parse_timestamp`` (a datetime in dateutil's ``tzlocal()``), faster.

    botocore builds a ``tzlocal`` per value and converts through dateutil's
    ``fromutc``. The C library's local time (with ``fold`` set for repeated
    hours) tagged with one shared ``tzlocal`` is the same datetime; datetimes
    are immutable, so the same epoch value reuses the one already built.
    """
    if isinstance(value, (int, float)):
        zone = _local_zone()
        parsed = _parsed.get(value)
        if parsed is not None:
            return parsed
        try:
            parsed = datetime.fromtimestamp(value).replace(tzinfo=zone)
        except (OSError, OverflowError, ValueError):
            return parse_timestamp(value)
        if len(_parsed) >= _CACHE_LIMIT:
            _parsed.clear()
        _parsed[value] = parsed
        return parsed
    return parse_timestamp(value)


def parse_datetime(value: Any) -> datetime:
    """``parse_wire_timestamp`` of what ``value`` goes on the wire as (``json_wire.encode_timestamp``).

    Equal UTC datetimes are the same instant (the clock's are UTC), so the one built answers
    every UTC datetime equal to it.
    """
    if type(value) is not datetime or value.tzinfo is not timezone.utc:  # others: no cache
        return parse_wire_timestamp(encode_timestamp(value))
    if _zone[0] is not time.tzname:
        _local_zone()
    parsed = _by_moment.get(value)
    if parsed is None:
        parsed = parse_wire_timestamp(encode_timestamp(value))
        if len(_by_moment) >= _CACHE_LIMIT:
            _by_moment.clear()
        _by_moment[value] = parsed
    return parsed
