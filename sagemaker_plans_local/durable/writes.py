"""The backend's own writes on a durable root: capacity and scripts, each one journaled change."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sagemaker_plans_local.durable.state import Durable, iso

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript
    from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript


class JournaledCapacity:
    """``backend.capacity`` on a durable root: ``add`` and ``clear`` journaled; the rest is the capacity's."""

    def __init__(self, durable: Durable) -> None:
        self._durable = durable

    def __getattr__(self, name: str) -> Any:
        return getattr(self._durable.emulation.capacity, name)

    def add(
        self, instance_type: str, instance_count: int, availability_zone: str, start: datetime, end: datetime
    ) -> None:
        """Make ``instance_count`` instances free in that AZ for ``[start, end)``; adds stack."""
        body = {"instance_type": instance_type, "count": instance_count, "zone": availability_zone}
        self._durable.record("capacity_add", {**body, "start": iso(start), "end": iso(end)})

    def clear(self) -> None:
        """Empty the inventory of every region."""
        self._durable.record("capacity_clear", {})


def script_job(durable: Durable, job_name: str, script: JobScript) -> None:
    body = {"name": job_name, "outcome": script.outcome, "runtime_seconds": script.runtime_seconds}
    durable.record("script_job", {**body, "failure_reason": script.failure_reason})


def script_plan(durable: Durable, plan_name: str, script: PlanScript) -> None:
    durable.record("script_plan", {"name": plan_name, "payment_succeeds": script.payment_succeeds})
