"""Training-plan operations: offerings, plans, reserved capacity and extensions."""

from __future__ import annotations

from sagemaker_plans_local.protocol.errors import constraint_violations, validation_error
from sagemaker_plans_local.protocol.pagination import indexed_page, page, within
from sagemaker_plans_local.services.sagemaker.api.plan_shapes import (
    capacity_description,
    extension,
    extension_offering,
    offering,
    plan_description,
    plan_summary,
    ultra_servers,
)
from sagemaker_plans_local.services.sagemaker.plans.offerings import Capacity
from sagemaker_plans_local.services.sagemaker.plans.training_plans import TrainingPlan
from sagemaker_plans_local.services.sagemaker.plans.ultraservers import ultra_server_type
from sagemaker_plans_local.services.sagemaker.region import Region

#: Members every plan search needs (the model marks none required).
SEARCH_REQUIRED = ("DurationHours", "TargetResources")
#: What names the capacity: instances, or UltraServers (then InstanceType/InstanceCount may be left out).
INSTANCE_MEMBERS = ("InstanceType", "InstanceCount")
ULTRA_SERVER_MEMBERS = ("UltraServerType", "UltraServerCount")


def _null(member: str) -> str:
    return f"Value null at '{member[0].lower() + member[1:]}' failed to satisfy constraint: Member must not be null"


def _searched_capacity(params: dict) -> Capacity:
    """The instances or UltraServers a plan search asks for; ValidationException if incomplete."""
    ultra = "UltraServerType" in params or "UltraServerCount" in params
    needed = (ULTRA_SERVER_MEMBERS if ultra else INSTANCE_MEMBERS) + SEARCH_REQUIRED
    missing = [_null(member) for member in needed if member not in params]
    if missing:
        raise constraint_violations(missing)
    if not ultra:
        return Capacity(params["InstanceType"], params["InstanceCount"])
    kind = ultra_server_type(params["UltraServerType"])
    if kind is None:
        raise validation_error(
            f"UltraServerType {params['UltraServerType']} is not available for training plans."
        )
    capacity = Capacity.ultra(kind, params["UltraServerCount"])
    for member, value in (
        ("InstanceType", capacity.instance_type),
        ("InstanceCount", capacity.instance_count),
    ):
        if member in params and params[member] != value:
            raise validation_error(
                f"{member} {params[member]} does not match {capacity.ultra_server_count} "
                f"x {kind.name} UltraServers ({value})."
            )
    return capacity


def search_training_plan_offerings(region: Region, params: dict) -> dict:
    plans = region.training_plans
    if "TrainingPlanArn" in params:
        if "DurationHours" not in params:
            raise constraint_violations([_null("DurationHours")])
        extensions = plans.search_extensions(params["TrainingPlanArn"], params["DurationHours"])
        return {
            "TrainingPlanOfferings": [],
            "TrainingPlanExtensionOfferings": [extension_offering(o) for o in extensions],
        }
    capacity = _searched_capacity(params)
    if len(params["TargetResources"]) != 1:
        raise validation_error("TargetResources must name exactly one target resource.")
    offerings = plans.search(
        capacity=capacity,
        duration_hours=params["DurationHours"],
        target=params["TargetResources"][0],
        start_after=params.get("StartTimeAfter"),
        end_before=params.get("EndTimeBefore"),
    )
    return {"TrainingPlanOfferings": [offering(o) for o in offerings]}


def create_training_plan(region: Region, params: dict) -> dict:
    plan = region.training_plans.create(
        params["TrainingPlanName"],
        params["TrainingPlanOfferingId"],
        params.get("SpareInstanceCountPerUltraServer"),
    )
    return {"TrainingPlanArn": plan.arn}


def describe_training_plan(region: Region, params: dict) -> dict:
    return plan_description(region.training_plans.get(params["TrainingPlanName"]))


def describe_reserved_capacity(region: Region, params: dict) -> dict:
    return capacity_description(*region.training_plans.reserved_capacity(params["ReservedCapacityArn"]))


def list_ultra_servers_by_reserved_capacity(region: Region, params: dict) -> dict:
    """The block's UltraServers, in id order; an Instance block has none (chosen: an empty list)."""
    arn = params["ReservedCapacityArn"]
    servers = ultra_servers(*region.training_plans.reserved_capacity(arn))
    chunk, token = page(servers, params, {"arn": arn}, lambda server: server["UltraServerId"])
    return {"UltraServers": chunk, "NextToken": token}


def extend_training_plan(region: Region, params: dict) -> dict:
    _, record = region.training_plans.extend(params["TrainingPlanExtensionOfferingId"])
    return {"TrainingPlanExtensions": [extension(record, record.extended_at)]}


def describe_training_plan_extension_history(region: Region, params: dict) -> dict:
    plan = region.training_plans.get(params["TrainingPlanArn"])
    now = region.training_plans.now()
    extensions = list(enumerate(plan.extensions))
    chunk, token = page(extensions, params, {"arn": plan.arn}, lambda item: item[0])
    return {"TrainingPlanExtensions": [extension(ext, now) for _, ext in chunk], "NextToken": token}


#: The plan-table index behind each SortBy value.
_SORT_KEYS = {"TrainingPlanName": "name", "StartTime": "start", "Status": "status"}


def list_training_plans(region: Region, params: dict) -> dict:
    """Up to ``MaxResults`` matching plans (filter then take); ties in creation order."""
    statuses = {f["Value"] for f in params.get("Filters", []) if f["Name"] == "Status"}

    def matches(plan: TrainingPlan) -> bool:
        return (not statuses or plan.status in statuses) and within(plan.start, params, "StartTime")

    chunk, token = indexed_page(
        region.training_plans.scan, params, _SORT_KEYS, "StartTime", matches, evaluate_first=False
    )
    return {"TrainingPlanSummaries": [plan_summary(plan) for plan in chunk], "NextToken": token}


HANDLERS = {
    "SearchTrainingPlanOfferings": search_training_plan_offerings,
    "CreateTrainingPlan": create_training_plan,
    "DescribeTrainingPlan": describe_training_plan,
    "ListTrainingPlans": list_training_plans,
    "DescribeReservedCapacity": describe_reserved_capacity,
    "ExtendTrainingPlan": extend_training_plan,
    "DescribeTrainingPlanExtensionHistory": describe_training_plan_extension_history,
    "ListUltraServersByReservedCapacity": list_ultra_servers_by_reserved_capacity,
}
