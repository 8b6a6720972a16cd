"""SageMaker HyperPod clusters, as far as instance groups on training plans need them.

Rules (AWS-documented ones first, then the choices of sagemaker-plans-local,
marked "chosen"):

Clusters
- ARN ``arn:aws:sagemaker:<region>:<account>:cluster/<id>``; chosen: ``<id>`` is
  12 lowercase hex digits of a digest of (region, account, a per-region
  counter, name), so the same calls on a fresh backend give the same ARNs.
- Names are unique per region; CreateCluster with a taken name (also one
  still ``Deleting``) is ``ResourceInUse``. DescribeCluster, UpdateCluster,
  DeleteCluster and ListClusterNodes take the name or the ARN; an unknown one
  is ``ResourceNotFound``.
- Status: ``Creating`` → ``InService`` after ``settings.cold_start_seconds``;
  UpdateCluster: ``Updating`` → ``InService`` after the same delay; DeleteCluster:
  ``Deleting``, and chosen: the cluster is gone (``ResourceNotFound``) 60 s
  (``DELETE_SECONDS``) later. ``Failed``/``RollingBack``/``SystemUpdating`` never occur.
- Chosen: DeleteCluster is allowed while ``Creating``, ``Updating`` or
  ``InService`` (it cancels the pending create/update); on a cluster already
  ``Deleting`` it is a ``ConflictException``. UpdateCluster is allowed only
  when ``InService``; otherwise ``ConflictException`` (both errors are in the
  model for these operations).
- Chosen: at DeleteCluster every node goes away at once and every training-plan
  allocation of the cluster is released at once (so other groups on those
  plans can take the instances); the cluster stays describable, ``Deleting``,
  with its groups ``Deleting`` and ``CurrentCount`` 0, until it is gone.
- Chosen: ``InstanceGroups`` is required on CreateCluster (the model makes it
  optional), ``RestrictedInstanceGroups`` and per-group ``InstanceRequirements``
  are not supported (``ValidationException``), and every group needs an
  ``InstanceType``. ``Tags`` are listed by ListTags (``domain/tags.py``).
- Chosen: ``NodeRecovery`` is reported as given, ``Automatic`` when not given.

Instance groups
- ``InstanceGroupName`` is unique within the cluster (``ValidationException``).
  Groups are ``Creating`` while the cluster is, ``InService`` afterwards.
  ``TargetCount`` is the group's ``InstanceCount``, ``CurrentCount`` its nodes.
- Groups without ``TrainingPlanArn`` get ``InstanceCount`` ``Running`` nodes when
  they become ``InService`` (LaunchTime = that moment).
- Groups with ``TrainingPlanArn``: the plan must exist in the region
  (``ResourceNotFound``), target ``hyperpod-cluster``, have the group's instance
  type, at least the group's ``InstanceCount`` instances, and be ``Scheduled``
  or ``Active`` (the guide's training-plan-utilization-for-hyperpod page)
  (otherwise ``ValidationException``; the last check applies to new groups only).
  The group is ``InService`` even before the plan is ``Active``; ``TrainingPlanStatus`` shows the plan's status.
- Such a group has nodes only while a block of its plan is active: when the
  group is ``InService`` and the plan has an active block, it takes
  ``InstanceCount`` instances from the plan (consumer
  ``cluster:<cluster>/<group>``), which then count in the plan's
  ``InUseInstanceCount``, and gets that many ``Running`` nodes launched at that
  moment. One hour before the block ends (the plan's HyperPod cutoff) its nodes
  are removed and the instances given back; they come back when the plan's
  next block becomes active.
- Chosen: groups (of one or several clusters) on the same plan share its
  instances. A group takes all the instances it is missing at once or none
  (no partial groups). A group still missing instances retries, in the order
  the clusters and groups were created, whenever a block of its plan becomes
  active and whenever another group releases instances of that plan (scale
  down, group deletion, cluster deletion). Several groups in one request may
  name the same plan even if together they need more than it holds.
- Chosen: nodes are removed at once (no ``ShuttingDown`` state is shown).

UpdateCluster
- ``InstanceGroups`` naming an existing group change it: chosen, the new
  group request replaces the old one (members left out are no longer
  reported), so the ``InstanceCount`` and echoed settings change; new names add
  groups (same checks as CreateCluster). Cluster-level settings given
  (``NodeRecovery``, ``TieredStorageConfig``, ``AutoScaling``, ...) replace the
  old ones. Chosen: a request that changes nothing is accepted and still goes
  through ``Updating``.
  Chosen: an existing group's ``InstanceType`` and ``TrainingPlanArn`` cannot
  change (``ValidationException``; leaving either out keeps it) and
  its new ``InstanceCount`` must not exceed its plan's instances.
- ``InstanceGroupsToDelete`` removes groups; an unknown name, or a name also
  listed in ``InstanceGroups``, is a ``ValidationException``. Chosen: a deleted
  group's nodes go and its plan instances are released at once; it is shown
  ``Deleting`` until the update completes, then disappears.
- Chosen: changed groups are ``Updating`` and new groups ``Creating`` while the
  cluster is ``Updating``; new counts (scale up or down, newest nodes removed
  first) apply when the update completes.
- A rejected request changes nothing.

ListClusterNodes
- Node ids and logical ids: see ``domain/cluster_nodes.py``; every node
  listed is ``Running``. Chosen: ``CreationTimeAfter``/``CreationTimeBefore``
  compare the node's ``LaunchTime`` (strictly), ``InstanceGroupNameContains`` is
  a case-sensitive substring, ``SortBy`` ``NAME`` sorts by instance group name
  (then launch order), ``CREATION_TIME`` (default) by ``LaunchTime``.
  ``IncludeNodeLogicalIds`` is accepted and ignored.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import operator
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Iterator, Mapping

from sagemaker_plans_local.core.arns import partition
from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.errors import Conflict, InUse, InvalidRequest, NotFound
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.core.store import Position, Table
from sagemaker_plans_local.services.sagemaker.clusters.cluster_nodes import Node, new_node
from sagemaker_plans_local.services.sagemaker.clusters.cluster_records import (
    Cluster,
    InstanceGroup,
    consumer_key,
)
from sagemaker_plans_local.services.sagemaker.clusters.cluster_rules import (
    NO_RESTRICTED_GROUPS,
    GroupChange,
    check_deletions,
    check_unique,
    group_changes,
    plan_for,
)
from sagemaker_plans_local.services.sagemaker.plans.offerings import PlanTarget
from sagemaker_plans_local.services.sagemaker.plans.plan_records import PlanEvent
from sagemaker_plans_local.services.sagemaker.plans.training_plans import (
    ReservedCapacity,
    TrainingPlan,
    TrainingPlans,
)
from sagemaker_plans_local.services.sagemaker.statuses import (
    ClusterStatus,
    InstanceGroupStatus,
)

#: How long a deleted cluster stays ``Deleting`` before it is gone (chosen).
DELETE_SECONDS = 60


#: The sorted indexes of the cluster table (names are case-sensitive: the ARN holds an id, not the name).
def _created(cluster: Cluster) -> float:
    return cluster.created_at.timestamp()


CLUSTER_INDEXES: dict[str, Callable[[Cluster], Any]] = {
    "created": _created,
    "name": operator.attrgetter("name"),
}
DEFAULT_NODE_RECOVERY = "Automatic"
#: Request members that are not cluster settings (kept elsewhere or not reported).
_NOT_SETTINGS = (
    "ClusterName",
    "InstanceGroups",
    "InstanceGroupsToDelete",
    "Tags",
    "RestrictedInstanceGroups",
)


class Clusters:
    """The HyperPod clusters of one region."""

    def __init__(
        self, clock: VirtualClock, settings: Settings, region: str, account_id: str, plans: TrainingPlans
    ) -> None:
        self._clock = clock
        self._settings = settings
        self._region = region
        self._account_id = account_id
        self._plans = plans
        self._clusters: Table[Cluster] = Table(CLUSTER_INDEXES)
        self._sequence = itertools.count(1)
        self._node_sequence = itertools.count(1)
        plans.subscribe(self._on_plan_event)

    # -- queries -------------------------------------------------------------
    def get(self, name_or_arn: str) -> Cluster:
        if name_or_arn.startswith("arn:"):
            cluster = next((c for c in self._clusters if c.arn == name_or_arn), None)
        else:
            cluster = self._clusters.get(name_or_arn)
        if cluster is None:
            raise NotFound(f"Cluster {name_or_arn} not found.")
        return cluster

    def all(self) -> Iterable[Cluster]:
        return iter(self._clusters)

    def scan(
        self, index: str, descending: bool = False, after: Position | None = None
    ) -> Iterator[tuple[Position, Cluster]]:
        """Clusters in the order of one of ``CLUSTER_INDEXES``, resuming after ``after``."""
        return self._clusters.scan(index, descending, after)

    # -- operations ------------------------------------------------------------
    def create(self, spec: Mapping) -> Cluster:
        """Create a cluster from a validated CreateCluster request."""
        name = spec["ClusterName"]
        existing = self._clusters.get(name)
        if existing is not None:
            raise InUse(
                "Cluster names must be unique within an AWS account and region, and a "
                f"cluster with this name already exists ({existing.arn})"
            )
        if spec.get("RestrictedInstanceGroups"):
            raise InvalidRequest(NO_RESTRICTED_GROUPS)
        group_specs = spec.get("InstanceGroups") or []
        if not group_specs:
            raise InvalidRequest("InstanceGroups must contain at least one instance group.")
        check_unique([g["InstanceGroupName"] for g in group_specs])
        planned = [(dict(g), plan_for(self._plans, g, new=True)) for g in group_specs]
        now = self._clock.now()
        sequence = next(self._sequence)
        cluster = Cluster(
            name,
            self._arn(name, sequence),
            now,
            sequence,
            settings={k: v for k, v in spec.items() if k not in _NOT_SETTINGS},
            last_modified=now,
        )
        cluster.settings.setdefault("NodeRecovery", DEFAULT_NODE_RECOVERY)
        for group_spec, plan in planned:
            cluster.groups[group_spec["InstanceGroupName"]] = InstanceGroup(
                group_spec["InstanceGroupName"], group_spec, plan
            )
        self._clusters.put(name, cluster)
        self._schedule_ready(cluster, now)
        return cluster

    def update(self, name_or_arn: str, spec: Mapping) -> Cluster:
        """Apply a validated UpdateCluster request."""
        cluster = self.get(name_or_arn)
        if cluster.status != ClusterStatus.IN_SERVICE:
            raise Conflict(
                f"Cluster {cluster.name} is {cluster.status}; it can be updated only when it is InService."
            )
        group_specs = spec.get("InstanceGroups") or []
        to_delete = list(spec.get("InstanceGroupsToDelete") or [])
        names = [g["InstanceGroupName"] for g in group_specs]
        check_unique(names)
        check_deletions(cluster, to_delete, names)
        if spec.get("RestrictedInstanceGroups"):
            raise InvalidRequest(NO_RESTRICTED_GROUPS)
        changes = group_changes(self._plans, cluster, group_specs)
        self._apply_update(cluster, spec, to_delete, changes)
        return cluster

    def _apply_update(
        self, cluster: Cluster, spec: Mapping, to_delete: list[str], changes: list[GroupChange]
    ) -> None:
        """Apply a valid UpdateCluster request."""
        now = self._clock.now()
        cluster.status = ClusterStatus.UPDATING
        cluster.last_modified = now
        settings = {k: v for k, v in spec.items() if k not in _NOT_SETTINGS}
        cluster.settings.update(settings)
        released: set[str] = set()
        for name in to_delete:
            group = cluster.groups[name]
            group.status = InstanceGroupStatus.DELETING
            if self._drop_nodes(cluster, group) and group.plan is not None:
                released.add(group.plan.arn)
        for group_spec, existing, plan in changes:
            if existing is None:
                name = group_spec["InstanceGroupName"]
                cluster.groups[name] = InstanceGroup(name, group_spec, plan)
            else:
                existing.spec = group_spec
                existing.status = InstanceGroupStatus.UPDATING
        self._schedule_ready(cluster, now)
        for arn in released:
            self._retry(self._plans.get(arn), now)

    def delete(self, name_or_arn: str) -> Cluster:
        cluster = self.get(name_or_arn)
        if cluster.status == ClusterStatus.DELETING:
            raise Conflict(f"Cluster {cluster.name} is already being deleted.")
        now = self._clock.now()
        for event in cluster.events:
            event.cancel()
        cluster.events.clear()
        cluster.status = ClusterStatus.DELETING
        cluster.last_modified = now
        released = []
        for group in cluster.groups.values():
            group.status = InstanceGroupStatus.DELETING
            if self._drop_nodes(cluster, group) and group.plan is not None:
                released.append(group.plan)
        cluster.events.append(
            self._clock.schedule(
                now + self._service_time(DELETE_SECONDS), functools.partial(self._deleted, cluster.name)
            )
        )
        for plan in dict.fromkeys(released):
            self._retry(plan, now)
        return cluster

    # -- lifecycle -------------------------------------------------------------
    def _service_time(self, seconds: float) -> timedelta:
        return timedelta(seconds=self._settings.service_seconds(seconds, self._clock.manual))

    def _schedule_ready(self, cluster: Cluster, now: datetime) -> None:
        delay = self._service_time(self._settings.cold_start_seconds)
        cluster.events.append(self._clock.schedule(now + delay, functools.partial(self._ready, cluster)))

    def _deleted(self, name: str, at: datetime) -> None:
        self._clusters.delete(name)

    def _ready(self, cluster: Cluster, at: datetime) -> None:
        """A create or update completes: the cluster and its groups are InService."""
        cluster.events = [event for event in cluster.events if not event.cancelled and event.at > at]
        cluster.status = ClusterStatus.IN_SERVICE
        cluster.last_modified = at
        for name in [n for n, g in cluster.groups.items() if g.status == InstanceGroupStatus.DELETING]:
            del cluster.groups[name]
        for group in cluster.groups.values():
            group.status = InstanceGroupStatus.IN_SERVICE
        for group in list(cluster.groups.values()):
            self._provision(cluster, group, at)

    def _provision(self, cluster: Cluster, group: InstanceGroup, at: datetime) -> None:
        """Bring the group's nodes to its InstanceCount, as far as its plan allows."""
        if cluster.status == ClusterStatus.DELETING or group.status != InstanceGroupStatus.IN_SERVICE:
            return
        held, target = group.current_count, group.instance_count
        plan = group.plan
        if target < held:
            del group.nodes[target:]
            if plan is not None:
                key = consumer_key(cluster, group)
                self._plans.release(plan, key)
                if target and self._plans.allocate(plan, key, target, at) is None:
                    group.nodes.clear()  # cannot happen while the block runs; stay consistent anyway
                self._retry(plan, at)
        elif target > held:
            if (
                plan is not None
                and self._plans.allocate(plan, consumer_key(cluster, group), target - held, at) is None
            ):
                return
            for _ in range(target - held):
                group.nodes.append(self._new_node(cluster, group, at))

    def _drop_nodes(self, cluster: Cluster, group: InstanceGroup) -> bool:
        """Remove the group's nodes; True if plan instances were given back."""
        group.nodes.clear()
        if group.plan is not None and consumer_key(cluster, group) in group.plan.consumers:
            self._plans.release(group.plan, consumer_key(cluster, group))
            return True
        return False

    def _groups_on(self, plan: TrainingPlan) -> list[tuple[Cluster, InstanceGroup]]:
        return [
            (cluster, group)
            for cluster in sorted(self._clusters, key=lambda c: c.sequence)
            for group in cluster.groups.values()
            if group.plan is plan
        ]

    def _retry(self, plan: TrainingPlan, at: datetime) -> None:
        """Give freed instances of ``plan`` to groups still missing some, in creation order."""
        for cluster, group in self._groups_on(plan):
            if group.current_count < group.instance_count:
                self._provision(cluster, group, at)

    def _on_plan_event(
        self, plan: TrainingPlan, event: PlanEvent, rc: ReservedCapacity, at: datetime
    ) -> None:
        if plan.target != PlanTarget.HYPERPOD_CLUSTER:
            return
        if event == PlanEvent.ACTIVE:
            self._retry(plan, at)
        elif event in (PlanEvent.CUTOFF, PlanEvent.ENDED):
            for cluster, group in self._groups_on(plan):
                self._drop_nodes(cluster, group)

    # -- helpers -----------------------------------------------------------------
    def _arn(self, name: str, sequence: int) -> str:
        digest = hashlib.sha1(f"{self._region}/{self._account_id}/{sequence}/{name}".encode()).hexdigest()
        return (
            f"arn:{partition(self._region)}:sagemaker:{self._region}:{self._account_id}:cluster/{digest[:12]}"
        )

    def _new_node(self, cluster: Cluster, group: InstanceGroup, at: datetime) -> Node:
        return new_node(
            cluster.arn, group.name, group.instance_type, self._region, at, next(self._node_sequence)
        )
