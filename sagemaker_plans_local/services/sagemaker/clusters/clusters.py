"""SageMaker HyperPod clusters, as far as instance groups on training plans need them.

The rules, AWS's and the choices (marked "chosen"), are listed in docs/training-plans.md
("HyperPod clusters on a plan"); node ids in ``cluster_nodes.py``, request checks in
``cluster_rules.py``. In short:

- Clusters: ``Creating`` → ``InService`` after ``settings.cold_start_seconds``;
  UpdateCluster: ``Updating`` → ``InService`` after the same delay, allowed only when
  ``InService`` (``ConflictException``); DeleteCluster: ``Deleting``, gone
  ``DELETE_SECONDS`` later, every node and plan allocation released at once.
  Chosen: ARN ids are 12 hex digits of a digest (deterministic per backend).
- Nodes are asked for (``Pending``, a logical id, no instance) when their group is
  created or scaled up, and launched (``Running``) when the group is ``InService``:
  on-demand groups at once, groups on a plan while a block of the plan is active,
  taking instances from it (consumer ``cluster:<cluster>/<group>``) all at once or
  not at all, retried in creation order whenever a block starts or instances of the
  plan are released. One hour before a block ends the nodes lose their instances
  (back to ``Pending``), and get new ones in the next block.
- UpdateCluster: a group's request replaces the old one; its ``TrainingPlanArn`` is
  the plan from now on (AWS's "Update a SageMaker HyperPod cluster on training plans":
  a plan can be added, updated or removed; leaving it out removes it). Chosen: the
  group is ``Updating`` until the update completes; then the move happens: its nodes'
  instances are given back to the old plan (or on-demand capacity) and the same
  nodes (same logical ids) get new instances from the new plan (or on demand), and
  the count changes (a scale down removes waiting nodes first, then the newest).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import operator
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Iterator, Mapping

from sagemaker_plans_local.core.arns import partition
from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.errors import Conflict, InUse, InvalidRequest, NotFound
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.core.store import Position, Table
from sagemaker_plans_local.services.sagemaker.clusters.cluster_nodes import (
    new_instance,
    new_node,
    wants_spot,
)
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
from sagemaker_plans_local.services.sagemaker.plans.zones import availability_zones
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
        self._zones = availability_zones(region)
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
            cluster.groups[group_spec["InstanceGroupName"]] = self._new_group(cluster, group_spec, plan, now)
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
        """Apply a valid UpdateCluster request: new and added nodes are asked for at once."""
        now = self._clock.now()
        cluster.status = ClusterStatus.UPDATING
        cluster.last_modified = now
        settings = {k: v for k, v in spec.items() if k not in _NOT_SETTINGS}
        cluster.settings.update(settings)
        released: set[str] = set()
        for name in to_delete:
            group = cluster.groups[name]
            group.status = InstanceGroupStatus.DELETING
            held = group.held
            if self._drop_nodes(cluster, group) and held is not None:
                released.add(held.arn)
        for group_spec, existing, plan in changes:
            if existing is None:
                name = group_spec["InstanceGroupName"]
                cluster.groups[name] = self._new_group(cluster, group_spec, plan, now)
            else:
                existing.spec, existing.plan = group_spec, plan
                existing.status = InstanceGroupStatus.UPDATING
                self._ask_for_nodes(cluster, existing, now)
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
            held = group.held
            if self._drop_nodes(cluster, group) and held is not None:
                released.append(held)
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
        freed: list[TrainingPlan] = []
        for group in cluster.groups.values():
            group.status = InstanceGroupStatus.IN_SERVICE
            freed += self._settle(cluster, group)
        for group in list(cluster.groups.values()):
            self._provision(cluster, group, at)
        for plan in dict.fromkeys(freed):
            self._retry(plan, at)

    def _settle(self, cluster: Cluster, group: InstanceGroup) -> list[TrainingPlan]:
        """Move the group onto its requested plan (or off it) and to its InstanceCount.

        A move takes every node's instance back (the nodes wait for new ones); a scale
        down removes nodes still waiting first, then the newest. Returns the plans
        whose instances were given back.
        """
        freed = []
        if group.held is not group.plan:
            if self._take_back(cluster, group, group.held) and group.held is not None:
                freed.append(group.held)
            group.held = group.plan
        surplus = len(group.nodes) - group.instance_count
        if surplus > 0:
            order = sorted(group.nodes, key=lambda n: (n.instance is None, n.sequence), reverse=True)
            gone = set(map(id, order[:surplus]))
            group.nodes = [node for node in group.nodes if id(node) not in gone]
            key = consumer_key(cluster, group)
            if group.held is not None and key in group.held.consumers:
                self._plans.release(group.held, key, keep=group.current_count)
                freed.append(group.held)
        return freed

    def _provision(self, cluster: Cluster, group: InstanceGroup, at: datetime) -> None:
        """Launch the group's waiting nodes, all at once, as far as its plan allows."""
        pending = group.pending
        if not pending or cluster.status == ClusterStatus.DELETING:
            return
        if group.status != InstanceGroupStatus.IN_SERVICE:
            return
        zone = self._zones[0]
        servers: Iterator[tuple[str, str]] = iter(())
        if group.held is not None:
            rc = self._plans.allocate(group.held, consumer_key(cluster, group), len(pending), at)
            if rc is None:
                return
            zone, servers = rc.availability_zone, self._ultra_server_slots(group.held, rc)
        for node in pending:
            sequence = next(self._node_sequence)
            instance = new_instance(cluster.arn, self._region, zone, at, sequence, wants_spot(group.spec))
            instance.ultra_server = next(servers, None)
            node.instance = instance

    def _ultra_server_slots(self, plan: TrainingPlan, rc: ReservedCapacity) -> Iterator[tuple[str, str]]:
        """Free places on the block's UltraServers, first server first: each holds its instances
        less the plan's spares (chosen), counting the nodes already on it."""
        ultra = plan.capacity.ultra_server
        if ultra is None:
            return
        taken = Counter(
            node.instance.ultra_server[0]
            for _, group in self._groups_on(plan, held=True)
            for node in group.nodes
            if node.instance is not None and node.instance.ultra_server is not None
        )
        for server in rc.ultra_servers:
            for _ in range(ultra.instances - plan.spares_per_ultra_server - taken[server]):
                yield server, ultra.name

    def _ask_for_nodes(self, cluster: Cluster, group: InstanceGroup, at: datetime) -> None:
        """Add waiting nodes up to the group's InstanceCount."""
        for _ in range(group.instance_count - len(group.nodes)):
            sequence = next(self._node_sequence)
            group.nodes.append(new_node(cluster.arn, group.name, group.instance_type, at, sequence))

    def _new_group(
        self, cluster: Cluster, spec: dict, plan: TrainingPlan | None, at: datetime
    ) -> InstanceGroup:
        group = InstanceGroup(spec["InstanceGroupName"], spec, plan)
        self._ask_for_nodes(cluster, group, at)
        return group

    def _take_back(self, cluster: Cluster, group: InstanceGroup, plan: TrainingPlan | None) -> bool:
        """The group's nodes lose their instances (of ``plan``; None: on demand); True if the plan
        got instances back."""
        for node in group.nodes:
            node.instance = None
        key = consumer_key(cluster, group)
        if plan is not None and key in plan.consumers:
            self._plans.release(plan, key)
            return True
        return False

    def _drop_nodes(self, cluster: Cluster, group: InstanceGroup) -> bool:
        """Remove the group's nodes; True if plan instances were given back."""
        given_back = self._take_back(cluster, group, group.held)
        group.nodes.clear()
        return given_back

    def _groups_on(self, plan: TrainingPlan, held: bool = False) -> list[tuple[Cluster, InstanceGroup]]:
        """Groups requesting ``plan`` (``held``: whose nodes hold its instances), in creation order."""
        return [
            (cluster, group)
            for cluster in sorted(self._clusters, key=lambda c: c.sequence)
            for group in cluster.groups.values()
            if (group.held if held else group.plan) is plan
        ]

    def _retry(self, plan: TrainingPlan, at: datetime) -> None:
        """Give freed instances of ``plan`` to groups still missing some, in creation order."""
        for cluster, group in self._groups_on(plan):
            self._provision(cluster, group, at)

    def _on_plan_event(
        self, plan: TrainingPlan, event: PlanEvent, rc: ReservedCapacity, at: datetime
    ) -> None:
        if plan.target != PlanTarget.HYPERPOD_CLUSTER:
            return
        if event == PlanEvent.ACTIVE:
            self._retry(plan, at)
        elif event in (PlanEvent.CUTOFF, PlanEvent.ENDED):
            for cluster, group in self._groups_on(plan, held=True):
                self._take_back(cluster, group, plan)

    # -- helpers -----------------------------------------------------------------
    def _arn(self, name: str, sequence: int) -> str:
        digest = hashlib.sha1(f"{self._region}/{self._account_id}/{sequence}/{name}".encode()).hexdigest()
        return (
            f"arn:{partition(self._region)}:sagemaker:{self._region}:{self._account_id}:cluster/{digest[:12]}"
        )
