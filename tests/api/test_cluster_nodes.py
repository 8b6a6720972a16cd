"""DescribeClusterNode through boto3 and raw JSON: ids, details, errors."""

import re

import pytest
from botocore.exceptions import ClientError

from sagemaker_plans_local.protocol.service_model import service_model
from tests.conformance import assert_conforms
from tests.conftest import ROLE
from tests.raw_requests import sagemaker_json

MODEL = service_model()
NODE_ID = re.compile(MODEL.shape_for("ClusterNodeId").metadata["pattern"])
LOGICAL_ID = re.compile(MODEL.shape_for("ClusterNodeLogicalId").metadata["pattern"])
DNS = re.compile(MODEL.shape_for("ClusterPrivateDnsHostname").metadata["pattern"])
IP = re.compile(MODEL.shape_for("ClusterPrivatePrimaryIp").metadata["pattern"])
LIFECYCLE = {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"}


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def group(name, count, **extra):
    return {
        "InstanceGroupName": name,
        "InstanceType": "ml.m5.large",
        "InstanceCount": count,
        "ExecutionRole": ROLE,
        "LifeCycleConfig": LIFECYCLE,
        **extra,
    }


@pytest.fixture
def cluster(backend, sm):
    sm.create_cluster(
        ClusterName="c1",
        InstanceGroups=[
            group(
                "workers",
                3,
                ThreadsPerCore=1,
                InstanceStorageConfigs=[{"EbsVolumeConfig": {"VolumeSizeInGB": 100}}],
            ),
            group("ctrl", 1, ImageId="ami-0123456789abcdef0"),
        ],
    )
    backend.clock.advance(3600)
    return sm.describe_cluster(ClusterName="c1")["ClusterArn"]


def listed(sm):
    return sm.list_cluster_nodes(ClusterName="c1", MaxResults=100)["ClusterNodeSummaries"]


def test_listed_nodes_are_described_by_id_and_logical_id(sm, cluster):
    nodes = listed(sm)
    assert len(nodes) == 4
    for summary in nodes:
        assert NODE_ID.fullmatch(summary["InstanceId"]) and summary["InstanceId"].startswith("i-0")
        assert len(summary["InstanceId"]) == 19
        response = sm.describe_cluster_node(ClusterName="c1", NodeId=summary["InstanceId"])
        assert_conforms("DescribeClusterNode", response)
        details = response["NodeDetails"]
        for name in (
            "InstanceGroupName",
            "InstanceId",
            "InstanceType",
            "LaunchTime",
            "InstanceStatus",
            "PrivateDnsHostname",
        ):
            assert details[name] == summary[name]
        assert LOGICAL_ID.fullmatch(details["NodeLogicalId"])
        assert details["NodeLogicalId"].startswith(details["InstanceGroupName"] + "-")
        assert DNS.fullmatch(details["PrivateDnsHostname"]) and IP.fullmatch(details["PrivatePrimaryIp"])
        assert details["PrivateDnsHostname"].startswith(
            "ip-" + details["PrivatePrimaryIp"].replace(".", "-") + "."
        )
        by_logical = sm.describe_cluster_node(ClusterName=cluster, NodeLogicalId=details["NodeLogicalId"])
        assert by_logical["NodeDetails"] == details
    assert len({n["InstanceId"] for n in nodes}) == 4


def test_node_details_echo_the_group_settings(sm, cluster):
    by_group = {}
    for summary in listed(sm):
        details = sm.describe_cluster_node(ClusterName="c1", NodeId=summary["InstanceId"])["NodeDetails"]
        by_group[details["InstanceGroupName"]] = details
    workers, ctrl = by_group["workers"], by_group["ctrl"]
    assert workers["LifeCycleConfig"] == ctrl["LifeCycleConfig"] == LIFECYCLE
    assert workers["ThreadsPerCore"] == 1 and "ThreadsPerCore" not in ctrl
    assert workers["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": 100}}]
    assert ctrl["CurrentImageId"] == ctrl["DesiredImageId"] == "ami-0123456789abcdef0"
    assert "CurrentImageId" not in workers
    assert workers["InstanceStatus"] == {"Status": "Running"}


def test_errors(backend, sm, cluster):
    node_id = listed(sm)[0]["InstanceId"]

    def rejected(**request):
        with pytest.raises(ClientError) as excinfo:
            sm.describe_cluster_node(**request)
        return error_of(excinfo)

    assert rejected(ClusterName="c1", NodeId="i-0123456789abcdef0") == (
        "ResourceNotFound",
        "Could not find node i-0123456789abcdef0 in cluster c1.",
    )
    assert rejected(ClusterName="c1", NodeLogicalId="workers-000000000000") == (
        "ResourceNotFound",
        "Could not find node with logical id workers-000000000000 in cluster c1.",
    )
    assert rejected(ClusterName="c1") == (
        "ValidationException",
        "Either NodeId or NodeLogicalId must be specified.",
    )
    assert rejected(ClusterName="c1", NodeId=node_id, NodeLogicalId="workers-1") == (
        "ValidationException",
        "Specify either NodeId or NodeLogicalId, but not both.",
    )
    assert rejected(ClusterName="nope", NodeId=node_id)[0] == "ResourceNotFound"
    # A node of another cluster is not found in this one.
    sm.create_cluster(ClusterName="c2", InstanceGroups=[group("g", 1)])
    backend.clock.advance(3600)
    other = sm.list_cluster_nodes(ClusterName="c2")["ClusterNodeSummaries"][0]["InstanceId"]
    assert rejected(ClusterName="c1", NodeId=other)[0] == "ResourceNotFound"


def test_removed_nodes_are_not_found(backend, sm, cluster):
    before = {n["InstanceId"]: n for n in listed(sm)}
    sm.update_cluster(ClusterName="c1", InstanceGroups=[group("workers", 1), group("ctrl", 1)])
    backend.clock.advance(3600)
    after = {n["InstanceId"] for n in listed(sm)}
    assert len(after) == 2 and after < set(before)
    for gone in set(before) - after:
        with pytest.raises(ClientError) as excinfo:
            sm.describe_cluster_node(ClusterName="c1", NodeId=gone)
        assert error_of(excinfo)[0] == "ResourceNotFound"
    sm.delete_cluster(ClusterName="c1")
    for node_id in after:
        with pytest.raises(ClientError) as excinfo:
            sm.describe_cluster_node(ClusterName="c1", NodeId=node_id)
        assert error_of(excinfo)[0] == "ResourceNotFound"


def test_raw_json(backend, sm, cluster):
    node_id = listed(sm)[0]["InstanceId"]

    def call(body):
        return sagemaker_json(backend, "DescribeClusterNode", body)

    status, document = call({"ClusterName": "c1", "NodeId": node_id})
    assert status == 200 and document["NodeDetails"]["InstanceId"] == node_id
    assert isinstance(document["NodeDetails"]["LaunchTime"], (int, float))
    for body in (
        {"ClusterName": "c1", "NodeId": "i-xyz"},
        {"ClusterName": "c1", "NodeId": ""},
        {"ClusterName": "c1", "NodeLogicalId": "-bad-"},
        {"NodeId": node_id},
    ):
        status, document = call(body)
        assert (status, document["__type"]) == (400, "ValidationException"), body


def test_nodes_report_placement_and_capacity_type(backend, sm, cluster):
    """Placement and CapacityType (the model's ClusterCapacityType values) of on-demand and Spot nodes."""
    capacity_types = MODEL.shape_for("ClusterCapacityType").enum
    sm.create_cluster(ClusterName="spot", InstanceGroups=[group("g", 2, CapacityRequirements={"Spot": {}})])
    backend.clock.advance(3600)
    for name, expected in (("c1", "OnDemand"), ("spot", "Spot")):
        for summary in sm.list_cluster_nodes(ClusterName=name)["ClusterNodeSummaries"]:
            response = sm.describe_cluster_node(ClusterName=name, NodeId=summary["InstanceId"])
            assert_conforms("DescribeClusterNode", response)
            details = response["NodeDetails"]
            assert details["CapacityType"] == expected and expected in capacity_types
            # Chosen: on-demand nodes are placed in the region's first zone.
            assert details["Placement"] == {
                "AvailabilityZone": "us-east-1a",
                "AvailabilityZoneId": "use1-az1",
            }


def test_include_node_logical_ids_lists_nodes_still_being_provisioned(backend, sm, cluster):
    """Without the flag only nodes with an instance, and no NodeLogicalId; with it every node."""
    plain = listed(sm)
    assert all("NodeLogicalId" not in n for n in plain)
    with_ids = sm.list_cluster_nodes(ClusterName="c1", IncludeNodeLogicalIds=True)
    assert_conforms("ListClusterNodes", with_ids)
    by_id = {n["InstanceId"]: n["NodeLogicalId"] for n in with_ids["ClusterNodeSummaries"]}
    for summary in plain:
        details = sm.describe_cluster_node(ClusterName="c1", NodeId=summary["InstanceId"])["NodeDetails"]
        assert by_id[summary["InstanceId"]] == details["NodeLogicalId"]
    # A scale-up asks for the new nodes at once: they wait, without an instance, until the update completes.
    sm.update_cluster(ClusterName="c1", InstanceGroups=[group("workers", 5), group("ctrl", 1)])
    assert len(listed(sm)) == 4
    every = sm.list_cluster_nodes(ClusterName="c1", IncludeNodeLogicalIds=True, MaxResults=100)
    assert_conforms("ListClusterNodes", every)
    waiting = [n for n in every["ClusterNodeSummaries"] if n["InstanceStatus"]["Status"] == "Pending"]
    assert len(waiting) == 2 and {n["InstanceId"] for n in waiting} == {""}
    assert all(LOGICAL_ID.fullmatch(n["NodeLogicalId"]) and "PrivateDnsHostname" not in n for n in waiting)
    for node in waiting:
        details = sm.describe_cluster_node(ClusterName="c1", NodeLogicalId=node["NodeLogicalId"])
        assert_conforms("DescribeClusterNode", details)
        assert "InstanceId" not in details["NodeDetails"]
    # Paging with the flag: the token is bound to it.
    first = sm.list_cluster_nodes(ClusterName="c1", IncludeNodeLogicalIds=True, MaxResults=4)
    rest = sm.list_cluster_nodes(
        ClusterName="c1", IncludeNodeLogicalIds=True, MaxResults=4, NextToken=first["NextToken"]
    )
    paged = first["ClusterNodeSummaries"] + rest["ClusterNodeSummaries"]
    assert sorted(n["NodeLogicalId"] for n in paged) == sorted(
        n["NodeLogicalId"] for n in every["ClusterNodeSummaries"]
    )
    with pytest.raises(ClientError) as excinfo:
        sm.list_cluster_nodes(ClusterName="c1", MaxResults=4, NextToken=first["NextToken"])
    assert error_of(excinfo)[0] == "ValidationException"
    backend.clock.advance(3600)
    summaries = sm.list_cluster_nodes(ClusterName="c1", IncludeNodeLogicalIds=True)["ClusterNodeSummaries"]
    assert {n["NodeLogicalId"]: n["InstanceStatus"]["Status"] for n in summaries} == {
        n["NodeLogicalId"]: "Running" for n in every["ClusterNodeSummaries"]
    }


def test_nodes_of_a_cluster_being_created_wait_with_logical_ids(backend, sm):
    sm.create_cluster(ClusterName="new", InstanceGroups=[group("g", 2)])
    assert sm.list_cluster_nodes(ClusterName="new")["ClusterNodeSummaries"] == []
    waiting = sm.list_cluster_nodes(ClusterName="new", IncludeNodeLogicalIds=True)["ClusterNodeSummaries"]
    assert [n["InstanceStatus"]["Status"] for n in waiting] == ["Pending", "Pending"]
    backend.clock.advance(3600)
    running = sm.list_cluster_nodes(ClusterName="new", IncludeNodeLogicalIds=True)["ClusterNodeSummaries"]
    assert [n["NodeLogicalId"] for n in running] == [n["NodeLogicalId"] for n in waiting]
    assert all(NODE_ID.fullmatch(n["InstanceId"]) for n in running)
