"""HyperPod clusters and their instance groups on training plans, on a manual clock."""

import re
from datetime import datetime, timedelta, timezone

import pytest

from sagemaker_plans_local.core.errors import InUse, InvalidRequest, NotFound
from sagemaker_plans_local.services.sagemaker.clusters.clusters import DELETE_SECONDS, Conflict
from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript
from tests.domain.conftest import ROLE, START

P5 = "ml.p5.48xlarge"
COLD = 180


def at(day, hour=0, minute=0):
    return datetime(2026, 1, day, hour, minute, tzinfo=timezone.utc)


@pytest.fixture
def region(emulation):
    return emulation.region("us-east-1")


@pytest.fixture
def clusters(region):
    return region.clusters


def buy(emulation, name, blocks, count=4, instance_type=P5, target="hyperpod-cluster", pay=True):
    """Make ``blocks`` [(start, end)] the only free capacity, and buy them as one plan.

    The search asks for the whole hours the blocks hold; with ``pay`` the payment
    settles at once (instance groups need a Scheduled plan), the clock unmoved.
    """
    plans = emulation.region("us-east-1").training_plans
    for start, end in blocks:
        emulation.capacity.add(instance_type, count, "us-east-1a", start, end)
    hours = sum((end - start for start, end in blocks), timedelta(0)) // timedelta(hours=1)
    offerings = plans.search(
        instance_type=instance_type,
        instance_count=count,
        duration_hours=hours,
        target=target,
        start_after=blocks[0][0] if blocks[0][0] > emulation.clock.now() else None,
    )
    offering = offerings[0]
    assert [(b.start, b.end) for b in offering.blocks] == list(blocks)
    emulation.settings.plan_payment_seconds = 0 if pay else 60
    plan = plans.create(name, offering.offering_id)
    emulation.clock.advance(0)
    return plan


#: Two blocks: Jan 2 00:00 -> Jan 3 11:30 and Jan 5 11:30 -> Jan 7 11:30.
TWO_BLOCKS = [(at(2), at(3, 11, 30)), (at(5, 11, 30), at(7, 11, 30))]


def group(name="workers", count=2, instance_type=P5, plan=None, **extra):
    spec = {
        "InstanceGroupName": name,
        "InstanceType": instance_type,
        "InstanceCount": count,
        "ExecutionRole": ROLE,
        "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"},
    }
    if plan is not None:
        spec["TrainingPlanArn"] = plan.arn
    spec.update(extra)
    return spec


def create(clusters, name, *groups, **extra):
    return clusters.create({"ClusterName": name, "InstanceGroups": list(groups), **extra})


def counts(cluster):
    return {g.name: (g.status, g.current_count) for g in cluster.groups.values()}


def advance_to(emulation, moment):
    emulation.clock.advance(moment - emulation.clock.now())


def test_arn_status_and_plain_group_nodes(emulation, clusters):
    cluster = create(clusters, "c1", group("ctl", 1, "ml.m5.xlarge"), group("work", 3, "ml.g5.2xlarge"))
    assert re.fullmatch(r"arn:aws:sagemaker:us-east-1:123456789012:cluster/[a-z0-9]{12}", cluster.arn)
    assert cluster.status == "Creating"
    assert counts(cluster) == {"ctl": ("Creating", 0), "work": ("Creating", 0)}
    emulation.clock.advance(COLD - 1)
    assert cluster.status == "Creating"
    emulation.clock.advance(1)
    assert cluster.status == "InService"
    assert counts(cluster) == {"ctl": ("InService", 1), "work": ("InService", 3)}
    nodes = list(cluster.nodes())
    assert all(re.fullmatch(r"i-[0-9a-f]{17}", n.instance_id) for n in nodes)
    assert len({n.instance_id for n in nodes}) == 4
    assert all(n.launch_time == START + timedelta(seconds=COLD) and n.status == "Running" for n in nodes)
    assert clusters.get(cluster.arn) is clusters.get("c1") is cluster


def test_arns_are_deterministic_per_backend(tmp_path):
    from sagemaker_plans_local.emulation import Emulation

    def arns(root):
        c = Emulation("123456789012", root, START).region("us-east-1").clusters
        return [create(c, name, group("g", 1, "ml.m5.xlarge")).arn for name in ("a", "b")]

    first, second = arns(tmp_path / "1"), arns(tmp_path / "2")
    assert first == second and first[0] != first[1]


def test_plan_group_nodes_follow_the_plan_blocks(emulation, clusters):
    plan = buy(emulation, "plan", TWO_BLOCKS)
    cluster = create(clusters, "c1", group("ctl", 1, "ml.m5.xlarge"), group("gpu", 2, plan=plan))
    emulation.clock.advance(COLD)
    # InService before the plan is active, without nodes.
    assert plan.status == "Scheduled"
    assert counts(cluster) == {"ctl": ("InService", 1), "gpu": ("InService", 0)}
    advance_to(emulation, at(2))
    assert plan.status == "Active"
    assert counts(cluster)["gpu"] == ("InService", 2)
    assert {n.launch_time for n in cluster.groups["gpu"].nodes} == {at(2)}
    assert (plan.in_use, plan.available) == (2, 2)
    # Nodes are taken back one hour before the block ends.
    advance_to(emulation, at(3, 10, 29))
    assert counts(cluster)["gpu"] == ("InService", 2)
    advance_to(emulation, at(3, 10, 30))
    assert counts(cluster)["gpu"] == ("InService", 0)
    assert plan.in_use == 0 and plan.status == "Active"
    advance_to(emulation, at(4))
    assert plan.status == "Scheduled"
    # Back in the next block, new instances.
    advance_to(emulation, at(5, 11, 30))
    assert counts(cluster)["gpu"] == ("InService", 2)
    assert {n.launch_time for n in cluster.groups["gpu"].nodes} == {at(5, 11, 30)}
    assert plan.in_use == 2
    advance_to(emulation, at(7, 10, 30))
    assert counts(cluster)["gpu"] == ("InService", 0)
    advance_to(emulation, at(8))
    assert plan.status == "Expired" and plan.in_use == 0
    assert counts(cluster) == {"ctl": ("InService", 1), "gpu": ("InService", 0)}


def test_group_created_on_an_active_plan_gets_nodes_when_in_service(emulation, clusters):
    plan = buy(emulation, "plan", TWO_BLOCKS)
    advance_to(emulation, at(2, 6))
    cluster = create(clusters, "c1", group("gpu", 4, plan=plan))
    assert plan.in_use == 0
    emulation.clock.advance(COLD)
    assert counts(cluster) == {"gpu": ("InService", 4)}
    assert plan.in_use == 4 and plan.available == 0
    assert {n.launch_time for n in cluster.nodes()} == {at(2, 6, 3)}


def test_groups_share_a_plan_and_waiting_groups_get_released_instances(emulation, clusters):
    plan = buy(emulation, "plan", TWO_BLOCKS)
    first = create(clusters, "first", group("a", 3, plan=plan))
    emulation.clock.advance(1)
    second = create(clusters, "second", group("b", 2, plan=plan))
    advance_to(emulation, at(2))
    # All or nothing: the first group (created first) takes 3, the second waits.
    assert counts(first)["a"][1] == 3 and counts(second)["b"][1] == 0
    assert plan.in_use == 3
    clusters.update("first", {"InstanceGroups": [group("a", 1, plan=plan)]})
    emulation.clock.advance(COLD)
    assert counts(first)["a"] == ("InService", 1)
    assert counts(second)["b"] == ("InService", 2)
    assert plan.in_use == 3
    clusters.delete("second")
    assert plan.in_use == 1
    # Deleting one consumer lets a waiting group in at once.
    third = create(clusters, "third", group("c", 4, plan=plan))
    emulation.clock.advance(COLD)
    assert counts(third)["c"][1] == 0
    clusters.delete("first")
    assert counts(third)["c"] == ("InService", 4) and plan.in_use == 4


def test_plan_checks_on_create(emulation, clusters):
    plan = buy(emulation, "hp", TWO_BLOCKS)
    job_plan = buy(
        emulation, "tj", [(at(10), at(11, 11, 30))], instance_type="ml.p4d.24xlarge", target="training-job"
    )
    before = plan.in_use
    missing = plan.arn.replace("training-plan/hp", "training-plan/nope")
    with pytest.raises(NotFound):
        create(clusters, "c", group("g", 1, plan=plan), {**group("h", 1), "TrainingPlanArn": missing})
    with pytest.raises(InvalidRequest, match="targets training-job"):
        create(clusters, "c", group("g", 1, "ml.p4d.24xlarge", plan=job_plan))
    with pytest.raises(InvalidRequest, match="does not match the instance type ml.p5.48xlarge"):
        create(clusters, "c", group("g", 1, "ml.p4d.24xlarge", plan=plan))
    with pytest.raises(InvalidRequest, match="exceeds the 4 instances"):
        create(clusters, "c", group("g", 5, plan=plan))
    # A rejected request changes nothing.
    assert list(clusters.all()) == [] and plan.in_use == before
    with pytest.raises(NotFound):
        clusters.get("c")


def test_expired_and_failed_plans_are_rejected(emulation, clusters):
    emulation.script_plan("broke", PlanScript(payment_succeeds=False))
    expired = buy(emulation, "old", [(START + timedelta(minutes=30), at(1, 11, 30))], count=2)
    failed = buy(emulation, "broke", [(at(3), at(4, 11, 30))])
    advance_to(emulation, at(2))
    assert failed.status == "Failed" and expired.status == "Expired"
    for plan in (failed, expired):
        with pytest.raises(InvalidRequest, match=f"is {plan.status}"):
            create(clusters, "c", group("g", 1, plan=plan))


def test_a_pending_plan_cannot_be_used(emulation, clusters):
    """The guide's training-plan-utilization-for-hyperpod page: only Scheduled or Active plans."""
    plan = buy(emulation, "plan", TWO_BLOCKS, pay=False)
    assert plan.status == "Pending"
    with pytest.raises(InvalidRequest, match="is Pending; only Scheduled or Active"):
        create(clusters, "c", group("g", 1, plan=plan))
    emulation.clock.advance(60)
    cluster = create(clusters, "c", group("g", 1, plan=plan))
    assert cluster.groups["g"].plan is plan


def test_request_rules(emulation, clusters):
    with pytest.raises(InvalidRequest, match="at least one instance group"):
        clusters.create({"ClusterName": "c"})
    with pytest.raises(InvalidRequest, match="InstanceType is required"):
        create(clusters, "c", {"InstanceGroupName": "g", "InstanceCount": 1, "ExecutionRole": ROLE})
    with pytest.raises(InvalidRequest, match="unique"):
        create(clusters, "c", group("g", 1), group("g", 2))
    with pytest.raises(InvalidRequest, match="InstanceRequirements"):
        create(clusters, "c", group("g", 1, InstanceRequirements={"InstanceTypes": [P5]}))
    with pytest.raises(InvalidRequest, match="RestrictedInstanceGroups"):
        create(clusters, "c", group("g", 1), RestrictedInstanceGroups=[group("r", 1)])
    create(clusters, "c", group("g", 1))
    with pytest.raises(InUse, match=r"already exists \(arn:aws:sagemaker:us-east-1:123456789012:cluster/"):
        create(clusters, "c", group("g", 1))


def test_update_counts_add_and_delete_groups(emulation, clusters):
    plan = buy(emulation, "plan", TWO_BLOCKS)
    cluster = create(clusters, "c", group("ctl", 1, "ml.m5.xlarge"), group("gpu", 1, plan=plan))
    with pytest.raises(Conflict, match="Creating"):
        clusters.update("c", {"InstanceGroups": [group("ctl", 2, "ml.m5.xlarge")]})
    advance_to(emulation, at(2))
    assert plan.in_use == 1
    clusters.update(
        cluster.arn,
        {
            "InstanceGroups": [group("gpu", 3, plan=plan), group("extra", 2, "ml.c5.xlarge")],
            "InstanceGroupsToDelete": ["ctl"],
        },
    )
    assert cluster.status == "Updating"
    assert counts(cluster) == {"ctl": ("Deleting", 0), "gpu": ("Updating", 1), "extra": ("Creating", 0)}
    with pytest.raises(Conflict, match="Updating"):
        clusters.update("c", {"InstanceGroups": [group("gpu", 1, plan=plan)]})
    emulation.clock.advance(COLD)
    assert cluster.status == "InService"
    assert counts(cluster) == {"gpu": ("InService", 3), "extra": ("InService", 2)}
    assert plan.in_use == 3
    # Scale down: newest nodes go first, instances are given back.
    oldest = cluster.groups["gpu"].nodes[0]
    clusters.update(
        "c", {"InstanceGroups": [group("gpu", 1, plan=plan)], "InstanceGroupsToDelete": ["extra"]}
    )
    emulation.clock.advance(COLD)
    assert counts(cluster) == {"gpu": ("InService", 1)}
    assert cluster.groups["gpu"].nodes == [oldest]
    assert cluster.groups["gpu"].plan is plan
    assert plan.in_use == 1


def test_rejected_updates_change_nothing(emulation, clusters):
    plan = buy(emulation, "plan", TWO_BLOCKS)
    cluster = create(clusters, "c", group("ctl", 1, "ml.m5.xlarge"), group("gpu", 1, plan=plan))
    emulation.clock.advance(COLD)
    bad = [
        ({"InstanceGroupsToDelete": ["nope"]}, InvalidRequest, "does not exist"),
        (
            {"InstanceGroups": [group("ctl", 2, "ml.m5.xlarge")], "InstanceGroupsToDelete": ["ctl"]},
            InvalidRequest,
            "both updated and deleted",
        ),
        ({"InstanceGroups": [group("ctl", 1, "ml.m5.2xlarge")]}, InvalidRequest, "cannot be changed"),
        (
            {"InstanceGroups": [group("ctl", 1, "ml.m5.xlarge", plan=plan)]},
            InvalidRequest,
            "instance type ml.m5.xlarge of instance group ctl does not match",
        ),
        ({"InstanceGroups": [group("gpu", 8, plan=plan)]}, InvalidRequest, "exceeds the 4 instances"),
        (
            {
                "InstanceGroups": [group("new", 1, "ml.p4d.24xlarge", plan=plan)],
                "InstanceGroupsToDelete": ["ctl"],
            },
            InvalidRequest,
            "does not match",
        ),
    ]
    for request, error, message in bad:
        with pytest.raises(error, match=message):
            clusters.update("c", request)
        assert cluster.status == "InService"
        assert counts(cluster) == {"ctl": ("InService", 1), "gpu": ("InService", 0)}
    with pytest.raises(NotFound):
        clusters.update("missing", {})


def test_deleting_a_group_releases_its_plan_instances_at_once(emulation, clusters):
    plan = buy(emulation, "plan", TWO_BLOCKS)
    cluster = create(clusters, "c", group("ctl", 1, "ml.m5.xlarge"), group("gpu", 4, plan=plan))
    advance_to(emulation, at(2))
    assert plan.in_use == 4
    clusters.update("c", {"InstanceGroupsToDelete": ["gpu"]})
    assert plan.in_use == 0 and counts(cluster)["gpu"] == ("Deleting", 0)
    emulation.clock.advance(COLD)
    assert counts(cluster) == {"ctl": ("InService", 1)}


def test_delete_cluster(emulation, clusters):
    plan = buy(emulation, "plan", TWO_BLOCKS)
    cluster = create(clusters, "c", group("gpu", 2, plan=plan))
    advance_to(emulation, at(2))
    assert plan.in_use == 2
    assert clusters.delete("c") is cluster
    assert cluster.status == "Deleting" and plan.in_use == 0
    assert counts(cluster) == {"gpu": ("Deleting", 0)}
    with pytest.raises(Conflict, match="already being deleted"):
        clusters.delete(cluster.arn)
    with pytest.raises(Conflict):
        clusters.update("c", {})
    with pytest.raises(InUse):
        create(clusters, "c", group("g", 1, "ml.m5.xlarge"))
    emulation.clock.advance(DELETE_SECONDS - 1)
    assert clusters.get("c") is cluster
    emulation.clock.advance(1)
    with pytest.raises(NotFound):
        clusters.get("c")
    with pytest.raises(NotFound):
        clusters.get(cluster.arn)
    # The plan's next block does not bring a deleted cluster back.
    advance_to(emulation, at(5, 12))
    assert plan.in_use == 0
    assert create(clusters, "c", group("g", 1, "ml.m5.xlarge")).arn != cluster.arn


def test_delete_while_creating_cancels_the_creation(emulation, clusters):
    cluster = create(clusters, "c", group("g", 2, "ml.m5.xlarge"))
    emulation.clock.advance(10)
    clusters.delete("c")
    emulation.clock.advance(COLD)
    assert cluster.status == "Deleting" and list(cluster.nodes()) == []
    emulation.clock.advance(DELETE_SECONDS)
    assert list(clusters.all()) == []


def test_training_jobs_cannot_use_a_hyperpod_plan_and_clusters_ignore_job_plans(emulation, clusters):
    plan = buy(emulation, "hp", TWO_BLOCKS)
    from tests.domain.conftest import job_spec

    spec = job_spec("job", keep_alive=None, instance_type=P5)
    spec["ResourceConfig"]["TrainingPlanArn"] = plan.arn
    with pytest.raises(InvalidRequest, match="targets hyperpod-cluster"):
        emulation.region("us-east-1").training_jobs.create(spec)


def test_plan_nodes_keep_their_logical_ids_across_blocks(emulation, clusters):
    """At a block's cutoff the nodes lose their instances but not their logical ids (chosen)."""
    plan = buy(emulation, "plan", TWO_BLOCKS)
    cluster = create(clusters, "c1", group("gpu", 2, plan=plan))
    assert [n.status for n in cluster.nodes()] == ["Pending", "Pending"]
    advance_to(emulation, at(2))
    first = {n.logical_id: n.instance_id for n in cluster.nodes()}
    assert len(first) == 2 and None not in first.values()
    advance_to(emulation, at(3, 10, 30))
    assert {n.logical_id: n.instance_id for n in cluster.nodes()} == dict.fromkeys(first)
    advance_to(emulation, at(5, 11, 30))
    second = {n.logical_id: n.instance_id for n in cluster.nodes()}
    assert set(second) == set(first) and not set(second.values()) & set(first.values())
    assert {n.instance.availability_zone for n in cluster.nodes()} == {"us-east-1a"}


def test_moving_a_group_between_plans_frees_one_and_takes_the_other(emulation, clusters):
    first, second = buy(emulation, "first", TWO_BLOCKS), buy(emulation, "second", TWO_BLOCKS)
    cluster = create(clusters, "c", group("gpu", 3, plan=first))
    advance_to(emulation, at(2))
    assert (first.in_use, second.in_use) == (3, 0)
    clusters.update("c", {"InstanceGroups": [group("gpu", 3, plan=second)]})
    gpu = cluster.groups["gpu"]
    assert (gpu.plan, gpu.held, first.in_use) == (second, first, 3)
    emulation.clock.advance(COLD)
    assert (gpu.plan, gpu.held, first.in_use, second.in_use) == (second, second, 0, 3)
    clusters.update("c", {"InstanceGroups": [group("gpu", 1)]})
    emulation.clock.advance(COLD)
    assert (gpu.plan, gpu.held, first.in_use, second.in_use, gpu.current_count) == (None, None, 0, 0, 1)
