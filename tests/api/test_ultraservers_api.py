"""UltraServer training plans through boto3 and raw JSON: search, buy, describe, list the UltraServers."""

from datetime import timedelta

import pytest
from botocore.exceptions import ClientError

from tests.conformance import assert_conforms
from tests.conftest import create_request
from tests.plan_helpers import START, advance_to
from tests.raw_requests import sagemaker_json

ULTRA = "ml.u-p6e-gb200x72"  # 18 x ml.p6e-gb200.36xlarge
GB200 = "ml.p6e-gb200.36xlarge"


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def raw(backend, operation, body):
    return sagemaker_json(backend, operation, body)


@pytest.fixture
def ultra(backend):
    backend.capacity.clear()
    backend.capacity.add(ULTRA, 3, "us-east-1b", START, START + timedelta(days=10))
    return backend


def search(sm, count=2, hours=48, **extra):
    return sm.search_training_plan_offerings(
        UltraServerType=ULTRA,
        UltraServerCount=count,
        DurationHours=hours,
        TargetResources=["hyperpod-cluster"],
        **extra,
    )


def test_an_ultraserver_search_needs_no_instance_members(sm, ultra):
    response = search(sm)
    assert_conforms("SearchTrainingPlanOfferings", response)
    best = response["TrainingPlanOfferings"][0]
    (block,) = best["ReservedCapacityOfferings"]
    assert (block["ReservedCapacityType"], block["UltraServerType"], block["UltraServerCount"]) == (
        "UltraServer",
        ULTRA,
        2,
    )
    assert (block["InstanceType"], block["InstanceCount"], block["AvailabilityZone"]) == (
        GB200,
        36,
        "us-east-1b",
    )
    assert search(sm, count=4)["TrainingPlanOfferings"] == []
    both = search(sm, InstanceType=GB200, InstanceCount=36)["TrainingPlanOfferings"]
    assert len(both) == len(response["TrainingPlanOfferings"])


@pytest.mark.parametrize(
    "body, message",
    [
        ({"UltraServerType": ULTRA}, "Value null at 'ultraServerCount' failed to satisfy constraint"),
        ({"UltraServerCount": 1}, "Value null at 'ultraServerType' failed to satisfy constraint"),
        (
            {"UltraServerType": "ml.u-nothing", "UltraServerCount": 1},
            "UltraServerType ml.u-nothing is not available",
        ),
        (
            {"UltraServerType": ULTRA, "UltraServerCount": 1, "InstanceType": "ml.p5.48xlarge"},
            "InstanceType ml.p5.48xlarge does not match 1 x ml.u-p6e-gb200x72 UltraServers",
        ),
        (
            {"UltraServerType": ULTRA, "UltraServerCount": 1, "InstanceCount": 16},
            "InstanceCount 16 does not match",
        ),
        (
            {"UltraServerType": ULTRA, "UltraServerCount": 0},
            "Member must have value greater than or equal to 1",
        ),
    ],
)
def test_ultraserver_search_rules_through_raw_json(backend, ultra, body, message):
    status, document = raw(
        backend,
        "SearchTrainingPlanOfferings",
        {"DurationHours": 24, "TargetResources": ["hyperpod-cluster"], **body},
    )
    assert (status, document["__type"]) == (400, "ValidationException")
    assert message in document["message"]


def test_an_ultraserver_plan_counts_spares_and_lists_its_ultraservers(sm, backend, ultra):
    offering = search(sm)["TrainingPlanOfferings"][0]
    arn = sm.create_training_plan(
        TrainingPlanName="nvl",
        TrainingPlanOfferingId=offering["TrainingPlanOfferingId"],
        SpareInstanceCountPerUltraServer=2,
    )["TrainingPlanArn"]
    backend.clock.advance(60)
    plan = sm.describe_training_plan(TrainingPlanName="nvl")
    assert_conforms("DescribeTrainingPlan", plan)
    assert (plan["TotalInstanceCount"], plan["TotalUltraServerCount"], plan["AvailableInstanceCount"]) == (
        36,
        2,
        0,
    )
    (rc,) = plan["ReservedCapacitySummaries"]
    assert (rc["ReservedCapacityType"], rc["UltraServerType"], rc["UltraServerCount"]) == (
        "UltraServer",
        ULTRA,
        2,
    )
    assert rc["AvailabilityZoneId"] == "use1-az2"
    summary = sm.list_training_plans()["TrainingPlanSummaries"][0]
    assert summary["TotalUltraServerCount"] == 2

    advance_to(backend, rc["StartTime"])
    plan = sm.describe_training_plan(TrainingPlanName="nvl")
    assert (plan["Status"], plan["AvailableInstanceCount"], plan["AvailableSpareInstanceCount"]) == (
        "Active",
        32,
        4,
    )
    capacity = sm.describe_reserved_capacity(ReservedCapacityArn=rc["ReservedCapacityArn"])
    assert_conforms("DescribeReservedCapacity", capacity)
    assert capacity["UltraServerSummary"] == {
        "UltraServerType": ULTRA,
        "InstanceType": GB200,
        "UltraServerCount": 2,
        "AvailableSpareInstanceCount": 4,
        "UnhealthyInstanceCount": 0,
    }
    listed = sm.list_ultra_servers_by_reserved_capacity(ReservedCapacityArn=rc["ReservedCapacityArn"])
    assert_conforms("ListUltraServersByReservedCapacity", listed)
    servers = listed["UltraServers"]
    assert len(servers) == 2 and len({s["UltraServerId"] for s in servers}) == 2
    assert all(
        (
            s["TotalInstanceCount"],
            s["ConfiguredSpareInstanceCount"],
            s["AvailableInstanceCount"],
            s["HealthStatus"],
            s["AvailabilityZone"],
        )
        == (18, 2, 16, "OK", "us-east-1b")
        for s in servers
    )
    first = sm.list_ultra_servers_by_reserved_capacity(
        ReservedCapacityArn=rc["ReservedCapacityArn"], MaxResults=1
    )
    second = sm.list_ultra_servers_by_reserved_capacity(
        ReservedCapacityArn=rc["ReservedCapacityArn"], MaxResults=1, NextToken=first["NextToken"]
    )
    assert [s["UltraServerId"] for s in first["UltraServers"] + second["UltraServers"]] == [
        s["UltraServerId"] for s in servers
    ]
    assert "NextToken" not in second
    assert sm.describe_training_plan(TrainingPlanName="nvl")["TrainingPlanArn"] == arn


def test_spares_default_to_one_and_must_leave_instances(sm, backend, ultra):
    offering = search(sm, count=1)["TrainingPlanOfferings"][0]["TrainingPlanOfferingId"]
    status, document = raw(
        backend,
        "CreateTrainingPlan",
        {
            "TrainingPlanName": "greedy",
            "TrainingPlanOfferingId": offering,
            "SpareInstanceCountPerUltraServer": 18,
        },
    )
    assert (status, document["__type"]) == (400, "ValidationException")
    assert document["message"] == (
        "SpareInstanceCountPerUltraServer 18 must be less than the 18 instances "
        "of an ml.u-p6e-gb200x72 UltraServer."
    )
    # Nothing changed: the offering can still be bought.
    sm.create_training_plan(TrainingPlanName="default", TrainingPlanOfferingId=offering)
    backend.clock.advance(timedelta(days=1))
    plan = sm.describe_training_plan(TrainingPlanName="default")
    assert (plan["Status"], plan["AvailableInstanceCount"], plan["AvailableSpareInstanceCount"]) == (
        "Active",
        17,
        1,
    )


def test_instance_plans_take_no_spares_and_list_no_ultraservers(sm, backend):
    backend.capacity.clear()
    backend.capacity.add("ml.p5.48xlarge", 2, "us-east-1a", START, START + timedelta(days=5))
    offering = sm.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge", InstanceCount=1, DurationHours=24, TargetResources=["training-job"]
    )["TrainingPlanOfferings"][0]
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_plan(
            TrainingPlanName="p",
            TrainingPlanOfferingId=offering["TrainingPlanOfferingId"],
            SpareInstanceCountPerUltraServer=1,
        )
    assert error_of(excinfo) == (
        "ValidationException",
        "SpareInstanceCountPerUltraServer applies only to UltraServer training plan offerings.",
    )
    sm.create_training_plan(TrainingPlanName="p", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"])
    rc = sm.describe_training_plan(TrainingPlanName="p")["ReservedCapacitySummaries"][0][
        "ReservedCapacityArn"
    ]
    assert sm.list_ultra_servers_by_reserved_capacity(ReservedCapacityArn=rc)["UltraServers"] == []
    with pytest.raises(sm.exceptions.ResourceNotFound):
        sm.list_ultra_servers_by_reserved_capacity(ReservedCapacityArn=rc[:-4] + "0000")


def test_default_inventory_sells_ultraservers(sm):
    offerings = search(sm, count=1)["TrainingPlanOfferings"]
    assert offerings and offerings[0]["ReservedCapacityOfferings"][0]["ReservedCapacityType"] == "UltraServer"


def test_jobs_and_instance_groups_use_all_but_the_spares(sm, backend):
    backend.capacity.clear()
    backend.capacity.add(ULTRA, 2, "us-east-1b", START, START + timedelta(days=10))
    plans = {}
    for target in ("training-job", "hyperpod-cluster"):
        offering = sm.search_training_plan_offerings(
            UltraServerType=ULTRA, UltraServerCount=1, DurationHours=48, TargetResources=[target]
        )["TrainingPlanOfferings"][0]
        plans[target] = sm.create_training_plan(
            TrainingPlanName=target, TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
        )["TrainingPlanArn"]
    backend.clock.advance(60)

    request = create_request("big", keep_alive=None)
    request["ResourceConfig"].update(
        InstanceType=GB200, InstanceCount=18, TrainingPlanArn=plans["training-job"]
    )
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**request)
    assert error_of(excinfo) == (
        "ValidationException",
        "The instance count 18 exceeds the 17 usable instances of training plan training-job.",
    )
    request["ResourceConfig"]["InstanceCount"] = 17
    sm.create_training_job(**request)
    group = {
        "InstanceGroupName": "g",
        "InstanceType": GB200,
        "InstanceCount": 18,
        "TrainingPlanArn": plans["hyperpod-cluster"],
        "ExecutionRole": "arn:aws:iam::123456789012:role/R",
        "LifeCycleConfig": {"SourceS3Uri": "s3://b/l", "OnCreate": "on_create.sh"},
    }
    with pytest.raises(ClientError) as excinfo:
        sm.create_cluster(ClusterName="c", InstanceGroups=[group])
    assert "exceeds the 17 instances" in error_of(excinfo)[1]

    start = sm.describe_training_plan(TrainingPlanName="training-job")["StartTime"]
    advance_to(backend, start)
    plan = sm.describe_training_plan(TrainingPlanName="training-job")
    assert (
        plan["InUseInstanceCount"],
        plan["AvailableInstanceCount"],
        plan["AvailableSpareInstanceCount"],
    ) == (17, 0, 1)
    rc = plan["ReservedCapacitySummaries"][0]["ReservedCapacityArn"]
    (server,) = sm.list_ultra_servers_by_reserved_capacity(ReservedCapacityArn=rc)["UltraServers"]
    assert (
        server["InUseInstanceCount"],
        server["AvailableInstanceCount"],
        server["AvailableSpareInstanceCount"],
    ) == (17, 0, 1)
