"""SageMaker HyperPod cluster operations: CreateCluster, DescribeCluster, ListClusters,
UpdateCluster, DeleteCluster, ListClusterNodes, DescribeClusterNode (rules in
``domain/clusters.py`` and ``domain/cluster_nodes.py``).

DescribeCluster echoes the cluster settings and instance-group settings of the
requests wherever the model's output shape has the same member (found from the
model, not listed by hand); ``ImageId`` is reported as ``CurrentImageId`` and
``DesiredImageId``, ``KubernetesConfig`` as current and desired labels/taints,
``MinInstanceCount`` as ``MinCount``, ``AutoScaling`` with ``Status`` ``InService``
(``Creating`` while the cluster is, ``Deleting`` while it is).
ListClusters: ``NameContains`` is a case-sensitive substring of the name,
``CreationTimeAfter``/``CreationTimeBefore`` are strict, ``SortBy``
``CREATION_TIME`` (default) or ``NAME``, ``SortOrder`` ``Ascending`` (default);
``MaxResults`` counts the clusters evaluated, not those returned (docs/lists.md);
``TrainingPlanArn`` keeps clusters with at least one group on that plan;
``ClusterSummary.TrainingPlanArns`` lists the plans of the cluster's groups
(left out when there are none).
ListClusterNodes and DescribeClusterNode: nodes still waiting for an instance, ``NodeLogicalId``,
``Placement`` and ``CapacityType`` as docs/training-plans.md ("HyperPod clusters on a plan") says.
"""

from __future__ import annotations

from typing import Any

from botocore.model import Shape

from sagemaker_plans_local.protocol.pagination import indexed_page, sorted_page, within
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.api.plan_shapes import zone_id_member
from sagemaker_plans_local.services.sagemaker.clusters.cluster_nodes import Node, find_node
from sagemaker_plans_local.services.sagemaker.clusters.cluster_records import Cluster, InstanceGroup
from sagemaker_plans_local.services.sagemaker.region import Region
from sagemaker_plans_local.services.sagemaker.statuses import ClusterStatus

_model = service_model()


def _echoable(source: Shape, target: Shape) -> tuple[str, ...]:
    """Members of ``source`` that ``target`` reports unchanged: same shape, or a structure
    whose members the target's structure also has (and that adds no required member)."""
    names = []
    for name, member in source.members.items():
        out = target.members.get(name)
        if out is None:
            continue
        if out.name == member.name:
            names.append(name)
        elif (
            member.type_name == out.type_name == "structure"
            and set(member.members) <= set(out.members)
            and set(out.required_members) <= set(member.members)
        ):
            names.append(name)
    return tuple(names)


#: Instance-group request members DescribeCluster reports unchanged.
GROUP_ECHOED = tuple(
    name
    for name in _echoable(
        _model.shape_for("ClusterInstanceGroupSpecification"), _model.shape_for("ClusterInstanceGroupDetails")
    )
    if name not in ("InstanceCount", "TrainingPlanArn")
)
#: Cluster request members DescribeCluster reports unchanged.
CLUSTER_ECHOED = _echoable(
    _model.operation_model("CreateCluster").input_shape,
    _model.operation_model("DescribeCluster").output_shape,
)


def _group(group: InstanceGroup) -> dict:
    spec = group.spec
    details: dict[str, Any] = {name: spec[name] for name in GROUP_ECHOED if name in spec}
    details.update(
        InstanceGroupName=group.name,
        InstanceType=group.instance_type,
        CurrentCount=group.current_count,
        TargetCount=group.instance_count,
        Status=group.status.value,
    )
    if "MinInstanceCount" in spec:
        details["MinCount"] = spec["MinInstanceCount"]
    if "ImageId" in spec:
        details["CurrentImageId"] = details["DesiredImageId"] = spec["ImageId"]
    kubernetes = spec.get("KubernetesConfig")
    if kubernetes:
        details["KubernetesConfig"] = {
            "CurrentLabels": kubernetes.get("Labels"),
            "DesiredLabels": kubernetes.get("Labels"),
            "CurrentTaints": kubernetes.get("Taints"),
            "DesiredTaints": kubernetes.get("Taints"),
        }
    if group.plan is not None:
        details["TrainingPlanArn"] = group.plan.arn
        details["TrainingPlanStatus"] = group.plan.status.value
    return details


def describe(cluster: Cluster) -> dict:
    """The DescribeCluster response for ``cluster``."""
    response: dict[str, Any] = {
        name: cluster.settings[name] for name in CLUSTER_ECHOED if name in cluster.settings
    }
    auto_scaling = cluster.settings.get("AutoScaling")
    if auto_scaling:
        busy = cluster.status in (ClusterStatus.CREATING, ClusterStatus.DELETING)
        status = cluster.status if busy else ClusterStatus.IN_SERVICE
        response["AutoScaling"] = {**auto_scaling, "Status": status.value}
    response.update(
        ClusterArn=cluster.arn,
        ClusterName=cluster.name,
        ClusterStatus=cluster.status.value,
        CreationTime=cluster.created_at,
        InstanceGroups=[_group(group) for group in cluster.groups.values()],
    )
    return response


def summary(cluster: Cluster) -> dict:
    return {
        "ClusterArn": cluster.arn,
        "ClusterName": cluster.name,
        "CreationTime": cluster.created_at,
        "ClusterStatus": cluster.status.value,
        "TrainingPlanArns": cluster.training_plan_arns or None,
    }


#: The model's ClusterCapacityType values (DescribeClusterNode's CapacityType; none in a model without it).
CAPACITY_TYPES = (
    tuple(_model.shape_for("ClusterCapacityType").enum) if "ClusterCapacityType" in _model.shape_names else ()
)


def _capacity_type(spot: bool) -> dict:
    """``CapacityType``: ``Spot`` or ``OnDemand`` (on a plan too), as far as the model has the value."""
    wanted = "Spot" if spot else "OnDemand"
    return {"CapacityType": wanted} if wanted in CAPACITY_TYPES else {}


def _instance_members(node: Node) -> dict:
    """The members only a node with an instance has (a waiting node has none of them)."""
    instance = node.instance
    if instance is None:
        return {}
    return {
        "PrivatePrimaryIp": instance.private_ip,
        "PrivateDnsHostname": instance.private_dns,
        "Placement": {
            "AvailabilityZone": instance.availability_zone,
            **zone_id_member(instance.availability_zone),
        },
        **_capacity_type(instance.spot),
        **_ultra_server_info(node),
    }


def _ultra_server_info(node: Node) -> dict:
    """``UltraServerInfo`` of a node on an UltraServer plan's instance."""
    server = node.instance.ultra_server if node.instance is not None else None
    return {"UltraServerInfo": {"Id": server[0], "Type": server[1]}} if server else {}


def node_summary(node: Node, logical_ids: bool = False) -> dict:
    """A ClusterNodeSummary; a node still without an instance has ``InstanceId`` "" (chosen) and
    ``LaunchTime`` the moment it was asked for (both are required members of the summary)."""
    summary = {
        "InstanceGroupName": node.group_name,
        "InstanceId": node.instance_id or "",
        "InstanceType": node.instance_type,
        "LaunchTime": node.created_at,
        "InstanceStatus": {"Status": node.status.value},
    }
    if node.instance is not None:
        summary.update(PrivateDnsHostname=node.instance.private_dns, **_ultra_server_info(node))
    if logical_ids:
        summary["NodeLogicalId"] = node.logical_id
    return summary


#: Instance-group request members DescribeClusterNode reports for each node of the group.
NODE_ECHOED = tuple(
    name
    for name in _echoable(
        _model.shape_for("ClusterInstanceGroupSpecification"), _model.shape_for("ClusterNodeDetails")
    )
    if name not in ("InstanceGroupName", "InstanceType")
)


def node_details(group: InstanceGroup, node: Node) -> dict:
    """DescribeClusterNode's ClusterNodeDetails: the node, and its group's settings."""
    details: dict[str, Any] = {name: group.spec[name] for name in NODE_ECHOED if name in group.spec}
    details.update(
        InstanceGroupName=node.group_name,
        NodeLogicalId=node.logical_id,
        InstanceStatus={"Status": node.status.value},
        InstanceType=node.instance_type,
    )
    if node.instance is not None:
        details.update(InstanceId=node.instance.instance_id, LaunchTime=node.instance.launch_time)
    details.update(_instance_members(node))
    group_details = _group(group)
    for name in ("CurrentImageId", "DesiredImageId", "KubernetesConfig"):
        if name in group_details:
            details[name] = group_details[name]
    return details


def describe_cluster_node(region: Region, params: dict) -> dict:
    cluster = region.clusters.get(params["ClusterName"])
    node = find_node(cluster.nodes(), cluster.name, params.get("NodeId"), params.get("NodeLogicalId"))
    return {"NodeDetails": node_details(cluster.groups[node.group_name], node)}


def create_cluster(region: Region, params: dict) -> dict:
    return {"ClusterArn": region.clusters.create(params).arn}


def describe_cluster(region: Region, params: dict) -> dict:
    return describe(region.clusters.get(params["ClusterName"]))


def update_cluster(region: Region, params: dict) -> dict:
    return {"ClusterArn": region.clusters.update(params["ClusterName"], params).arn}


def delete_cluster(region: Region, params: dict) -> dict:
    return {"ClusterArn": region.clusters.delete(params["ClusterName"]).arn}


#: The cluster-table index behind each SortBy value.
_CLUSTER_SORT_KEYS = {"CREATION_TIME": "created", "NAME": "name"}


def _cluster_matches(cluster: Cluster, params: dict) -> bool:
    if "NameContains" in params and params["NameContains"] not in cluster.name:
        return False
    if not within(cluster.created_at, params, "CreationTime"):
        return False
    if "TrainingPlanArn" in params and params["TrainingPlanArn"] not in cluster.training_plan_arns:
        return False
    return True


def list_clusters(region: Region, params: dict) -> dict:
    """``MaxResults`` is the number of clusters evaluated (its documentation): take, then filter."""
    chunk, token = indexed_page(
        region.clusters.scan,
        params,
        _CLUSTER_SORT_KEYS,
        "CREATION_TIME",
        lambda cluster: _cluster_matches(cluster, params),
        evaluate_first=True,
    )
    return {"ClusterSummaries": [summary(c) for c in chunk], "NextToken": token}


_NODE_SORT_KEYS = {
    "CREATION_TIME": lambda node: node.created_at.timestamp(),
    "NAME": lambda node: node.group_name,
}


def _node_matches(node: Node, params: dict) -> bool:
    if "InstanceGroupNameContains" in params and params["InstanceGroupNameContains"] not in node.group_name:
        return False
    return within(node.created_at, params, "CreationTime")


def list_cluster_nodes(region: Region, params: dict) -> dict:
    """Up to ``MaxResults`` matching nodes (filter then take), sorted per call: a cluster's own nodes.

    Only nodes with an instance, unless ``IncludeNodeLogicalIds``: then every node, each
    with its ``NodeLogicalId`` (the member's documentation)."""
    cluster = region.clusters.get(params["ClusterName"])
    every = bool(params.get("IncludeNodeLogicalIds"))
    nodes = (n for n in cluster.nodes() if (every or n.instance is not None) and _node_matches(n, params))
    chunk, token = sorted_page(
        nodes,
        params,
        _NODE_SORT_KEYS,
        "CREATION_TIME",
        lambda n: n.sequence,
        ClusterName=cluster.arn,
    )
    return {"ClusterNodeSummaries": [node_summary(n, every) for n in chunk], "NextToken": token}


HANDLERS = {
    "CreateCluster": create_cluster,
    "DescribeCluster": describe_cluster,
    "ListClusters": list_clusters,
    "UpdateCluster": update_cluster,
    "DeleteCluster": delete_cluster,
    "ListClusterNodes": list_cluster_nodes,
    "DescribeClusterNode": describe_cluster_node,
}
