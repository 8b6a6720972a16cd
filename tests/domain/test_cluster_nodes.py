"""Cluster node ids and node lookup (domain/cluster_nodes.py)."""

import re
from datetime import datetime, timezone

import pytest

from sagemaker_plans_local.core.errors import InvalidRequest, NotFound
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.clusters.cluster_nodes import (
    find_node,
    new_instance,
    new_node,
)

AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/0123456789ab"
MODEL = service_model()


def pattern(shape):
    return re.compile(MODEL.shape_for(shape).metadata["pattern"])


def launched(group, region, sequence):
    node = new_node(ARN, group, "ml.m5.large", AT, sequence)
    node.instance = new_instance(ARN, region, region + "a", AT, sequence)
    return node


def test_ids_fit_the_model_are_unique_and_deterministic():
    nodes = [launched("group-1", "eu-west-1", n) for n in range(1, 300)]
    assert len({n.instance_id for n in nodes}) == len({n.logical_id for n in nodes}) == 299
    for node in nodes:
        assert pattern("ClusterNodeId").fullmatch(node.instance_id) and node.instance_id.startswith("i-0")
        assert pattern("ClusterNodeLogicalId").fullmatch(node.logical_id)
        assert pattern("ClusterPrivateDnsHostname").fullmatch(node.instance.private_dns)
        assert pattern("ClusterPrivatePrimaryIp").fullmatch(node.instance.private_ip)
        assert node.instance.private_dns.endswith(".eu-west-1.compute.internal")
    again = launched("group-1", "eu-west-1", 7)
    assert (again.instance_id, again.logical_id) == (nodes[6].instance_id, nodes[6].logical_id)
    assert launched("g", "us-east-1", 1).instance.private_dns == "ip-10-1-0-1.ec2.internal"


def test_a_node_is_pending_until_it_has_an_instance():
    node = new_node(ARN, "g", "ml.m5.large", AT, 1)
    assert (node.status, node.instance_id, node.launch_time, node.created_at) == ("Pending", None, None, AT)
    assert pattern("ClusterNodeLogicalId").fullmatch(node.logical_id)
    later = datetime(2026, 1, 2, tzinfo=timezone.utc)
    node.instance = new_instance(ARN, "us-east-1", "us-east-1a", later, 2)
    assert (node.status, node.launch_time, node.created_at) == ("Running", later, later)


def test_find_node_by_either_id_and_errors():
    nodes = [launched("g", "us-east-1", n) for n in (1, 2)]
    pending = new_node(ARN, "g", "ml.m5.large", AT, 3)
    nodes.append(pending)
    assert find_node(nodes, "c", nodes[1].instance_id, None) is nodes[1]
    assert find_node(nodes, "c", None, nodes[0].logical_id) is nodes[0]
    assert find_node(nodes, "c", None, pending.logical_id) is pending
    with pytest.raises(NotFound, match="Could not find node i-0123456789abcdef0 in cluster c."):
        find_node(nodes, "c", "i-0123456789abcdef0", None)
    with pytest.raises(NotFound, match="logical id"):
        find_node(nodes, "c", None, nodes[0].instance_id)
    with pytest.raises(InvalidRequest):
        find_node(nodes, "c", None, None)
    with pytest.raises(InvalidRequest):
        find_node(nodes, "c", nodes[0].instance_id, nodes[0].logical_id)
