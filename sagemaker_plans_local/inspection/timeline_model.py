"""What the timeline picture shows, read from a :class:`Snapshot`: plain data, no plotting.

Every time here is an API time (the describe answers' own datetimes, in UTC):
a job's phases are its ``SecondaryStatusTransitions``; a plan's blocks are its
``ReservedCapacitySummaries``; a warm pool runs from its job's
``TrainingEndTime`` for ``WarmPoolStatus.ResourceRetainedBillableTimeInSeconds``
(or, while ``Available``, until now), its keep-alive window for
``ResourceConfig.KeepAlivePeriodInSeconds`` from the same moment.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Iterable

import attrs

from sagemaker_plans_local.inspection.snapshot import Snapshot

#: The phases a job's bar is made of, in the legend's order.
PHASES = ("pending", "starting", "training", "interrupted", "resumed")
#: Secondary statuses that end a job (drawn as a marker, not a bar).
FINAL = ("Completed", "Failed", "Stopped", "MaxRuntimeExceeded", "MaxWaitTimeExceeded", "Interrupted")
#: Job rows drawn at most (the latest by creation): a picture stays readable and within Agg's size.
MAX_JOBS = 60
_STARTING = ("Starting", "LaunchingMLInstances", "PreparingTrainingStack", "DownloadingTrainingImage")


@attrs.frozen
class Span:
    """One phase of a job: ``kind`` (one of :data:`PHASES`) from ``start`` to ``end``."""

    kind: str
    start: datetime
    end: datetime
    status: str  # the secondary status the phase began with


@attrs.frozen
class Pool:
    """A job's kept warm pool: held from ``start`` to ``end``; its keep-alive runs to ``expiry``.

    ``expiry`` is None when the pool ended before its (current) keep-alive
    would have run out: the keep-alive was lowered or set to 0 after the job.
    """

    job: str
    status: str
    start: datetime
    end: datetime
    expiry: datetime | None
    reused_by: str | None


@attrs.frozen
class JobRow:
    """A job's bar: its phases, how it ended (``outcome`` at ``ended``; None while running), its pool."""

    name: str
    instance_type: str
    instance_count: int
    plan: str | None
    spans: tuple[Span, ...]
    outcome: str | None
    ended: datetime | None
    pool: Pool | None


@attrs.frozen
class Block:
    """A reserved-capacity block of a plan (``index`` in its ``ReservedCapacitySummaries``)."""

    plan: str
    index: int
    zone: str
    instance_type: str
    instance_count: int
    status: str
    start: datetime
    end: datetime


@attrs.frozen
class Chain:
    """A pool handed on: ``source``'s pool, ended at ``handed``, reused by ``target`` (created then)."""

    source: str
    target: str
    handed: datetime


@attrs.frozen
class Picture:
    """The picture's content: block rows (by plan and AZ), job rows (by creation), chains, now.

    ``hidden``: how many earlier jobs were left out (beyond the row limit).
    """

    now: datetime
    blocks: tuple[tuple[str, str, tuple[Block, ...]], ...]
    jobs: tuple[JobRow, ...]
    chains: tuple[Chain, ...]
    hidden: int = 0

    def moments(self) -> Iterable[datetime]:
        """Every time the picture shows (for its axis range)."""
        yield self.now
        for _, _, blocks in self.blocks:
            for block in blocks:
                yield from (block.start, block.end)
        for job in self.jobs:
            yield from (moment for span in job.spans for moment in (span.start, span.end))
            if job.pool:
                yield from (job.pool.start, job.pool.end, job.pool.expiry or job.pool.end)


def picture(snapshot: Snapshot, max_jobs: int = MAX_JOBS) -> Picture:
    """What :func:`~sagemaker_plans_local.inspection.timeline.timeline` draws: the latest ``max_jobs`` jobs."""
    now = utc(snapshot.now)
    shown = snapshot.jobs[-max_jobs:] if max_jobs > 0 else ()
    jobs = tuple(job_row(job, now) for job in shown)
    names = {job.name: job for job in jobs}
    chains = tuple(
        Chain(job.name, job.pool.reused_by, job.pool.end)
        for job in jobs
        if job.pool and job.pool.reused_by in names
    )
    return Picture(now, block_rows(snapshot.plans), jobs, chains, len(snapshot.jobs) - len(jobs))


def block_rows(plans: Iterable[dict[str, Any]]) -> tuple[tuple[str, str, tuple[Block, ...]], ...]:
    """One row per plan and availability zone, the blocks in time order."""
    rows: dict[tuple[str, str], list[Block]] = {}
    for plan in plans:
        for index, summary in enumerate(plan.get("ReservedCapacitySummaries", ())):
            block = Block(
                plan["TrainingPlanName"],
                index,
                summary.get("AvailabilityZone", "?"),
                summary["InstanceType"],
                summary["TotalInstanceCount"],
                summary.get("Status", ""),
                utc(summary["StartTime"]),
                utc(summary["EndTime"]),
            )
            rows.setdefault((block.plan, block.zone), []).append(block)
    return tuple(
        (plan, zone, tuple(sorted(blocks, key=lambda b: b.start))) for (plan, zone), blocks in rows.items()
    )


def job_row(job: dict[str, Any], now: datetime) -> JobRow:
    """The bar of one described job at ``now``."""
    transitions = job.get("SecondaryStatusTransitions", ())
    spans = phases(transitions, now)
    final = [t for t in transitions if t["Status"] in FINAL]
    outcome = final[-1]["Status"] if final else None
    ended = utc(final[-1]["StartTime"]) if final else None
    if not spans and not final:  # not started: one pending bar from creation
        spans = (Span("pending", utc(job["CreationTime"]), now, job.get("SecondaryStatus", "")),)
    resources = job.get("ResourceConfig", {})
    plan = resources.get("TrainingPlanArn")
    return JobRow(
        job["TrainingJobName"],
        resources.get("InstanceType", "?"),
        resources.get("InstanceCount", 0),
        plan.rpartition("/")[2] if plan else None,
        spans,
        outcome,
        ended,
        pool(job, now),
    )


def phases(transitions: Iterable[dict[str, Any]], now: datetime) -> tuple[Span, ...]:
    """The job's phases from its secondary status transitions; an open one runs to ``now``.

    Pending before the job first trained is ``pending``; pending after it
    trained is ``interrupted`` (a block ended); the start that follows an
    interruption is ``resumed``; the rest is ``starting`` or ``training``.
    Consecutive transitions of one kind are one span.
    """
    spans: list[Span] = []
    trained = interrupted = False
    for transition in transitions:
        status = transition["Status"]
        if status in FINAL:
            break
        if status == "Pending":
            kind, interrupted = ("interrupted", True) if trained else ("pending", False)
        elif status in _STARTING:
            kind = "resumed" if interrupted else "starting"
        else:
            kind, trained, interrupted = "training", True, False
        start, end = utc(transition["StartTime"]), utc(transition.get("EndTime") or now)
        if spans and spans[-1].kind == kind:
            spans[-1] = attrs.evolve(spans[-1], end=end)
        else:
            spans.append(Span(kind, start, end, status))
    return tuple(spans)


def pool(job: dict[str, Any], now: datetime) -> Pool | None:
    """The job's kept pool, or None (no pool asked for, never kept, or the job still running)."""
    status = job.get("WarmPoolStatus", {}).get("Status")
    end = job.get("TrainingEndTime")
    if status not in ("Available", "Reused", "Terminated") or end is None:
        return None
    start = utc(end)
    retained = job["WarmPoolStatus"].get("ResourceRetainedBillableTimeInSeconds")
    if status != "Available" and not retained:
        return None  # terminated without being kept
    keep_alive = timedelta(seconds=job.get("ResourceConfig", {}).get("KeepAlivePeriodInSeconds", 0))
    held = now if status == "Available" else start + timedelta(seconds=retained)
    expiry = start + keep_alive if start + keep_alive >= held else None
    return Pool(job["TrainingJobName"], status, start, held, expiry, job["WarmPoolStatus"].get("ReusedByJob"))


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC (the API's datetimes carry the local zone)."""
    return moment.astimezone(timezone.utc)
