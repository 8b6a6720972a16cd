"""UpdateCluster adds, replaces and removes an instance group's training plan (issue 18, item 1).

AWS's "Update a SageMaker HyperPod cluster on training plans": "You can add, update, or remove
a training plan by updating the instance group of an existing cluster". Through boto3 on a
manual clock, and raw JSON for bad input.
"""

from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.backend import LocalBackend
from tests.api.test_clusters_api import group as cluster_group
from tests.conformance import assert_conforms
from tests.conftest import START
from tests.raw_requests import sagemaker_json

P5 = "ml.p5.48xlarge"
COLD = 180
#: The plans' blocks are in another zone than on-demand nodes (the region's first, us-east-1a).
PLAN_ZONE = "us-east-1c"


def at(day, hour=0, minute=0):
    return datetime(2026, 1, day, hour, minute, tzinfo=timezone.utc)


#: One block, Jan 2 00:00 -> Jan 3 11:30 (the tests' groups run on it from Jan 2 01:00).
BLOCK = [(at(2), at(3, 11, 30))]
#: A later block, Jan 5 11:30 -> Jan 7 11:30.
LATER = [(at(5, 11, 30), at(7, 11, 30))]


def buy(backend, sm, name, blocks=BLOCK, count=4, instance_type=P5, target="hyperpod-cluster", pay=True):
    """Buy ``blocks`` in ``PLAN_ZONE`` as a plan (paid at once with ``pay``), without moving the clock."""
    for start, end in blocks:
        backend.capacity.add(instance_type, count, PLAN_ZONE, start, end)
    hours = sum((end - start for start, end in blocks), timedelta(0)) // timedelta(hours=1)
    offering = sm.search_training_plan_offerings(
        InstanceType=instance_type,
        InstanceCount=count,
        DurationHours=hours,
        TargetResources=[target],
        StartTimeAfter=blocks[0][0],
    )["TrainingPlanOfferings"][0]
    backend.settings.plan_payment_seconds = 0 if pay else 600
    arn = sm.create_training_plan(
        TrainingPlanName=name, TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
    )["TrainingPlanArn"]
    backend.clock.advance(0)
    return arn


def group(name, count, plan_arn=None, instance_type=P5, **extra):
    """An instance group's request (the plan second: the updates below give it most)."""
    return cluster_group(name, count, instance_type, plan_arn, **extra)


def advance_to(backend, moment):
    backend.clock.advance(moment - backend.clock.now())


def groups_of(sm, cluster="c"):
    described = sm.describe_cluster(ClusterName=cluster)
    assert_conforms("DescribeCluster", described)
    return {g["InstanceGroupName"]: g for g in described["InstanceGroups"]}


def nodes_of(sm, cluster="c", **params):
    response = sm.list_cluster_nodes(ClusterName=cluster, MaxResults=100, **params)
    assert_conforms("ListClusterNodes", response)
    return response["ClusterNodeSummaries"]


def logical_nodes(sm, cluster="c", **params):
    """Every node (also those still waiting for an instance), by logical id."""
    return {n["NodeLogicalId"]: n for n in nodes_of(sm, cluster, IncludeNodeLogicalIds=True, **params)}


def in_use(sm, plan):
    return sm.describe_training_plan(TrainingPlanName=plan)["InUseInstanceCount"]


def placement(sm, node_id, cluster="c"):
    response = sm.describe_cluster_node(ClusterName=cluster, NodeId=node_id)
    assert_conforms("DescribeClusterNode", response)
    details = response["NodeDetails"]
    return details["Placement"]["AvailabilityZone"], details["CapacityType"]


@pytest.fixture
def empty(backend):
    backend.capacity.clear()
    return backend


def test_an_on_demand_group_moves_onto_a_plan(empty, sm):
    backend = empty
    plan = buy(backend, sm, "hp")
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("workers", 2)])
    advance_to(backend, at(2, 1))
    before = logical_nodes(sm)
    assert {placement(sm, n["InstanceId"]) for n in before.values()} == {("us-east-1a", "OnDemand")}
    assert in_use(sm, "hp") == 0

    sm.update_cluster(ClusterName="c", InstanceGroups=[group("workers", 2, plan)])
    # Updating: the group names its new plan; its nodes still run on demand.
    workers = groups_of(sm)["workers"]
    assert (workers["Status"], workers["TrainingPlanArn"], workers["TrainingPlanStatus"]) == (
        "Updating",
        plan,
        "Active",
    )
    assert logical_nodes(sm) == before and in_use(sm, "hp") == 0
    assert [c["ClusterName"] for c in sm.list_clusters(TrainingPlanArn=plan)["ClusterSummaries"]] == ["c"]

    backend.clock.advance(COLD)
    moved = at(2, 1) + timedelta(seconds=COLD)
    workers = groups_of(sm)["workers"]
    assert (workers["Status"], workers["CurrentCount"], workers["TargetCount"]) == ("InService", 2, 2)
    after = logical_nodes(sm)
    # The same nodes (logical ids), on new instances of the plan, launched when the update completed.
    assert set(after) == set(before)
    assert not {n["InstanceId"] for n in after.values()} & {n["InstanceId"] for n in before.values()}
    assert {n["LaunchTime"] for n in after.values()} == {moved}
    assert {placement(sm, n["InstanceId"]) for n in after.values()} == {(PLAN_ZONE, "OnDemand")}
    assert in_use(sm, "hp") == 2
    assert sm.describe_cluster(ClusterName="c")["ClusterStatus"] == "InService"


def test_removing_the_plan_frees_its_instances_for_a_waiting_group(empty, sm):
    backend = empty
    plan = buy(backend, sm, "hp")
    sm.create_cluster(
        ClusterName="c", InstanceGroups=[group("ctl", 1, instance_type="ml.m5.xlarge"), group("gpu", 3, plan)]
    )
    backend.clock.advance(1)
    sm.create_cluster(ClusterName="d", InstanceGroups=[group("gpu", 2, plan)])
    advance_to(backend, at(2, 1))
    assert (groups_of(sm)["gpu"]["CurrentCount"], groups_of(sm, "d")["gpu"]["CurrentCount"]) == (3, 0)
    assert in_use(sm, "hp") == 3

    # The group's request without TrainingPlanArn takes it off the plan.
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("gpu", 3)])
    gpu = groups_of(sm)["gpu"]
    assert gpu["Status"] == "Updating" and "TrainingPlanArn" not in gpu and "TrainingPlanStatus" not in gpu
    assert in_use(sm, "hp") == 3  # the nodes run on the plan until the update completes
    summaries = sm.list_clusters(TrainingPlanArn=plan)["ClusterSummaries"]
    assert [c["ClusterName"] for c in summaries] == ["d"]
    assert "TrainingPlanArns" not in sm.list_clusters(NameContains="c")["ClusterSummaries"][0]

    backend.clock.advance(COLD)
    gpu = groups_of(sm)["gpu"]
    assert (gpu["Status"], gpu["CurrentCount"]) == ("InService", 3)
    nodes = nodes_of(sm, InstanceGroupNameContains="gpu")
    assert {placement(sm, n["InstanceId"]) for n in nodes} == {("us-east-1a", "OnDemand")}
    # The freed instances go to the group that was waiting for them.
    assert groups_of(sm, "d")["gpu"]["CurrentCount"] == 2
    assert in_use(sm, "hp") == 2


def test_a_group_moves_from_one_plan_to_another(empty, sm):
    backend = empty
    first, second = buy(backend, sm, "first"), buy(backend, sm, "second")
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("gpu", 2, first)])
    advance_to(backend, at(2, 1))
    before = logical_nodes(sm)
    assert (in_use(sm, "first"), in_use(sm, "second")) == (2, 0)
    # Moved and scaled up in one request.
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("gpu", 3, second)])
    assert (in_use(sm, "first"), in_use(sm, "second")) == (2, 0)
    waiting = {k: n for k, n in logical_nodes(sm).items() if k not in before}
    assert [n["InstanceStatus"]["Status"] for n in waiting.values()] == ["Pending"]
    backend.clock.advance(COLD)
    assert (in_use(sm, "first"), in_use(sm, "second")) == (0, 3)
    after = logical_nodes(sm)
    assert set(before) < set(after) and len(after) == 3
    assert {n["InstanceStatus"]["Status"] for n in after.values()} == {"Running"}
    gpu = groups_of(sm)["gpu"]
    assert (gpu["TrainingPlanArn"], gpu["CurrentCount"], gpu["TargetCount"]) == (second, 3, 3)


def test_same_plan_other_count(empty, sm):
    backend = empty
    plan = buy(backend, sm, "hp")
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("a", 1, plan), group("b", 2, plan)])
    advance_to(backend, at(2, 1))
    assert in_use(sm, "hp") == 3
    # Up to 3 needs two more instances; only one is free: all or nothing, so the group waits.
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("a", 3, plan), group("b", 2, plan)])
    backend.clock.advance(COLD)
    a = groups_of(sm)["a"]
    assert (a["Status"], a["CurrentCount"], a["TargetCount"], in_use(sm, "hp")) == ("InService", 1, 3, 3)
    statuses = sorted(
        n["InstanceStatus"]["Status"] for n in logical_nodes(sm, InstanceGroupNameContains="a").values()
    )
    assert statuses == ["Pending", "Pending", "Running"]
    assert len(nodes_of(sm, InstanceGroupNameContains="a")) == 1  # without the flag: instances only
    # Scaling b down frees one instance: a takes both it and the free one at once.
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("a", 3, plan), group("b", 1, plan)])
    backend.clock.advance(COLD)
    assert {name: g["CurrentCount"] for name, g in groups_of(sm).items()} == {"a": 3, "b": 1}
    assert in_use(sm, "hp") == 4
    # Down again: the instances go back to the plan.
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("a", 1, plan), group("b", 1, plan)])
    backend.clock.advance(COLD)
    assert in_use(sm, "hp") == 2 and len(logical_nodes(sm)) == 2


def test_a_group_moved_onto_a_scheduled_plan_waits_for_its_block(empty, sm):
    backend = empty
    plan = buy(backend, sm, "later", blocks=LATER)
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("gpu", 2)])
    backend.clock.advance(COLD)
    before = logical_nodes(sm)
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("gpu", 2, plan)])
    backend.clock.advance(COLD)
    gpu = groups_of(sm)["gpu"]
    assert (gpu["Status"], gpu["CurrentCount"], gpu["TrainingPlanStatus"]) == ("InService", 0, "Scheduled")
    assert nodes_of(sm) == []
    waiting = logical_nodes(sm)
    assert set(waiting) == set(before)
    assert {(n["InstanceId"], n["InstanceStatus"]["Status"]) for n in waiting.values()} == {("", "Pending")}
    pending = sm.describe_cluster_node(ClusterName="c", NodeLogicalId=next(iter(waiting)))
    assert_conforms("DescribeClusterNode", pending)
    details = pending["NodeDetails"]
    assert details["InstanceStatus"] == {"Status": "Pending"}
    assert not {"InstanceId", "LaunchTime", "Placement", "CapacityType"} & set(details)
    advance_to(backend, at(5, 11, 30))
    running = logical_nodes(sm)
    assert set(running) == set(before) and {n["LaunchTime"] for n in running.values()} == {at(5, 11, 30)}
    assert in_use(sm, "later") == 2


def test_plan_checks_on_update_and_a_refused_update_changes_nothing(empty, sm):
    backend = empty
    plan = buy(backend, sm, "hp")
    jobs = buy(backend, sm, "jobs", target="training-job")
    p4 = buy(backend, sm, "p4", instance_type="ml.p4d.24xlarge")
    missing = plan.replace("training-plan/hp", "training-plan/nope")
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("gpu", 2), group("onplan", 1, plan)])
    advance_to(backend, at(2, 1))
    unpaid = buy(backend, sm, "unpaid", blocks=LATER, pay=False)

    def described():
        response = sm.describe_cluster(ClusterName="c")
        response.pop("ResponseMetadata")
        return response

    before, nodes = described(), logical_nodes(sm)

    def refused(code, message, *groups):
        with pytest.raises(ClientError) as excinfo:
            sm.update_cluster(ClusterName="c", InstanceGroups=list(groups))
        error = excinfo.value.response["Error"]
        assert (error["Code"], error["Message"]) == (code, message)
        assert described() == before and logical_nodes(sm) == nodes
        assert in_use(sm, "hp") == 1

    refused(
        "ValidationException",
        "Training plan jobs targets training-job; it cannot be used for HyperPod cluster instance group gpu.",
        group("gpu", 2, jobs),
    )
    refused(
        "ValidationException",
        "The instance type ml.p5.48xlarge of instance group gpu does not match the instance type "
        "ml.p4d.24xlarge of training plan p4.",
        group("gpu", 2, p4),
    )
    refused(
        "ValidationException",
        "The instance count 5 of instance group gpu exceeds the 4 instances of training plan hp.",
        group("gpu", 5, plan),
    )
    refused(
        "ValidationException",
        "Training plan unpaid is Pending; only Scheduled or Active training plans can be used by an instance group.",
        group("gpu", 2, unpaid),
    )
    refused("ResourceNotFound", f"Training plan {missing} does not exist.", group("gpu", 2, missing))
    refused(
        "ValidationException",
        "Instance group gpu cannot request Spot capacity: its instances come from its training plan.",
        group("gpu", 2, plan, CapacityRequirements={"Spot": {}}),
    )
    # A valid group in the same request does not make a refused one go through.
    refused(
        "ValidationException",
        "The instance count 5 of instance group gpu exceeds the 4 instances of training plan hp.",
        group("onplan", 1),
        group("gpu", 5, plan),
    )


def test_an_expired_plan_cannot_be_added_but_a_group_can_stay_on_it(empty, sm):
    backend = empty
    plan = buy(backend, sm, "short", blocks=[(at(2), at(2, 11, 30))])
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("a", 1, plan), group("b", 1)])
    advance_to(backend, at(3, 1))
    assert sm.describe_training_plan(TrainingPlanName="short")["Status"] == "Expired"
    with pytest.raises(ClientError, match="Training plan short is Expired"):
        sm.update_cluster(ClusterName="c", InstanceGroups=[group("b", 1, plan)])
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("a", 2, plan)])
    backend.clock.advance(COLD)
    a = groups_of(sm)["a"]
    assert (a["TrainingPlanStatus"], a["CurrentCount"], a["TargetCount"]) == ("Expired", 0, 2)


def test_raw_json_bad_plan_members_are_refused(empty, sm):
    backend = empty
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("gpu", 1)])
    backend.clock.advance(COLD)
    for bad in (7, "", "not-an-arn", ["arn"], None):
        body = {"ClusterName": "c", "InstanceGroups": [{**group("gpu", 1), "TrainingPlanArn": bad}]}
        status, document = sagemaker_json(backend, "UpdateCluster", body)
        assert (status, document["__type"]) == (400, "ValidationException"), (bad, document)
    for bad in ("yes", 1, {}):
        status, document = sagemaker_json(
            backend, "ListClusterNodes", {"ClusterName": "c", "IncludeNodeLogicalIds": bad}
        )
        assert (status, document["__type"]) == (400, "ValidationException"), (bad, document)
    assert groups_of(sm)["gpu"]["Status"] == "InService"


PLANS = ["a", "b", None]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(PLANS), st.integers(1, 4), st.sampled_from(PLANS), st.integers(1, 4)),
        min_size=1,
        max_size=5,
    )
)
def test_plan_capacity_accounting_stays_right_through_any_updates(steps):
    """After every update the plans' InUseInstanceCount is what the groups on them run, never more
    than they hold; on-demand groups have all their nodes; nodes keep their logical ids."""
    with LocalBackend(start_time=START) as backend:
        backend.capacity.clear()
        sm = backend.client("sagemaker")
        arns = {name: buy(backend, sm, name, count=4) for name in ("a", "b")}
        arns[None] = None
        sm.create_cluster(ClusterName="c", InstanceGroups=[group("x", 1), group("y", 1)])
        advance_to(backend, at(2, 1))
        for plan_x, count_x, plan_y, count_y in steps:
            kept = set(logical_nodes(sm))
            sm.update_cluster(
                ClusterName="c",
                InstanceGroups=[group("x", count_x, arns[plan_x]), group("y", count_y, arns[plan_y])],
            )
            backend.clock.advance(COLD)
            groups = groups_of(sm)
            for name in ("a", "b"):
                running = sum(
                    g["CurrentCount"] for g in groups.values() if g.get("TrainingPlanArn") == arns[name]
                )
                assert in_use(sm, name) == running <= 4
            for g in groups.values():
                if "TrainingPlanArn" not in g:
                    assert g["CurrentCount"] == g["TargetCount"]
                assert (
                    len(logical_nodes(sm, InstanceGroupNameContains=g["InstanceGroupName"]))
                    == g["TargetCount"]
                )
            assert len(nodes_of(sm)) == sum(g["CurrentCount"] for g in groups.values())
            for name, count in (("x", count_x), ("y", count_y)):
                now = {k for k in logical_nodes(sm, InstanceGroupNameContains=name)}
                old = {k for k in kept if k.startswith(name + "-")}
                assert (old <= now) if count >= len(old) else (now < old)


ULTRA, GB200 = "ml.u-p6e-gb200x72", "ml.p6e-gb200.36xlarge"  # 18 instances an UltraServer


def test_nodes_moved_onto_an_ultraserver_plan_report_their_ultraserver(empty, sm):
    """UltraServerInfo: chosen, nodes fill the block's UltraServers in order, each up to its
    instances less the plan's spares (16 of 18 here)."""
    backend = empty
    backend.capacity.add(ULTRA, 2, PLAN_ZONE, *BLOCK[0])
    offering = sm.search_training_plan_offerings(
        UltraServerType=ULTRA,
        UltraServerCount=2,
        DurationHours=35,
        TargetResources=["hyperpod-cluster"],
        StartTimeAfter=BLOCK[0][0],
    )["TrainingPlanOfferings"][0]
    backend.settings.plan_payment_seconds = 0
    plan = sm.create_training_plan(
        TrainingPlanName="nvl",
        TrainingPlanOfferingId=offering["TrainingPlanOfferingId"],
        SpareInstanceCountPerUltraServer=2,
    )["TrainingPlanArn"]
    (rc,) = sm.describe_training_plan(TrainingPlanName="nvl")["ReservedCapacitySummaries"]
    servers = [
        u["UltraServerId"]
        for u in sm.list_ultra_servers_by_reserved_capacity(ReservedCapacityArn=rc["ReservedCapacityArn"])[
            "UltraServers"
        ]
    ]
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("gpu", 20, instance_type=GB200)])
    advance_to(backend, at(2, 1))
    assert all("UltraServerInfo" not in n for n in nodes_of(sm))
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("gpu", 20, plan, instance_type=GB200)])
    backend.clock.advance(COLD)
    sm.create_cluster(ClusterName="d", InstanceGroups=[group("gpu", 12, plan, instance_type=GB200)])
    backend.clock.advance(COLD)
    assert in_use(sm, "nvl") == 32

    def on_servers(cluster):
        found = {}
        for node in nodes_of(sm, cluster):
            info = node["UltraServerInfo"]
            assert info["Type"] == ULTRA
            found[info["Id"]] = found.get(info["Id"], 0) + 1
            details = sm.describe_cluster_node(ClusterName=cluster, NodeId=node["InstanceId"])["NodeDetails"]
            assert details["UltraServerInfo"] == info
        return found

    assert on_servers("c") == {servers[0]: 16, servers[1]: 4}
    assert on_servers("d") == {servers[1]: 12}
