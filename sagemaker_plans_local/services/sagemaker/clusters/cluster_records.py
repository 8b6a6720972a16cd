"""HyperPod cluster records: a cluster, its instance groups and their plan consumer keys."""

from __future__ import annotations

from datetime import datetime
from typing import Iterator

import attrs

from sagemaker_plans_local.core.clock import Event
from sagemaker_plans_local.services.sagemaker.clusters.cluster_nodes import Node
from sagemaker_plans_local.services.sagemaker.plans.training_plans import TrainingPlan
from sagemaker_plans_local.services.sagemaker.statuses import ClusterStatus, InstanceGroupStatus


@attrs.define(eq=False)
class InstanceGroup:
    """One instance group: its request (echoed), its plan and its nodes.

    ``plan`` is the plan of the group's latest request; ``held`` the plan its running
    nodes take their instances from. They differ only while an update that moves the
    group onto, off or between plans is in progress.
    """

    name: str
    spec: dict
    plan: TrainingPlan | None
    status: InstanceGroupStatus = InstanceGroupStatus.CREATING
    nodes: list[Node] = attrs.Factory(list)
    held: TrainingPlan | None = None

    def __attrs_post_init__(self) -> None:
        self.held = self.plan

    @property
    def instance_type(self) -> str:
        return self.spec["InstanceType"]

    @property
    def instance_count(self) -> int:
        return self.spec["InstanceCount"]

    @property
    def current_count(self) -> int:
        """The nodes that have an instance."""
        return sum(1 for node in self.nodes if node.instance is not None)

    @property
    def pending(self) -> list[Node]:
        """The nodes still waiting for an instance."""
        return [node for node in self.nodes if node.instance is None]

    @property
    def training_plan_arn(self) -> str | None:
        return self.plan.arn if self.plan is not None else None


@attrs.define(eq=False)
class Cluster:
    """One HyperPod cluster."""

    name: str
    arn: str
    created_at: datetime
    sequence: int
    settings: dict
    groups: dict[str, InstanceGroup] = attrs.Factory(dict)
    status: ClusterStatus = ClusterStatus.CREATING
    last_modified: datetime | None = None
    events: list[Event] = attrs.Factory(list)

    @property
    def training_plan_arns(self) -> list[str]:
        """The plans of the cluster's groups, in group order, each once."""
        arns = [group.plan.arn for group in self.groups.values() if group.plan is not None]
        return list(dict.fromkeys(arns))

    def nodes(self) -> Iterator[Node]:
        for group in self.groups.values():
            yield from group.nodes


def consumer_key(cluster: Cluster, group: InstanceGroup) -> str:
    return f"cluster:{cluster.name}/{group.name}"
