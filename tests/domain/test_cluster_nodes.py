"""Cluster node ids and node lookup (domain/cluster_nodes.py)."""

import re
from datetime import datetime, timezone

import pytest

from sagemaker_plans_local.core.errors import InvalidRequest, NotFound
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.clusters.cluster_nodes import find_node, new_node

AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/0123456789ab"
MODEL = service_model()


def pattern(shape):
    return re.compile(MODEL.shape_for(shape).metadata["pattern"])


def test_ids_fit_the_model_are_unique_and_deterministic():
    nodes = [new_node(ARN, "group-1", "ml.m5.large", "eu-west-1", AT, n) for n in range(1, 300)]
    assert len({n.instance_id for n in nodes}) == len({n.logical_id for n in nodes}) == 299
    for node in nodes:
        assert pattern("ClusterNodeId").fullmatch(node.instance_id) and node.instance_id.startswith("i-0")
        assert pattern("ClusterNodeLogicalId").fullmatch(node.logical_id)
        assert pattern("ClusterPrivateDnsHostname").fullmatch(node.private_dns)
        assert pattern("ClusterPrivatePrimaryIp").fullmatch(node.private_ip)
        assert node.private_dns.endswith(".eu-west-1.compute.internal")
    again = new_node(ARN, "group-1", "ml.m5.large", "eu-west-1", AT, 7)
    assert (again.instance_id, again.logical_id) == (nodes[6].instance_id, nodes[6].logical_id)
    assert new_node(ARN, "g", "ml.m5.large", "us-east-1", AT, 1).private_dns == "ip-10-1-0-1.ec2.internal"


def test_find_node_by_either_id_and_errors():
    nodes = [new_node(ARN, "g", "ml.m5.large", "us-east-1", AT, n) for n in (1, 2)]
    assert find_node(nodes, "c", nodes[1].instance_id, None) is nodes[1]
    assert find_node(nodes, "c", None, nodes[0].logical_id) is nodes[0]
    with pytest.raises(NotFound, match="Could not find node i-0123456789abcdef0 in cluster c."):
        find_node(nodes, "c", "i-0123456789abcdef0", None)
    with pytest.raises(NotFound, match="logical id"):
        find_node(nodes, "c", None, nodes[0].instance_id)
    with pytest.raises(InvalidRequest):
        find_node(nodes, "c", None, None)
    with pytest.raises(InvalidRequest):
        find_node(nodes, "c", nodes[0].instance_id, nodes[0].logical_id)
