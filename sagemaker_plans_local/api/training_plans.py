"""Training-plan operations: offerings, plans, reserved capacity and extensions."""

from __future__ import annotations

from datetime import datetime

from ..domain.emulation import Region
from ..domain.offerings import ExtensionOffering, PlanOffering
from ..domain.training_plans import ReservedCapacity, TrainingPlan, hours_and_minutes
from .errors import constraint_violations, validation_error
from .pagination import indexed_page, page, within

#: Members SearchTrainingPlanOfferings needs for a plan search (the model marks none required).
SEARCH_REQUIRED = ("InstanceType", "InstanceCount", "DurationHours", "TargetResources")


def _null(member: str) -> str:
    return f"Value null at '{member[0].lower() + member[1:]}' failed to satisfy constraint: Member must not be null"


def _duration(start: datetime, end: datetime) -> dict:
    hours, minutes = hours_and_minutes(end - start)
    return {"DurationHours": hours, "DurationMinutes": minutes}


def _offering(offering: PlanOffering) -> dict:
    hours, minutes = hours_and_minutes(offering.duration)
    return {
        "TrainingPlanOfferingId": offering.offering_id,
        "TargetResources": [offering.target],
        "RequestedStartTimeAfter": offering.requested_start_after,
        "RequestedEndTimeBefore": offering.requested_end_before,
        "DurationHours": hours,
        "DurationMinutes": minutes,
        "UpfrontFee": str(offering.upfront_fee),
        "CurrencyCode": offering.currency,
        "ReservedCapacityOfferings": [
            {"ReservedCapacityType": "Instance", "InstanceType": block.instance_type,
             "InstanceCount": block.count, "AvailabilityZone": block.availability_zone,
             "StartTime": block.start, "EndTime": block.end, **_duration(block.start, block.end)}
            for block in offering.blocks
        ],
    }


def _extension_offering(offering: ExtensionOffering) -> dict:
    return {
        "TrainingPlanExtensionOfferingId": offering.offering_id,
        "AvailabilityZone": offering.availability_zone,
        "StartDate": offering.start,
        "EndDate": offering.end,
        "DurationHours": offering.duration_hours,
        "UpfrontFee": str(offering.upfront_fee),
        "CurrencyCode": offering.currency,
    }


def _capacity(rc: ReservedCapacity) -> dict:
    return {
        "ReservedCapacityArn": rc.arn,
        "ReservedCapacityType": "Instance",
        "InstanceType": rc.instance_type,
        "TotalInstanceCount": rc.count,
        "Status": rc.status,
        "AvailabilityZone": rc.availability_zone,
        "StartTime": rc.start,
        "EndTime": rc.end,
        **_duration(rc.start, rc.end),
    }


def plan_summary(plan: TrainingPlan) -> dict:
    hours, minutes = hours_and_minutes(plan.duration)
    return {
        "TrainingPlanArn": plan.arn,
        "TrainingPlanName": plan.name,
        "Status": plan.status,
        "StatusMessage": plan.status_message,
        "DurationHours": hours,
        "DurationMinutes": minutes,
        "StartTime": plan.start,
        "EndTime": plan.end,
        "UpfrontFee": str(plan.upfront_fee),
        "CurrencyCode": plan.currency,
        "TotalInstanceCount": plan.instance_count,
        "AvailableInstanceCount": plan.available,
        "InUseInstanceCount": plan.in_use,
        "TargetResources": [plan.target],
        "ReservedCapacitySummaries": [_capacity(rc) for rc in plan.capacities],
    }


def _extension(plan: TrainingPlan, extension, now: datetime) -> dict:
    offering = extension.offering
    status = "Scheduled" if now < offering.start else "Active" if now < offering.end else "Expired"
    return {**_extension_offering(offering), "ExtendedAt": extension.extended_at,
            "Status": status, "PaymentStatus": "Completed"}


def search_training_plan_offerings(region: Region, params: dict) -> dict:
    plans = region.training_plans
    if "TrainingPlanArn" in params:
        if "DurationHours" not in params:
            raise constraint_violations([_null("DurationHours")])
        offerings = plans.search_extensions(params["TrainingPlanArn"], params["DurationHours"])
        return {"TrainingPlanOfferings": [],
                "TrainingPlanExtensionOfferings": [_extension_offering(o) for o in offerings]}
    missing = [_null(member) for member in SEARCH_REQUIRED if member not in params]
    if missing:
        raise constraint_violations(missing)
    if "UltraServerType" in params or "UltraServerCount" in params:
        raise validation_error("UltraServer reservations are not supported by sagemaker-plans-local.")
    if len(params["TargetResources"]) != 1:
        raise validation_error("TargetResources must name exactly one target resource.")
    offerings = plans.search(
        instance_type=params["InstanceType"], instance_count=params["InstanceCount"],
        duration_hours=params["DurationHours"], target=params["TargetResources"][0],
        start_after=params.get("StartTimeAfter"), end_before=params.get("EndTimeBefore"))
    return {"TrainingPlanOfferings": [_offering(o) for o in offerings]}


def create_training_plan(region: Region, params: dict) -> dict:
    plan = region.training_plans.create(params["TrainingPlanName"], params["TrainingPlanOfferingId"])
    return {"TrainingPlanArn": plan.arn}


def describe_training_plan(region: Region, params: dict) -> dict:
    return plan_summary(region.training_plans.get(params["TrainingPlanName"]))


def describe_reserved_capacity(region: Region, params: dict) -> dict:
    plan, rc = region.training_plans.reserved_capacity(params["ReservedCapacityArn"])
    in_use = plan.in_use if rc.status == "Active" else 0
    response = _capacity(rc)
    response.update(InUseInstanceCount=in_use, AvailableInstanceCount=max(0, rc.count - in_use))
    return response


def extend_training_plan(region: Region, params: dict) -> dict:
    plan, extension = region.training_plans.extend(params["TrainingPlanExtensionOfferingId"])
    return {"TrainingPlanExtensions": [_extension(plan, extension, extension.extended_at)]}


def describe_training_plan_extension_history(region: Region, params: dict) -> dict:
    plan = region.training_plans.get(params["TrainingPlanArn"])
    now = region.training_plans.now()
    extensions = list(enumerate(plan.extensions))
    chunk, token = page(extensions, params, {"arn": plan.arn}, lambda item: item[0])
    return {"TrainingPlanExtensions": [_extension(plan, ext, now) for _, ext in chunk], "NextToken": token}


#: The plan-table index behind each SortBy value.
_SORT_KEYS = {"TrainingPlanName": "name", "StartTime": "start", "Status": "status"}


def list_training_plans(region: Region, params: dict) -> dict:
    """Up to ``MaxResults`` matching plans (filter then take); ties in creation order."""
    statuses = {f["Value"] for f in params.get("Filters", []) if f["Name"] == "Status"}

    def matches(plan: TrainingPlan) -> bool:
        return (not statuses or plan.status in statuses) and within(plan.start, params, "StartTime")

    chunk, token = indexed_page(region.training_plans.scan, params, _SORT_KEYS, "StartTime", matches,
                                evaluate_first=False)
    return {"TrainingPlanSummaries": [plan_summary(plan) for plan in chunk], "NextToken": token}


HANDLERS = {
    "SearchTrainingPlanOfferings": search_training_plan_offerings,
    "CreateTrainingPlan": create_training_plan,
    "DescribeTrainingPlan": describe_training_plan,
    "ListTrainingPlans": list_training_plans,
    "DescribeReservedCapacity": describe_reserved_capacity,
    "ExtendTrainingPlan": extend_training_plan,
    "DescribeTrainingPlanExtensionHistory": describe_training_plan_extension_history,
}
