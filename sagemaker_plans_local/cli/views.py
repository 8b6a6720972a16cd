"""The inspection commands' records (what ``--json`` prints) and the tables drawn from the same records.

Records have stable keys; times are ISO 8601 in UTC, money is the API's decimal string, counts
and seconds are integers, and a value the API does not give is ``null``.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Sequence

from rich.console import Console
from rich.filesize import decimal
from rich.table import Table

#: A chain of warm pools ends at most this long after its first job's end (docs/warm-pools.md).
CHAIN_LIMIT = timedelta(days=28)

Record = dict[str, Any]
Column = tuple[str, str, Callable[[Any], str]]


def iso(moment: datetime | None) -> str | None:
    """``moment`` in UTC as ISO 8601 (botocore parses epoch times into the local zone)."""
    return None if moment is None else moment.astimezone(timezone.utc).isoformat()


def job_record(job: dict[str, Any]) -> Record:
    """One DescribeTrainingJob answer as a ``jobs`` record."""
    resources = job.get("ResourceConfig", {})
    return {
        "name": job["TrainingJobName"],
        "arn": job["TrainingJobArn"],
        "status": job["TrainingJobStatus"],
        "secondary_status": job.get("SecondaryStatus"),
        "instance_type": resources.get("InstanceType"),
        "instance_count": resources.get("InstanceCount"),
        "training_plan_arn": resources.get("TrainingPlanArn"),
        "creation_time": iso(job.get("CreationTime")),
        "training_start_time": iso(job.get("TrainingStartTime")),
        "training_end_time": iso(job.get("TrainingEndTime")),
        "billable_seconds": job.get("BillableTimeInSeconds"),
        "failure_reason": job.get("FailureReason"),
    }


def _block(block: dict[str, Any], count_key: str) -> Record:
    return {
        "instance_type": block.get("InstanceType"),
        "instance_count": block.get(count_key),
        "availability_zone": block.get("AvailabilityZone"),
        "start_time": iso(block.get("StartTime")),
        "end_time": iso(block.get("EndTime")),
        "duration_hours": block.get("DurationHours"),
        "duration_minutes": block.get("DurationMinutes"),
    }


def plan_record(plan: dict[str, Any]) -> Record:
    """One DescribeTrainingPlan answer as a ``plans`` record, its blocks (ReservedCapacitySummaries) in it."""
    blocks = [
        {
            "arn": block["ReservedCapacityArn"],
            "status": block.get("Status"),
            **_block(block, "TotalInstanceCount"),
        }
        for block in plan.get("ReservedCapacitySummaries", [])
    ]
    return {
        "name": plan["TrainingPlanName"],
        "arn": plan["TrainingPlanArn"],
        "status": plan["Status"],
        "start_time": iso(plan.get("StartTime")),
        "end_time": iso(plan.get("EndTime")),
        "duration_hours": plan.get("DurationHours"),
        "duration_minutes": plan.get("DurationMinutes"),
        "upfront_fee": plan.get("UpfrontFee"),
        "currency": plan.get("CurrencyCode"),
        "total_instance_count": plan.get("TotalInstanceCount"),
        "available_instance_count": plan.get("AvailableInstanceCount"),
        "in_use_instance_count": plan.get("InUseInstanceCount"),
        "target_resources": list(plan.get("TargetResources", [])),
        "blocks": blocks,
    }


def offering_record(offering: dict[str, Any]) -> Record:
    """One SearchTrainingPlanOfferings offering as an ``offerings`` record, its blocks in it."""
    return {
        "id": offering["TrainingPlanOfferingId"],
        "target_resources": list(offering.get("TargetResources", [])),
        "duration_hours": offering.get("DurationHours"),
        "duration_minutes": offering.get("DurationMinutes"),
        "upfront_fee": offering.get("UpfrontFee"),
        "currency": offering.get("CurrencyCode"),
        "blocks": [_block(block, "InstanceCount") for block in offering.get("ReservedCapacityOfferings", [])],
    }


def pool_record(chain: list[dict[str, Any]], now: datetime, cache_bytes: int | None) -> Record:
    """A chain as a ``pools`` record: its last job's pool, and the keep-alive it has left at ``now``."""
    last = chain[-1]
    status = last["WarmPoolStatus"]
    resources = last.get("ResourceConfig", {})
    keep_alive = resources.get("KeepAlivePeriodInSeconds")
    expires = remaining = None
    if status.get("Status") == "Available" and keep_alive is not None and "TrainingEndTime" in last:
        expires = last["TrainingEndTime"] + timedelta(seconds=keep_alive)
        if "TrainingEndTime" in chain[0]:
            expires = min(expires, chain[0]["TrainingEndTime"] + CHAIN_LIMIT)
        remaining = max(math.ceil((expires - now).total_seconds()), 0)
    retained = [job["WarmPoolStatus"].get("ResourceRetainedBillableTimeInSeconds") for job in chain]
    return {
        "job": last["TrainingJobName"],
        "chain": [job["TrainingJobName"] for job in chain],
        "chain_length": len(chain),
        "status": status.get("Status"),
        "instance_type": resources.get("InstanceType"),
        "instance_count": resources.get("InstanceCount"),
        "keep_alive_seconds": keep_alive,
        "expires_at": iso(expires),
        "remaining_seconds": remaining,
        "retained_billable_seconds": sum(seconds for seconds in retained if seconds is not None),
        "cache_bytes": cache_bytes,
    }


# -- human output ------------------------------------------------------------------------------


def text(value: Any) -> str:
    """A record value as a table cell: ``-`` for null, lists joined."""
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(text(item) for item in value)
    return str(value)


def count(things: Sequence[Any], noun: str) -> str:
    """``3 jobs``, ``1 job``."""
    return f"{len(things)} {noun}{'' if len(things) == 1 else 's'}"


def when(value: str | None) -> str:
    """An ISO time as ``YYYY-MM-DD HH:MM:SS`` (UTC)."""
    return "-" if value is None else datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M:%S")


def seconds(value: int | float | None) -> str:
    """Seconds as ``1d 2h 3m 4s`` (the zero units left out)."""
    if value is None:
        return "-"
    left, parts = int(value), list[str]()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if left >= size or (unit == "s" and not parts):
            parts.append(f"{left // size}{unit}")
            left %= size
    return " ".join(parts)


def hours(record: Record) -> str:
    """A record's ``duration_hours`` / ``duration_minutes`` as a duration."""
    return seconds(((record.get("duration_hours") or 0) * 60 + (record.get("duration_minutes") or 0)) * 60)


def size(value: int | None) -> str:
    return "-" if value is None else decimal(value)


def fee(record: Record) -> str:
    return text(record.get("upfront_fee")) + (f" {record['currency']}" if record.get("currency") else "")


def table(console: Console, title: str, columns: Iterable[Column], rows: Iterable[Record]) -> None:
    """Print ``rows`` as a table: each column a header, the record key it shows, and how."""
    columns = list(columns)
    drawn = Table(title=title, title_justify="left")
    for header, _, _ in columns:
        drawn.add_column(header, overflow="fold")
    for row in rows:
        drawn.add_row(*(show(row if key == "*" else row.get(key)) for _, key, show in columns))
    console.print(drawn)
