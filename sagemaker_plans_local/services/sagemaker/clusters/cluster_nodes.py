"""HyperPod cluster nodes: their identifiers and how DescribeClusterNode finds one.

- Instance ids look like EC2's: ``i-0`` + 16 lowercase hex digits (17 hex digits in
  all, as the model's ``ClusterNodeId`` pattern ``i-[a-f0-9]{8}(?:[a-f0-9]{9})?``
  allows). Chosen: a digest of the cluster ARN and a per-region node counter, so the
  same calls on a fresh backend give the same ids; ListClusterNodes and
  DescribeClusterNode report the same id for a node.
- Chosen: ``NodeLogicalId`` is ``<instance group>-`` + 12 hex digits (the model's
  ``ClusterNodeLogicalId`` pattern), fixed for the node's life.
- Chosen: the private DNS name is ``ip-10-a-b-c.ec2.internal`` in us-east-1,
  ``ip-10-a-b-c.<region>.compute.internal`` elsewhere, and the private IPv4
  address is ``10.a.b.c``.
- DescribeClusterNode takes either ``NodeId`` or ``NodeLogicalId``, not both (the
  model's documentation); chosen: neither, or both, is a ``ValidationException``. A
  node the cluster does not have (also one already removed) is ``ResourceNotFound``.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Iterable

import attrs

from sagemaker_plans_local.core.errors import InvalidRequest, NotFound
from sagemaker_plans_local.services.sagemaker.statuses import NodeStatus


@attrs.define(eq=False)
class Node:
    """One instance of an instance group."""

    instance_id: str
    group_name: str
    instance_type: str
    launch_time: datetime
    sequence: int
    private_dns: str
    logical_id: str = ""
    status: NodeStatus = NodeStatus.RUNNING

    @property
    def private_ip(self) -> str:
        """The IPv4 address the private DNS name spells (``ip-10-1-2-3...`` → ``10.1.2.3``)."""
        return self.private_dns.split(".", 1)[0].removeprefix("ip-").replace("-", ".")


def new_node(
    cluster_arn: str, group_name: str, instance_type: str, region: str, at: datetime, sequence: int
) -> Node:
    """The ``sequence``-th node of a region, launched at ``at`` in a group of ``cluster_arn``."""
    digest = hashlib.sha1(f"{cluster_arn}/{sequence}".encode()).hexdigest()
    suffix = "ec2.internal" if region == "us-east-1" else f"{region}.compute.internal"
    dns = f"ip-10-{1 + sequence // 65536 % 254}-{sequence // 256 % 256}-{sequence % 256}.{suffix}"
    return Node(
        f"i-0{digest[:16]}",
        group_name,
        instance_type,
        at,
        sequence,
        dns,
        logical_id=f"{group_name}-{digest[16:28]}",
    )


def find_node(nodes: Iterable[Node], cluster_name: str, node_id: str | None, logical_id: str | None) -> Node:
    """The node with ``node_id`` (or ``logical_id``) among ``nodes`` of the named cluster."""
    if node_id is None and logical_id is None:
        raise InvalidRequest("Either NodeId or NodeLogicalId must be specified.")
    if node_id is not None and logical_id is not None:
        raise InvalidRequest("Specify either NodeId or NodeLogicalId, but not both.")
    for node in nodes:
        if (node.instance_id if node_id is not None else node.logical_id) == (node_id or logical_id):
            return node
    kind, wanted = ("node", node_id) if node_id is not None else ("node with logical id", logical_id)
    raise NotFound(f"Could not find {kind} {wanted} in cluster {cluster_name}.")
