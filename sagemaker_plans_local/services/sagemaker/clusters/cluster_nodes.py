"""HyperPod cluster nodes: their identifiers, their instances and how DescribeClusterNode finds one.

- A node is asked for when its group is created or scaled up; it has a ``NodeLogicalId``
  at once and an instance (``InstanceId``, ``LaunchTime``, address) only once it is
  launched. The logical id "persists throughout its lifecycle, from provisioning
  request to termination" and "does not change between instance replacements" (the
  API reference's ClusterNodeSummary and BatchAddClusterNodes); chosen: a node whose
  instance is taken back (a plan block's cutoff) or replaced (its group moved onto or
  off a training plan) keeps its logical id and gets a new instance id.
- Instance ids look like EC2's: ``i-0`` + 16 lowercase hex digits (17 hex digits in
  all, as the model's ``ClusterNodeId`` pattern ``i-[a-f0-9]{8}(?:[a-f0-9]{9})?``
  allows). Chosen: a digest of the cluster ARN and a per-region counter, so the
  same calls on a fresh backend give the same ids; ListClusterNodes and
  DescribeClusterNode report the same id for a node.
- Chosen: ``NodeLogicalId`` is ``<instance group>-`` + 12 hex digits (the model's
  ``ClusterNodeLogicalId`` pattern), fixed for the node's life.
- Chosen: the private DNS name is ``ip-10-a-b-c.ec2.internal`` in us-east-1,
  ``ip-10-a-b-c.<region>.compute.internal`` elsewhere, and the private IPv4
  address is ``10.a.b.c``.
- DescribeClusterNode takes either ``NodeId`` or ``NodeLogicalId``, not both (the
  model's documentation); chosen: neither, or both, is a ``ValidationException``. A
  node the cluster does not have (also one already removed) is ``ResourceNotFound``;
  a node still without an instance is found by its logical id only.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Iterable, Mapping

import attrs

from sagemaker_plans_local.core.errors import InvalidRequest, NotFound
from sagemaker_plans_local.services.sagemaker.statuses import NodeStatus


@attrs.define(eq=False)
class Instance:
    """The instance a node runs on, from its launch until it is taken back."""

    instance_id: str
    launch_time: datetime
    private_dns: str
    availability_zone: str
    spot: bool = False
    #: (UltraServer id, UltraServer type) of an instance of an UltraServer plan.
    ultra_server: tuple[str, str] | None = None

    @property
    def private_ip(self) -> str:
        """The IPv4 address the private DNS name spells (``ip-10-1-2-3...`` → ``10.1.2.3``)."""
        return self.private_dns.split(".", 1)[0].removeprefix("ip-").replace("-", ".")


@attrs.define(eq=False)
class Node:
    """One node of an instance group: asked for at ``requested_at``, running once it has an instance."""

    logical_id: str
    group_name: str
    instance_type: str
    requested_at: datetime
    sequence: int
    instance: Instance | None = None

    @property
    def status(self) -> NodeStatus:
        return NodeStatus.PENDING if self.instance is None else NodeStatus.RUNNING

    @property
    def instance_id(self) -> str | None:
        return self.instance.instance_id if self.instance is not None else None

    @property
    def launch_time(self) -> datetime | None:
        return self.instance.launch_time if self.instance is not None else None

    @property
    def created_at(self) -> datetime:
        """When the node's instance was launched; when it was asked for while it has none."""
        return self.instance.launch_time if self.instance is not None else self.requested_at


def new_node(cluster_arn: str, group_name: str, instance_type: str, at: datetime, sequence: int) -> Node:
    """The ``sequence``-th node of a region, asked for at ``at`` in a group of ``cluster_arn``."""
    digest = hashlib.sha1(f"{cluster_arn}/{sequence}".encode()).hexdigest()
    return Node(f"{group_name}-{digest[16:28]}", group_name, instance_type, at, sequence)


def wants_spot(group_spec: Mapping) -> bool:
    """Whether an instance group's request asks for Spot capacity (``CapacityRequirements.Spot``)."""
    return "Spot" in (group_spec.get("CapacityRequirements") or {})


def new_instance(
    cluster_arn: str, region: str, zone: str, at: datetime, sequence: int, spot: bool = False
) -> Instance:
    """The ``sequence``-th instance of a region, launched at ``at`` in ``zone``."""
    digest = hashlib.sha1(f"{cluster_arn}/{sequence}".encode()).hexdigest()
    suffix = "ec2.internal" if region == "us-east-1" else f"{region}.compute.internal"
    dns = f"ip-10-{1 + sequence // 65536 % 254}-{sequence // 256 % 256}-{sequence % 256}.{suffix}"
    return Instance(f"i-0{digest[:16]}", at, dns, zone, spot)


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
