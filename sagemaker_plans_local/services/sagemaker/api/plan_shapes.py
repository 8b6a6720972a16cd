"""Training-plan records as the model's output shapes: offerings, plans, reserved capacity, UltraServers."""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta

from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.plans.offerings import Capacity, ExtensionOffering, PlanOffering
from sagemaker_plans_local.services.sagemaker.plans.plan_records import (
    Extension,
    ReservedCapacity,
    TrainingPlan,
    hours_and_minutes,
)
from sagemaker_plans_local.services.sagemaker.plans.zones import zone_id
from sagemaker_plans_local.services.sagemaker.statuses import PlanStatus


@functools.lru_cache(maxsize=None)
def _zone_id_pattern() -> re.Pattern:
    """The model's AvailabilityZoneId pattern (plain enough for ``re``)."""
    return re.compile(service_model().shape_for("AvailabilityZoneId").metadata["pattern"])


def zone_id_member(availability_zone: str) -> dict:
    """``{"AvailabilityZoneId": …}`` when the AZ has an id the model's pattern accepts, else {}."""
    found = zone_id(availability_zone)
    return {"AvailabilityZoneId": found} if found and _zone_id_pattern().fullmatch(found) else {}


def _duration(duration: timedelta) -> dict:
    """``DurationHours`` and ``DurationMinutes`` of a block, an offering or a plan."""
    hours, minutes = hours_and_minutes(duration)
    return {"DurationHours": hours, "DurationMinutes": minutes}


def _kind(capacity: Capacity) -> dict:
    """``ReservedCapacityType`` and, for UltraServers, their type and count."""
    if capacity.ultra_server is None:
        return {"ReservedCapacityType": "Instance"}
    return {
        "ReservedCapacityType": "UltraServer",
        "UltraServerType": capacity.ultra_server.name,
        "UltraServerCount": capacity.ultra_server_count,
    }


def offering(found: PlanOffering) -> dict:
    return {
        "TrainingPlanOfferingId": found.offering_id,
        "TargetResources": [found.target],
        "RequestedStartTimeAfter": found.requested_start_after,
        "RequestedEndTimeBefore": found.requested_end_before,
        **_duration(found.duration),
        "UpfrontFee": str(found.upfront_fee),
        "CurrencyCode": found.currency,
        "ReservedCapacityOfferings": [
            {
                **_kind(block.capacity),
                "InstanceType": block.instance_type,
                "InstanceCount": block.count,
                "AvailabilityZone": block.availability_zone,
                "StartTime": block.start,
                "EndTime": block.end,
                **_duration(block.duration),
            }
            for block in found.blocks
        ],
    }


def extension_offering(found: ExtensionOffering) -> dict:
    return {
        "TrainingPlanExtensionOfferingId": found.offering_id,
        "AvailabilityZone": found.availability_zone,
        "StartDate": found.start,
        "EndDate": found.end,
        "DurationHours": found.duration_hours,
        "UpfrontFee": str(found.upfront_fee),
        "CurrencyCode": found.currency,
    }


def extension(record: Extension, now: datetime) -> dict:
    """A TrainingPlanExtension: ``Pending`` until its payment completes, then by time (chosen)."""
    found = record.offering
    if not record.paid:
        status = PlanStatus.PENDING
    elif now < found.start:
        status = PlanStatus.SCHEDULED
    else:
        status = PlanStatus.ACTIVE if now < found.end else PlanStatus.EXPIRED
    return {
        **extension_offering(found),
        **zone_id_member(found.availability_zone),
        "ExtendedAt": record.extended_at,
        "Status": status.value,
        "PaymentStatus": "Completed" if record.paid else "Pending",
    }


def capacity_summary(rc: ReservedCapacity) -> dict:
    return {
        "ReservedCapacityArn": rc.arn,
        **_kind(rc.capacity),
        "InstanceType": rc.instance_type,
        "TotalInstanceCount": rc.count,
        "Status": rc.status.value,
        "AvailabilityZone": rc.availability_zone,
        **zone_id_member(rc.availability_zone),
        "StartTime": rc.start,
        "EndTime": rc.end,
        **_duration(rc.duration),
    }


def plan_summary(plan: TrainingPlan) -> dict:
    summary = {
        "TrainingPlanArn": plan.arn,
        "TrainingPlanName": plan.name,
        "Status": plan.status.value,
        "StatusMessage": plan.status_message,
        **_duration(plan.duration),
        "StartTime": plan.start,
        "EndTime": plan.end,
        "UpfrontFee": str(plan.upfront_fee),
        "CurrencyCode": plan.currency,
        "TotalInstanceCount": plan.instance_count,
        "AvailableInstanceCount": plan.available,
        "InUseInstanceCount": plan.in_use,
        "TargetResources": [plan.target],
        "ReservedCapacitySummaries": [capacity_summary(rc) for rc in plan.capacities],
    }
    if plan.capacity.ultra_server is not None:
        summary["TotalUltraServerCount"] = plan.capacity.ultra_server_count
    return summary


def plan_description(plan: TrainingPlan) -> dict:
    """DescribeTrainingPlan: the summary plus health and spares (*chosen:* no instance is ever unhealthy)."""
    return {
        **plan_summary(plan),
        "UnhealthyInstanceCount": 0,
        "AvailableSpareInstanceCount": plan.available_spares,
    }


def capacity_description(plan: TrainingPlan, rc: ReservedCapacity) -> dict:
    active = rc.status == PlanStatus.ACTIVE
    in_use = plan.in_use if active else 0
    response = capacity_summary(rc)
    for member in ("AvailabilityZoneId", "UltraServerType", "UltraServerCount"):
        response.pop(member, None)  # not members of DescribeReservedCapacity (UltraServerSummary is)
    response.update(
        InUseInstanceCount=in_use, AvailableInstanceCount=max(0, plan.usable_count - in_use) if active else 0
    )
    ultra = rc.capacity.ultra_server
    if ultra is not None:
        response["UltraServerSummary"] = {
            "UltraServerType": ultra.name,
            "InstanceType": ultra.instance_type,
            "UltraServerCount": rc.capacity.ultra_server_count,
            "AvailableSpareInstanceCount": plan.spare_count if active else 0,
            "UnhealthyInstanceCount": 0,
        }
    return response


def ultra_servers(plan: TrainingPlan, rc: ReservedCapacity) -> list[dict]:
    """The UltraServers of a block; instances in use fill them in order (chosen)."""
    ultra = rc.capacity.ultra_server
    if ultra is None:
        return []
    active = rc.status == PlanStatus.ACTIVE
    spares = plan.spares_per_ultra_server
    usable = ultra.instances - spares
    left = plan.in_use if active else 0
    servers = []
    for server_id in rc.ultra_servers:
        in_use = min(left, usable)
        left -= in_use
        servers.append(
            {
                "UltraServerId": server_id,
                "UltraServerType": ultra.name,
                "AvailabilityZone": rc.availability_zone,
                "InstanceType": ultra.instance_type,
                "TotalInstanceCount": ultra.instances,
                "ConfiguredSpareInstanceCount": spares,
                "AvailableInstanceCount": usable - in_use if active else 0,
                "InUseInstanceCount": in_use,
                "AvailableSpareInstanceCount": spares if active else 0,
                "UnhealthyInstanceCount": 0,
                "HealthStatus": "OK",
            }
        )
    return servers
