"""HyperPod clusters on training plans through a real boto3 client."""

import re
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

from tests.conformance import assert_conforms
from tests.conftest import ROLE, START

P5 = "ml.p5.48xlarge"
COLD = 180
ARN = re.compile(r"arn:aws:sagemaker:us-east-1:123456789012:cluster/[a-z0-9]{12}")


def at(day, hour=0, minute=0):
    return datetime(2026, 1, day, hour, minute, tzinfo=timezone.utc)


#: Two blocks: Jan 2 00:00 -> Jan 3 11:30 and Jan 5 11:30 -> Jan 7 11:30.
TWO_BLOCKS = [(at(2), at(3, 11, 30)), (at(5, 11, 30), at(7, 11, 30))]


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def buy(backend, sm, name, blocks=TWO_BLOCKS, count=4, instance_type=P5, target="hyperpod-cluster"):
    """Buy ``blocks`` (asking for the whole hours they hold) as a paid plan, without moving the clock."""
    for start, end in blocks:
        backend.capacity.add(instance_type, count, "us-east-1a", start, end)
    hours = sum((end - start for start, end in blocks), timedelta(0)) // timedelta(hours=1)
    offerings = sm.search_training_plan_offerings(
        InstanceType=instance_type,
        InstanceCount=count,
        DurationHours=hours,
        TargetResources=[target],
        StartTimeAfter=blocks[0][0],
    )["TrainingPlanOfferings"]
    offering = offerings[0]
    assert [(o["StartTime"], o["EndTime"]) for o in offering["ReservedCapacityOfferings"]] == blocks
    backend.settings.plan_payment_seconds = 0  # groups need a Scheduled plan
    arn = sm.create_training_plan(
        TrainingPlanName=name, TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
    )["TrainingPlanArn"]
    backend.clock.advance(0)
    return arn


@pytest.fixture
def empty(backend):
    backend.capacity.clear()
    return backend


def group(name, count, instance_type=P5, plan_arn=None, **extra):
    spec = {
        "InstanceGroupName": name,
        "InstanceType": instance_type,
        "InstanceCount": count,
        "ExecutionRole": ROLE,
        "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"},
    }
    if plan_arn:
        spec["TrainingPlanArn"] = plan_arn
    spec.update(extra)
    return spec


def advance_to(backend, moment):
    backend.clock.advance(moment - backend.clock.now())


def groups_of(sm, cluster):
    described = sm.describe_cluster(ClusterName=cluster)
    assert_conforms("DescribeCluster", described)
    return {g["InstanceGroupName"]: g for g in described["InstanceGroups"]}


def nodes_of(sm, cluster, **params):
    response = sm.list_cluster_nodes(ClusterName=cluster, **params)
    assert_conforms("ListClusterNodes", response)
    return response["ClusterNodeSummaries"]


def test_instance_group_on_a_training_plan(empty, sm):
    backend = empty
    plan_arn = buy(backend, sm, "hp-plan")
    response = sm.create_cluster(
        ClusterName="hp",
        InstanceGroups=[group("controller", 1, "ml.m5.xlarge"), group("gpu", 2, plan_arn=plan_arn)],
        VpcConfig={"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]},
    )
    assert_conforms("CreateCluster", response)
    arn = response["ClusterArn"]
    assert ARN.fullmatch(arn)
    described = sm.describe_cluster(ClusterName="hp")
    assert_conforms("DescribeCluster", described)
    assert described["ClusterStatus"] == "Creating" and described["CreationTime"] == START
    assert described["NodeRecovery"] == "Automatic"
    assert described["VpcConfig"]["Subnets"] == ["subnet-0123456789abcdef0"]
    backend.clock.advance(COLD)

    # InService before the plan is active, no nodes yet.
    groups = groups_of(sm, arn)
    assert sm.describe_cluster(ClusterName=arn)["ClusterStatus"] == "InService"
    gpu = groups["gpu"]
    assert (gpu["Status"], gpu["CurrentCount"], gpu["TargetCount"]) == ("InService", 0, 2)
    assert gpu["TrainingPlanArn"] == plan_arn and gpu["TrainingPlanStatus"] == "Scheduled"
    assert gpu["LifeCycleConfig"] == {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"}
    assert gpu["ExecutionRole"] == ROLE and gpu["InstanceType"] == P5
    assert (groups["controller"]["CurrentCount"], groups["controller"]["TargetCount"]) == (1, 1)
    assert "TrainingPlanArn" not in groups["controller"]
    assert [n["InstanceGroupName"] for n in nodes_of(sm, "hp")] == ["controller"]

    # The block becomes active: nodes appear and count as in use on the plan.
    advance_to(backend, at(2))
    gpu = groups_of(sm, "hp")["gpu"]
    assert (gpu["CurrentCount"], gpu["TrainingPlanStatus"]) == (2, "Active")
    gpu_nodes = nodes_of(sm, "hp", InstanceGroupNameContains="gpu")
    assert len(gpu_nodes) == 2
    for node in gpu_nodes:
        assert re.fullmatch(r"i-[0-9a-f]{17}", node["InstanceId"])
        assert node["InstanceStatus"] == {"Status": "Running"}
        assert node["LaunchTime"] == at(2) and node["InstanceType"] == P5
    plan = sm.describe_training_plan(TrainingPlanName="hp-plan")
    assert (plan["InUseInstanceCount"], plan["AvailableInstanceCount"]) == (2, 2)

    # One hour before the block ends the nodes go and the instances are given back.
    advance_to(backend, at(3, 10, 29))
    assert groups_of(sm, "hp")["gpu"]["CurrentCount"] == 2
    advance_to(backend, at(3, 10, 30))
    assert groups_of(sm, "hp")["gpu"]["CurrentCount"] == 0
    assert nodes_of(sm, "hp", InstanceGroupNameContains="gpu") == []
    assert sm.describe_training_plan(TrainingPlanName="hp-plan")["InUseInstanceCount"] == 0

    # And come back in the next block.
    advance_to(backend, at(5, 11, 30))
    assert groups_of(sm, "hp")["gpu"]["CurrentCount"] == 2
    assert sm.describe_training_plan(TrainingPlanName="hp-plan")["InUseInstanceCount"] == 2
    advance_to(backend, at(8))
    gpu = groups_of(sm, "hp")["gpu"]
    assert (gpu["Status"], gpu["CurrentCount"], gpu["TrainingPlanStatus"]) == ("InService", 0, "Expired")


def test_list_clusters_filters_sorts_and_pages(empty, sm):
    backend = empty
    plan_arn = buy(backend, sm, "hp-plan")
    sm.create_cluster(ClusterName="beta", InstanceGroups=[group("g", 1, plan_arn=plan_arn)])
    backend.clock.advance(60)
    sm.create_cluster(ClusterName="alpha", InstanceGroups=[group("g", 1, "ml.m5.xlarge")])
    backend.clock.advance(60)
    sm.create_cluster(
        ClusterName="gamma", InstanceGroups=[group("g", 1, "ml.m5.xlarge"), group("h", 2, plan_arn=plan_arn)]
    )
    response = sm.list_clusters()
    assert_conforms("ListClusters", response)
    summaries = response["ClusterSummaries"]
    assert [s["ClusterName"] for s in summaries] == ["beta", "alpha", "gamma"]
    assert summaries[0]["TrainingPlanArns"] == [plan_arn]
    assert "TrainingPlanArns" not in summaries[1]
    assert {s["ClusterStatus"] for s in summaries} == {"Creating"}
    backend.clock.advance(60)
    statuses = [s["ClusterStatus"] for s in sm.list_clusters()["ClusterSummaries"]]
    assert statuses == ["InService", "Creating", "Creating"]

    on_plan = sm.list_clusters(TrainingPlanArn=plan_arn)
    assert_conforms("ListClusters", on_plan)
    assert [s["ClusterName"] for s in on_plan["ClusterSummaries"]] == ["beta", "gamma"]
    other = plan_arn.replace("hp-plan", "other-plan")
    assert sm.list_clusters(TrainingPlanArn=other)["ClusterSummaries"] == []

    by_name = sm.list_clusters(SortBy="NAME", SortOrder="Descending")["ClusterSummaries"]
    assert [s["ClusterName"] for s in by_name] == ["gamma", "beta", "alpha"]
    assert [s["ClusterName"] for s in sm.list_clusters(NameContains="a")["ClusterSummaries"]] == [
        "beta",
        "alpha",
        "gamma",
    ]
    assert [s["ClusterName"] for s in sm.list_clusters(NameContains="mm")["ClusterSummaries"]] == ["gamma"]
    after = sm.list_clusters(
        CreationTimeAfter=START + timedelta(seconds=30), CreationTimeBefore=START + timedelta(seconds=90)
    )
    assert [s["ClusterName"] for s in after["ClusterSummaries"]] == ["alpha"]

    first = sm.list_clusters(MaxResults=2, SortBy="NAME")
    assert [s["ClusterName"] for s in first["ClusterSummaries"]] == ["alpha", "beta"]
    second = sm.list_clusters(MaxResults=2, SortBy="NAME", NextToken=first["NextToken"])
    assert [s["ClusterName"] for s in second["ClusterSummaries"]] == ["gamma"]
    assert "NextToken" not in second
    paginator = sm.get_paginator("list_clusters")
    names = [
        s["ClusterName"]
        for p in paginator.paginate(PaginationConfig={"PageSize": 1})
        for s in p["ClusterSummaries"]
    ]
    assert names == ["beta", "alpha", "gamma"]


def test_list_cluster_nodes_filters_sorts_and_pages(empty, sm):
    backend = empty
    sm.create_cluster(
        ClusterName="c",
        InstanceGroups=[group("workers", 3, "ml.g5.2xlarge"), group("ctl", 1, "ml.m5.xlarge")],
    )
    backend.clock.advance(COLD)
    sm.update_cluster(ClusterName="c", InstanceGroups=[group("workers", 5, "ml.g5.2xlarge")])
    backend.clock.advance(COLD)
    nodes = nodes_of(sm, "c")
    assert len(nodes) == 6
    first_launch = START + timedelta(seconds=COLD)
    assert [n["LaunchTime"] for n in nodes] == [first_launch] * 4 + [
        first_launch + timedelta(seconds=COLD)
    ] * 2
    assert len({n["InstanceId"] for n in nodes}) == 6
    by_name = nodes_of(sm, "c", SortBy="NAME")
    assert [n["InstanceGroupName"] for n in by_name] == ["ctl"] + ["workers"] * 5
    recent = nodes_of(sm, "c", CreationTimeAfter=first_launch)
    assert len(recent) == 2
    assert nodes_of(sm, "c", CreationTimeBefore=first_launch) == []
    arn = sm.describe_cluster(ClusterName="c")["ClusterArn"]
    page1 = sm.list_cluster_nodes(ClusterName=arn, MaxResults=4, SortOrder="Descending")
    page2 = sm.list_cluster_nodes(
        ClusterName=arn, MaxResults=4, SortOrder="Descending", NextToken=page1["NextToken"]
    )
    ids = [n["InstanceId"] for n in page1["ClusterNodeSummaries"] + page2["ClusterNodeSummaries"]]
    assert sorted(ids) == sorted(n["InstanceId"] for n in nodes) and len(ids) == 6
    assert "NextToken" not in page2


def test_update_and_delete_release_plan_instances(empty, sm):
    backend = empty
    plan_arn = buy(backend, sm, "hp-plan")
    sm.create_cluster(
        ClusterName="c", InstanceGroups=[group("ctl", 1, "ml.m5.xlarge"), group("gpu", 1, plan_arn=plan_arn)]
    )
    advance_to(backend, at(2))
    response = sm.update_cluster(ClusterName="c", InstanceGroups=[group("gpu", 4, plan_arn=plan_arn)])
    assert_conforms("UpdateCluster", response)
    described = sm.describe_cluster(ClusterName="c")
    assert described["ClusterStatus"] == "Updating"
    assert {g["InstanceGroupName"]: g["Status"] for g in described["InstanceGroups"]} == {
        "ctl": "InService",
        "gpu": "Updating",
    }
    with pytest.raises(sm.exceptions.ConflictException):
        sm.update_cluster(ClusterName="c", InstanceGroups=[group("gpu", 2, plan_arn=plan_arn)])
    backend.clock.advance(COLD)
    assert groups_of(sm, "c")["gpu"]["CurrentCount"] == 4
    assert sm.describe_training_plan(TrainingPlanName="hp-plan")["AvailableInstanceCount"] == 0

    # A second cluster on the same plan waits for instances, and gets them once released.
    sm.create_cluster(ClusterName="d", InstanceGroups=[group("gpu", 2, plan_arn=plan_arn)])
    backend.clock.advance(COLD)
    assert groups_of(sm, "d")["gpu"]["CurrentCount"] == 0
    sm.update_cluster(ClusterName="c", InstanceGroupsToDelete=["gpu"])
    assert [g["InstanceGroupName"] for g in sm.describe_cluster(ClusterName="c")["InstanceGroups"]] == [
        "ctl",
        "gpu",
    ]
    assert groups_of(sm, "d")["gpu"]["CurrentCount"] == 2
    backend.clock.advance(COLD)
    assert list(groups_of(sm, "c")) == ["ctl"]

    deleted = sm.delete_cluster(ClusterName="d")
    assert_conforms("DeleteCluster", deleted)
    assert sm.describe_cluster(ClusterName="d")["ClusterStatus"] == "Deleting"
    assert sm.describe_training_plan(TrainingPlanName="hp-plan")["InUseInstanceCount"] == 0
    assert nodes_of(sm, "d") == []
    with pytest.raises(sm.exceptions.ConflictException):
        sm.delete_cluster(ClusterName=deleted["ClusterArn"])
    backend.clock.advance(60)
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.describe_cluster(ClusterName="d")
    assert [s["ClusterName"] for s in sm.list_clusters()["ClusterSummaries"]] == ["c"]


def test_errors(empty, sm):
    backend = empty
    hp_arn = buy(backend, sm, "hp-plan")
    job_arn = buy(
        backend,
        sm,
        "job-plan",
        blocks=[(at(10), at(11, 11, 30))],
        instance_type="ml.p4d.24xlarge",
        target="training-job",
    )

    def rejected(code, match, **request):
        with pytest.raises(ClientError) as excinfo:
            sm.create_cluster(**request)
        got_code, message = error_of(excinfo)
        assert got_code == code, message
        assert re.search(match, message), message

    rejected(
        "ValidationException",
        "targets training-job",
        ClusterName="c",
        InstanceGroups=[group("g", 1, "ml.p4d.24xlarge", plan_arn=job_arn)],
    )
    rejected(
        "ValidationException",
        "does not match the instance type",
        ClusterName="c",
        InstanceGroups=[group("g", 1, "ml.p4d.24xlarge", plan_arn=hp_arn)],
    )
    rejected(
        "ValidationException",
        "exceeds the 4 instances",
        ClusterName="c",
        InstanceGroups=[group("g", 8, plan_arn=hp_arn)],
    )
    rejected(
        "ResourceNotFound",
        "nope",
        ClusterName="c",
        InstanceGroups=[group("g", 1, plan_arn=hp_arn.replace("hp-plan", "nope"))],
    )
    rejected(
        "ValidationException",
        "InstanceType is required",
        ClusterName="c",
        InstanceGroups=[{"InstanceGroupName": "g", "InstanceCount": 1, "ExecutionRole": ROLE}],
    )
    rejected("ValidationException", "at least one instance group", ClusterName="c")
    rejected(
        "ValidationException",
        "unique",
        ClusterName="c",
        InstanceGroups=[group("g", 1, "ml.m5.xlarge"), group("g", 1, "ml.m5.xlarge")],
    )
    rejected(
        "ValidationException",
        r"^1 validation error detected: Value 'ml.nope' at "
        r"'instanceGroups.1.member.instanceType' failed to satisfy constraint: Member must satisfy enum",
        ClusterName="c",
        InstanceGroups=[group("g", 1, "ml.nope")],
    )
    assert sm.list_clusters()["ClusterSummaries"] == []
    assert sm.describe_training_plan(TrainingPlanName="hp-plan")["InUseInstanceCount"] == 0

    sm.create_cluster(ClusterName="c", InstanceGroups=[group("g", 1, "ml.m5.xlarge")])
    with pytest.raises(sm.exceptions.ResourceInUse):
        sm.create_cluster(ClusterName="c", InstanceGroups=[group("g", 1, "ml.m5.xlarge")])
    backend.clock.advance(COLD)
    with pytest.raises(ClientError) as excinfo:
        sm.update_cluster(ClusterName="c", InstanceGroupsToDelete=["unknown"])
    assert error_of(excinfo)[0] == "ValidationException"
    assert sm.describe_cluster(ClusterName="c")["ClusterStatus"] == "InService"

    missing_arn = "arn:aws:sagemaker:us-east-1:123456789012:cluster/000000000000"
    for call in (
        lambda: sm.describe_cluster(ClusterName="missing"),
        lambda: sm.describe_cluster(ClusterName=missing_arn),
        lambda: sm.update_cluster(ClusterName="missing", InstanceGroupsToDelete=["g"]),
        lambda: sm.delete_cluster(ClusterName="missing"),
        lambda: sm.list_cluster_nodes(ClusterName="missing"),
    ):
        with pytest.raises(sm.exceptions.ResourceNotFound):
            call()


def test_describe_echoes_settings_and_conforms(empty, sm):
    backend = empty
    rich = group(
        "ctl",
        1,
        "ml.m5.xlarge",
        MinInstanceCount=1,
        ThreadsPerCore=1,
        ImageId="default",
        InstanceStorageConfigs=[{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}],
        OnStartDeepHealthChecks=["InstanceStress"],
        OverrideVpcConfig={"SecurityGroupIds": ["sg-1"], "Subnets": ["subnet-1"]},
        KubernetesConfig={"Labels": {"team": "ml"}},
        SlurmConfig={"NodeType": "Controller"},
        NetworkInterface={"InterfaceType": "efa"},
    )
    arn = sm.create_cluster(
        ClusterName="rich",
        InstanceGroups=[rich],
        NodeRecovery="None",
        Orchestrator={"Eks": {"ClusterArn": "arn:aws:eks:us-east-1:123456789012:cluster/eks"}},
        TieredStorageConfig={"Mode": "Enable", "InstanceMemoryAllocationPercentage": 20},
        NodeProvisioningMode="Continuous",
        ClusterRole=ROLE,
        AutoScaling={"Mode": "Enable", "AutoScalerType": "Karpenter"},
        Tags=[{"Key": "team", "Value": "ml"}],
    )["ClusterArn"]
    described = sm.describe_cluster(ClusterName=arn)
    assert_conforms("DescribeCluster", described)
    assert described["AutoScaling"] == {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "Creating"}
    assert described["NodeRecovery"] == "None"
    assert described["Orchestrator"]["Eks"]["ClusterArn"].endswith(":cluster/eks")
    ctl = described["InstanceGroups"][0]
    assert (ctl["MinCount"], ctl["CurrentImageId"], ctl["DesiredImageId"]) == (1, "default", "default")
    assert ctl["KubernetesConfig"] == {"CurrentLabels": {"team": "ml"}, "DesiredLabels": {"team": "ml"}}
    assert ctl["SlurmConfig"] == {"NodeType": "Controller"}
    assert ctl["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]
    backend.clock.advance(COLD)
    sm.update_cluster(
        ClusterName=arn,
        NodeRecovery="Automatic",
        InstanceGroups=[group("ctl", 2, ImageId="default", InstanceType="ml.m5.xlarge")],
    )
    described = sm.describe_cluster(ClusterName="rich")
    assert_conforms("DescribeCluster", described)
    assert described["NodeRecovery"] == "Automatic"
    assert described["AutoScaling"]["Status"] == "InService"
    assert described["InstanceGroups"][0]["TargetCount"] == 2
    assert "KubernetesConfig" not in described["InstanceGroups"][0]  # replaced by the new spec
    backend.clock.advance(COLD)
    assert described["InstanceGroups"][0]["CurrentCount"] == 1
    assert sm.describe_cluster(ClusterName="rich")["InstanceGroups"][0]["CurrentCount"] == 2
