"""A capacity file: the reserved capacity a what-if's plans are bought from instead of the default inventory.

A JSON list (or ``{"capacity": [...]}``) of blocks, each ``{"instance_type", "instance_count",
"availability_zone", "start", "end"}``; ``start``/``end`` are ISO 8601 with a zone, or seconds from the
workload's start. The file replaces the default inventory (docs/what-if.md, "Capacity").
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from sagemaker_plans_local.simulation.times import parse_moment

FIELDS = ("instance_type", "instance_count", "availability_zone", "start", "end")


class CapacityFileError(ValueError):
    """A capacity file that cannot be read, or a block in it that is not one (its number and field named)."""


@attrs.frozen
class CapacityBlock:
    """``instance_count`` instances of ``instance_type`` free in ``availability_zone`` for ``[start, end)``;
    a time is a moment, or seconds from the workload's start."""

    instance_type: str
    instance_count: int
    availability_zone: str
    start: datetime | float
    end: datetime | float

    def span(self, origin: datetime) -> tuple[datetime, datetime]:
        """The block's start and end, seconds counted from ``origin``."""
        return _at(self.start, origin), _at(self.end, origin)


def _at(value: datetime | float, origin: datetime) -> datetime:
    return value if isinstance(value, datetime) else origin + timedelta(seconds=value)


def load_capacity(path: str | Path) -> tuple[CapacityBlock, ...]:
    """The blocks of the capacity file ``path``; CapacityFileError names the file, block and field."""
    try:
        document = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as error:
        raise CapacityFileError(f"cannot read capacity file {str(path)!r}: {error}") from None
    return capacity_blocks(document, str(path))


def capacity_blocks(document: Any, source: str = "capacity") -> tuple[CapacityBlock, ...]:
    """The blocks of a parsed capacity document (a list, or an object with a ``capacity`` list)."""
    if isinstance(document, dict):
        document = document.get("capacity")
    if not isinstance(document, list) or not document:
        raise CapacityFileError(
            f"{source}: a capacity file is a non-empty list of blocks ({', '.join(FIELDS)})"
        )
    return tuple(_block(number, entry, source) for number, entry in enumerate(document, 1))


def _block(number: int, entry: Any, source: str) -> CapacityBlock:
    where = f"{source}: block {number}"
    if not isinstance(entry, dict):
        raise CapacityFileError(f"{where}: not an object of {', '.join(FIELDS)}")
    for key in entry:
        if key not in FIELDS:
            raise CapacityFileError(f"{where}: unknown field {key!r}")
    for key in FIELDS:
        if entry.get(key) in (None, ""):
            raise CapacityFileError(f"{where}, field {key}: missing")
    count = entry["instance_count"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise CapacityFileError(f"{where}, field instance_count: {count!r} is not a whole number >= 1")
    start, end = (_time(entry[key], f"{where}, field {key}") for key in ("start", "end"))
    return CapacityBlock(str(entry["instance_type"]), count, str(entry["availability_zone"]), start, end)


def _time(value: Any, where: str) -> datetime | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    try:
        return parse_moment(str(value))
    except ValueError as error:
        raise CapacityFileError(f"{where}: {error}") from None
