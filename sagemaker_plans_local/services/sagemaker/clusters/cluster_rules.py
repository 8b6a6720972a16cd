"""The request rules of CreateCluster and UpdateCluster (listed in ``clusters.py``'s docstring)."""

from __future__ import annotations

from typing import Mapping

from sagemaker_plans_local.core.errors import InvalidRequest
from sagemaker_plans_local.services.sagemaker.clusters.cluster_records import Cluster, InstanceGroup
from sagemaker_plans_local.services.sagemaker.plans.offerings import PlanTarget
from sagemaker_plans_local.services.sagemaker.plans.training_plans import TrainingPlan, TrainingPlans
from sagemaker_plans_local.services.sagemaker.statuses import USABLE_PLAN_STATUSES

NO_REQUIREMENTS = "InstanceRequirements is not supported by sagemaker-plans-local; specify InstanceType."
NO_RESTRICTED_GROUPS = "RestrictedInstanceGroups are not supported by sagemaker-plans-local."
NO_SPOT_ON_PLANS = (
    "Instance group {group} cannot request Spot capacity: its instances come from its training plan."
)

#: One group of an UpdateCluster request: its full request, the group it changes (None: a new
#: group) and its training plan (None: on-demand; the request's ``TrainingPlanArn``, so leaving it
#: out takes an existing group off its plan).
GroupChange = tuple[dict, InstanceGroup | None, TrainingPlan | None]


def check_unique(names: list[str], member: str = "InstanceGroups") -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InvalidRequest(
                f"Instance group names must be unique within a cluster; {name} "
                f"appears more than once in {member}."
            )
        seen.add(name)


def check_size(group_spec: Mapping, plan: TrainingPlan) -> None:
    if group_spec["InstanceCount"] > plan.usable_count:  # UltraServer spares are held back
        raise InvalidRequest(
            f"The instance count {group_spec['InstanceCount']} of instance group "
            f"{group_spec['InstanceGroupName']} exceeds the {plan.usable_count} "
            f"instances of training plan {plan.name}."
        )


def plan_for(plans: TrainingPlans, group_spec: Mapping, new: bool) -> TrainingPlan | None:
    """Check a group's request; returns its training plan, if any.

    ``new``: the group is new or gets this plan now (the plan must be Scheduled or Active).
    """
    if "InstanceRequirements" in group_spec:
        raise InvalidRequest(NO_REQUIREMENTS)
    if not group_spec.get("InstanceType"):
        raise InvalidRequest(
            f"InstanceType is required for instance group {group_spec['InstanceGroupName']}."
        )
    arn = group_spec.get("TrainingPlanArn")
    if not arn:
        return None
    plan = plans.get(arn)
    group = group_spec["InstanceGroupName"]
    if "Spot" in (group_spec.get("CapacityRequirements") or {}):
        raise InvalidRequest(NO_SPOT_ON_PLANS.format(group=group))
    if plan.target != PlanTarget.HYPERPOD_CLUSTER:
        raise InvalidRequest(
            f"Training plan {plan.name} targets {plan.target}; it cannot be used "
            f"for HyperPod cluster instance group {group}."
        )
    if group_spec["InstanceType"] != plan.instance_type:
        raise InvalidRequest(
            f"The instance type {group_spec['InstanceType']} of instance group "
            f"{group} does not match the instance type {plan.instance_type} of "
            f"training plan {plan.name}."
        )
    check_size(group_spec, plan)
    if new and plan.status not in USABLE_PLAN_STATUSES:
        raise InvalidRequest(
            f"Training plan {plan.name} is {plan.status}; only Scheduled or "
            "Active training plans can be used by an instance group."
        )
    return plan


def check_deletions(cluster: Cluster, to_delete: list[str], updated: list[str]) -> None:
    """UpdateCluster's InstanceGroupsToDelete: existing groups, none also updated."""
    check_unique(to_delete, "InstanceGroupsToDelete")
    for name in to_delete:
        if name not in cluster.groups:
            raise InvalidRequest(
                f"Instance group {name} in InstanceGroupsToDelete does not exist in cluster {cluster.name}."
            )
        if name in updated:
            raise InvalidRequest(f"Instance group {name} cannot be both updated and deleted.")


def group_changes(plans: TrainingPlans, cluster: Cluster, group_specs: list[Mapping]) -> list[GroupChange]:
    """Check UpdateCluster's InstanceGroups against the cluster; what each changes."""
    changes: list[GroupChange] = []
    for requested in group_specs:
        group_spec = dict(requested)
        existing = cluster.groups.get(group_spec["InstanceGroupName"])
        if existing is None:
            changes.append((group_spec, None, plan_for(plans, group_spec, new=True)))
            continue
        group_spec.setdefault("InstanceType", existing.instance_type)
        if group_spec["InstanceType"] != existing.instance_type:
            raise InvalidRequest(
                f"The instance type of instance group {existing.name} cannot be "
                f"changed from {existing.instance_type} to {group_spec['InstanceType']}."
            )
        if group_spec.get("TrainingPlanArn") == existing.training_plan_arn:
            plan = plan_for(plans, group_spec, new=False)
        else:  # a plan added, replaced or removed: the new one is checked as for a new group
            plan = plan_for(plans, group_spec, new=True)
        changes.append((group_spec, existing, plan))
    return changes
