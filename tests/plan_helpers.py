"""Helpers for tests that buy training plans on a backend with a known inventory."""

from datetime import datetime, timedelta, timezone

from tests.conftest import START

# START is 2026-01-01 00:00 UTC; capacity days run 11:30 -> 11:30 UTC.
DAY0 = datetime(2026, 1, 1, 11, 30, tzinfo=timezone.utc)


def day(n: int) -> datetime:
    """11:30 UTC, n days after 2026-01-01."""
    return DAY0 + timedelta(days=n)


def own_inventory(backend, *blocks):
    """Replace the default inventory by ``(type, count, az, start_day, end_day)`` blocks."""
    backend.capacity.clear()
    for instance_type, count, zone, first, last in blocks:
        backend.capacity.add(instance_type, count, zone, day(first), day(last))


def buy(
    sm,
    backend,
    name,
    *,
    instance_type="ml.p5.48xlarge",
    count=2,
    hours=48,
    target="training-job",
    start_after=None,
    pay=True,
):
    """Search and buy the best offering; returns (plan_arn, offering)."""
    kwargs = {"StartTimeAfter": start_after} if start_after else {}
    offerings = sm.search_training_plan_offerings(
        InstanceType=instance_type,
        InstanceCount=count,
        DurationHours=hours,
        TargetResources=[target],
        **kwargs,
    )["TrainingPlanOfferings"]
    assert offerings, "no offering"
    arn = sm.create_training_plan(
        TrainingPlanName=name, TrainingPlanOfferingId=offerings[0]["TrainingPlanOfferingId"]
    )["TrainingPlanArn"]
    if pay:
        backend.clock.advance(backend.settings.plan_payment_seconds)
    return arn, offerings[0]


def advance_to(backend, moment: datetime):
    backend.clock.advance(max(moment - backend.clock.now(), timedelta(0)))


__all__ = ["START", "DAY0", "day", "own_inventory", "buy", "advance_to"]
