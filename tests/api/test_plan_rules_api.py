"""Training-plan rules through boto3 and through raw JSON: timing, payment, extensions, targets."""

from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from tests.conformance import assert_conforms
from tests.conftest import create_request
from tests.plan_helpers import START, advance_to, buy, own_inventory
from tests.raw_requests import sagemaker_json

P4D = "ml.p4d.24xlarge"
P5 = "ml.p5.48xlarge"
PST = timezone(timedelta(hours=-8))


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def raw(backend, operation, body):
    """The request-level path: no botocore client-side checks."""
    return sagemaker_json(backend, operation, body)


def test_the_documented_sample_through_boto3(tmp_path):
    """AWS's guide: search at 2025-01-21T11:08:27.704-08:00, 1 x ml.p4d.24xlarge, 15 h, two days."""
    now = datetime(2025, 1, 21, 11, 8, 27, 704000, tzinfo=PST)
    with LocalBackend(start_time=now, root=tmp_path / "root") as backend:
        backend.capacity.clear()
        backend.capacity.add(P4D, 1, "us-east-1a", now - timedelta(days=1), now + timedelta(days=10))
        sm = backend.client()
        response = sm.search_training_plan_offerings(
            InstanceType=P4D,
            InstanceCount=1,
            DurationHours=15,
            TargetResources=["training-job"],
            EndTimeBefore=now + timedelta(days=2),
        )
        assert_conforms("SearchTrainingPlanOfferings", response)
        offerings = response["TrainingPlanOfferings"]
        assert [(o["DurationHours"], o["DurationMinutes"]) for o in offerings] == [
            (15, 51),
            (39, 51),
            (24, 0),
        ]
        first = offerings[0]["ReservedCapacityOfferings"][0]
        assert first["StartTime"].astimezone(PST) == datetime(2025, 1, 21, 11, 39, tzinfo=PST)
        assert first["EndTime"].astimezone(timezone.utc) == datetime(2025, 1, 22, 11, 30, tzinfo=timezone.utc)
        assert offerings[0]["RequestedEndTimeBefore"] == now + timedelta(days=2)


def from_now(backend, days=10):
    backend.capacity.clear()
    backend.capacity.add(P5, 2, "us-east-1a", START, START + timedelta(days=days))


def test_start_time_after_now_means_from_now(sm, backend):
    from_now(backend)
    request = dict(InstanceType=P5, InstanceCount=1, DurationHours=24, TargetResources=["training-job"])
    for moment in (START, START - timedelta(seconds=30)):  # a datetime.now() that is a moment old
        offerings = sm.search_training_plan_offerings(StartTimeAfter=moment, **request)[
            "TrainingPlanOfferings"
        ]
        assert offerings[0]["ReservedCapacityOfferings"][0]["StartTime"] == START + timedelta(minutes=30)
    with pytest.raises(ClientError) as excinfo:
        sm.search_training_plan_offerings(StartTimeAfter=START - timedelta(minutes=2), **request)
    assert error_of(excinfo) == ("ValidationException", "StartTimeAfter must be in the future.")
    status, document = raw(
        backend,
        "SearchTrainingPlanOfferings",
        {**request, "StartTimeAfter": (START - timedelta(seconds=5)).timestamp()},
    )
    assert status == 200 and len(document["TrainingPlanOfferings"]) == 3


def test_a_payment_that_cannot_settle_5_minutes_before_the_start_fails(sm, backend):
    from_now(backend)
    backend.settings.plan_payment_seconds = 30 * 60  # the first block starts 30 min after the search
    arn, offering = buy(sm, backend, "late", count=2, hours=24, pay=False)
    start = offering["ReservedCapacityOfferings"][0]["StartTime"]
    assert start == START + timedelta(minutes=30)
    advance_to(backend, start - timedelta(minutes=5, seconds=1))
    assert sm.describe_training_plan(TrainingPlanName="late")["Status"] == "Pending"
    advance_to(backend, start - timedelta(minutes=5))
    plan = sm.describe_training_plan(TrainingPlanName="late")
    assert_conforms("DescribeTrainingPlan", plan)
    assert (plan["Status"], plan["StatusMessage"]) == (
        "Failed",
        (
            "Payment could not be completed 5 minutes before the first reserved capacity starts; "
            "the reserved capacity was released."
        ),
    )
    again = sm.search_training_plan_offerings(
        InstanceType=P5, InstanceCount=2, DurationHours=24, TargetResources=["training-job"]
    )
    assert again["TrainingPlanOfferings"]  # the capacity is back


def test_an_offering_bought_too_late_to_pay_in_time_fails_at_once(sm, backend):
    from_now(backend)
    offering = sm.search_training_plan_offerings(
        InstanceType=P5, InstanceCount=2, DurationHours=24, TargetResources=["training-job"]
    )["TrainingPlanOfferings"][0]
    backend.clock.advance(26 * 60)  # the first block starts in 4 minutes
    sm.create_training_plan(
        TrainingPlanName="tardy", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
    )
    plan = sm.describe_training_plan(TrainingPlanName="tardy")
    assert plan["Status"] == "Failed" and plan["StatusMessage"].startswith("Payment could not be completed")
    assert {rc["Status"] for rc in plan["ReservedCapacitySummaries"]} == {"Failed"}


def test_a_payment_that_settles_in_time_schedules_the_plan(sm, backend):
    from_now(backend)
    backend.settings.plan_payment_seconds = 25 * 60 - 1
    buy(sm, backend, "in-time", count=2, hours=24, pay=False)
    backend.clock.advance(25 * 60)
    assert sm.describe_training_plan(TrainingPlanName="in-time")["Status"] == "Scheduled"


@pytest.fixture
def long_inventory(backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 0, 150))
    return backend


def extension_search(sm, arn, hours=24):
    return sm.search_training_plan_offerings(TrainingPlanArn=arn, DurationHours=hours)[
        "TrainingPlanExtensionOfferings"
    ]


def test_extensions_only_for_active_or_scheduled_plans_without_pending_payment(sm, backend, long_inventory):
    arn, _ = buy(sm, backend, "grow", count=2, hours=48, pay=False)
    with pytest.raises(ClientError) as excinfo:
        extension_search(sm, arn)
    assert error_of(excinfo) == (
        "ValidationException",
        (
            "Training plan grow is Pending; only Active or Scheduled training plans without a pending "
            "payment can be extended."
        ),
    )
    backend.clock.advance(60)
    end = sm.describe_training_plan(TrainingPlanName="grow")["EndTime"]
    advance_to(backend, end - timedelta(hours=2))
    (offering,) = extension_search(sm, arn)
    advance_to(backend, end)  # the plan has expired; the offering has not
    with pytest.raises(ClientError) as excinfo:
        sm.extend_training_plan(TrainingPlanExtensionOfferingId=offering["TrainingPlanExtensionOfferingId"])
    assert error_of(excinfo)[0] == "ValidationException" and "is Expired" in error_of(excinfo)[1]
    with pytest.raises(ClientError) as excinfo:
        extension_search(sm, arn)
    assert "is Expired" in error_of(excinfo)[1]
    backend.script_plan("broke")
    broke, _ = buy(sm, backend, "broke", count=2, hours=24)
    with pytest.raises(ClientError) as excinfo:
        extension_search(sm, broke)
    assert "is Failed" in error_of(excinfo)[1]


def test_extensions_between_1_hour_and_56_days_before_expiry(sm, backend, long_inventory):
    arn, offering = buy(sm, backend, "far", count=2, hours=24, start_after=START + timedelta(days=56))
    end = offering["ReservedCapacityOfferings"][-1]["EndTime"]
    assert end - backend.clock.now() > timedelta(days=56)
    with pytest.raises(ClientError) as excinfo:
        extension_search(sm, arn)
    assert error_of(excinfo) == (
        "ValidationException",
        (
            "Training plan far can be extended only between 1 hour and 56 days before it expires; "
            f"it expires at {end.astimezone(timezone.utc).isoformat()}."
        ),
    )
    advance_to(backend, end - timedelta(days=56))
    assert extension_search(sm, arn)
    advance_to(backend, end - timedelta(hours=2))
    (found,) = extension_search(sm, arn)
    advance_to(backend, end - timedelta(minutes=59))
    with pytest.raises(ClientError) as excinfo:
        sm.extend_training_plan(TrainingPlanExtensionOfferingId=found["TrainingPlanExtensionOfferingId"])
    assert "between 1 hour and 56 days" in error_of(excinfo)[1]
    assert sm.describe_training_plan(TrainingPlanName="far")["EndTime"] == end  # nothing changed
    status, document = raw(
        backend, "SearchTrainingPlanOfferings", {"TrainingPlanArn": arn, "DurationHours": 24}
    )
    assert (status, document["__type"]) == (400, "ValidationException")


def test_expired_extension_offerings_are_forgotten(sm, backend, long_inventory):
    arn, _ = buy(sm, backend, "grow", count=2, hours=24 * 10)
    plans = backend._emulation.region("us-east-1").training_plans
    for _ in range(3):
        extension_search(sm, arn)
    assert len(plans._extension_offerings) == 3
    backend.clock.advance(timedelta(hours=24))
    (fresh,) = extension_search(sm, arn)
    assert list(plans._extension_offerings) == [fresh["TrainingPlanExtensionOfferingId"]]


@pytest.mark.parametrize("target", ["endpoint", "studio-apps"])
def test_endpoint_and_studio_plans_are_sold_but_not_used_by_jobs_or_clusters(sm, backend, target):
    own_inventory(backend, (P5, 2, "us-east-1a", 0, 4))
    arn, offering = buy(sm, backend, target, count=1, hours=24, target=target)
    assert offering["TargetResources"] == [target]
    plan = sm.describe_training_plan(TrainingPlanName=target)
    assert_conforms("DescribeTrainingPlan", plan)
    assert plan["TargetResources"] == [target] and plan["Status"] == "Scheduled"
    request = create_request("on-" + target, keep_alive=None)
    request["ResourceConfig"].update(InstanceType=P5, InstanceCount=1, TrainingPlanArn=arn)
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**request)
    assert error_of(excinfo) == (
        "ValidationException",
        f"Training plan {target} targets {target}; it cannot be used for training jobs.",
    )
    with pytest.raises(ClientError) as excinfo:
        sm.create_cluster(
            ClusterName="c",
            InstanceGroups=[
                {
                    "InstanceGroupName": "g",
                    "InstanceType": P5,
                    "InstanceCount": 1,
                    "TrainingPlanArn": arn,
                    "ExecutionRole": "arn:aws:iam::123456789012:role/R",
                    "LifeCycleConfig": {"SourceS3Uri": "s3://b/l", "OnCreate": "on_create.sh"},
                }
            ],
        )
    assert error_of(excinfo)[0] == "ValidationException" and f"targets {target}" in error_of(excinfo)[1]


def test_hyperpod_groups_need_a_scheduled_or_active_plan(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 0, 4))
    arn, _ = buy(sm, backend, "hp", count=1, hours=24, target="hyperpod-cluster", pay=False)
    body = {
        "ClusterName": "c",
        "InstanceGroups": [
            {
                "InstanceGroupName": "g",
                "InstanceType": P5,
                "InstanceCount": 1,
                "TrainingPlanArn": arn,
                "ExecutionRole": "arn:aws:iam::123456789012:role/R",
                "LifeCycleConfig": {"SourceS3Uri": "s3://b/l", "OnCreate": "on_create.sh"},
            }
        ],
    }
    status, document = raw(backend, "CreateCluster", body)
    assert (status, document["__type"]) == (400, "ValidationException")
    assert document["message"] == (
        "Training plan hp is Pending; only Scheduled or Active training plans "
        "can be used by an instance group."
    )
    assert sm.list_clusters()["ClusterSummaries"] == []  # nothing was created
    backend.clock.advance(backend.settings.plan_payment_seconds)
    assert raw(backend, "CreateCluster", body)[0] == 200


def test_search_rules_through_raw_json(backend):
    base = {"InstanceType": P5, "InstanceCount": 1, "DurationHours": 24, "TargetResources": ["training-job"]}
    cases = [
        ({"TargetResources": ["notebook"]}, "Member must satisfy enum value set"),
        ({"TargetResources": ["training-job", "endpoint"]}, "exactly one target"),
        ({"InstanceCount": 3}, "InstanceCount 3 is not valid"),
        ({"StartTimeAfter": (START - timedelta(hours=1)).timestamp()}, "must be in the future"),
    ]
    for change, fragment in cases:
        status, document = raw(backend, "SearchTrainingPlanOfferings", {**base, **change})
        assert (status, document["__type"]) == (400, "ValidationException"), change
        assert fragment in document["message"], document
    status, document = raw(backend, "SearchTrainingPlanOfferings", {**base, "TargetResources": ["endpoint"]})
    assert status == 200 and document["TrainingPlanOfferings"]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    hours=st.integers(-5, 200 * 24),
    count=st.sampled_from([0, 1, 2, 3, 8, 64, 300]),
    after=st.none() | st.integers(-3 * 3600, 60 * 86400),
    window=st.none() | st.integers(-86400, 20 * 86400),
    target=st.sampled_from(["training-job", "hyperpod-cluster", "endpoint", "studio-apps", "notebook"]),
)
def test_any_search_is_answered_or_refused_aws_style(backend, hours, count, after, window, target):
    body = {"InstanceType": P5, "InstanceCount": count, "DurationHours": hours, "TargetResources": [target]}
    if after is not None:
        body["StartTimeAfter"] = (START + timedelta(seconds=after)).timestamp()
    if window is not None:
        body["EndTimeBefore"] = (START + timedelta(seconds=(after or 0) + window)).timestamp()
    status, document = raw(backend, "SearchTrainingPlanOfferings", body)
    assert status in (200, 400), document
    if status == 400:
        assert document["__type"] == "ValidationException"
        return
    for offering in document["TrainingPlanOfferings"]:
        total = offering["DurationHours"] * 60 + offering["DurationMinutes"]
        assert total >= hours * 60
        assert offering["TargetResources"] == [target]
        starts = [block["StartTime"] for block in offering["ReservedCapacityOfferings"]]
        assert min(starts) >= (START + timedelta(minutes=30)).timestamp()
