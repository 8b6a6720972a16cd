"""Training jobs queued on training plans, through boto3."""

from datetime import timedelta

import pytest
from botocore.exceptions import ClientError

from tests.conformance import assert_conforms
from tests.conftest import create_request
from tests.plan_helpers import advance_to, buy, day, own_inventory

P5 = "ml.p5.48xlarge"


def plan_job(name, plan_arn, count=1, keep_alive=None, **stopping):
    request = create_request(name, keep_alive=keep_alive)
    request["ResourceConfig"].update(InstanceType=P5, InstanceCount=count, TrainingPlanArn=plan_arn)
    if stopping:
        request["StoppingCondition"] = {"MaxRuntimeInSeconds": 86400, **stopping}
    return request


def counts(sm, name):
    plan = sm.describe_training_plan(TrainingPlanName=name)
    return plan["InUseInstanceCount"], plan["AvailableInstanceCount"]


@pytest.fixture
def plan(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 3), (P5, 2, "us-east-1b", 5, 6))
    arn, _ = buy(sm, backend, "plan", count=2, hours=48)  # two 1-day blocks: day 2 and day 5
    return arn


def status(sm, name):
    job = sm.describe_training_job(TrainingJobName=name)
    return job["TrainingJobStatus"], job["SecondaryStatus"]


def test_job_waits_for_the_plan_then_runs_on_it(sm, backend, plan):
    sm.create_training_job(**plan_job("j", plan))
    assert status(sm, "j") == ("InProgress", "Pending")
    backend.clock.advance(timedelta(hours=3))
    assert status(sm, "j") == ("InProgress", "Pending")  # plan Scheduled: nothing runs
    advance_to(backend, day(2))
    assert status(sm, "j") == ("InProgress", "Starting")
    assert counts(sm, "plan") == (1, 1)
    listed = sm.list_training_jobs(TrainingPlanArnEquals=plan)["TrainingJobSummaries"]
    assert [(s["TrainingJobName"], s["TrainingPlanArn"]) for s in listed] == [("j", plan)]
    backend.clock.advance(900)
    described = sm.describe_training_job(TrainingJobName="j")
    assert_conforms("DescribeTrainingJob", described)
    assert described["TrainingJobStatus"] == "Completed"
    assert described["ResourceConfig"]["TrainingPlanArn"] == plan
    assert [t["Status"] for t in described["SecondaryStatusTransitions"]][:2] == ["Pending", "Starting"]
    assert counts(sm, "plan") == (0, 2)


def test_job_interrupted_at_the_block_cutoff_resumes_in_the_next_block(sm, backend, plan):
    backend.settings.job_runtime_seconds = 3 * 3600
    advance_to(backend, day(3) - timedelta(hours=2))
    sm.create_training_job(**plan_job("long", plan, count=2))
    job = backend.training_job("long")
    backend.clock.advance(timedelta(minutes=5))
    assert job.capacity_block_expiration == day(3)
    advance_to(backend, day(3) - timedelta(minutes=30))
    assert status(sm, "long") == ("InProgress", "Pending")
    assert counts(sm, "plan") == (0, 2)
    advance_to(backend, day(5))
    assert status(sm, "long") == ("InProgress", "Starting")
    assert backend.training_job("long").block.availability_zone == "us-east-1b"
    backend.clock.advance(timedelta(hours=3))
    described = sm.describe_training_job(TrainingJobName="long")
    assert described["TrainingJobStatus"] == "Completed"
    assert described["TrainingTimeInSeconds"] == 3 * 3600  # progress was kept
    assert "Pending" in [t["Status"] for t in described["SecondaryStatusTransitions"]][2:]


def test_job_fails_with_capacity_error_when_no_block_is_left(sm, backend, plan):
    backend.settings.job_runtime_seconds = 3 * 3600
    advance_to(backend, day(6) - timedelta(hours=2))
    sm.create_training_job(**plan_job("late", plan))
    advance_to(backend, day(6))
    described = sm.describe_training_job(TrainingJobName="late")
    assert described["TrainingJobStatus"] == "Failed"
    assert described["FailureReason"].startswith("CapacityError")


def test_pending_time_counts_only_while_the_plan_is_active(sm, backend, plan):
    """An explicit MaxPendingTimeInSeconds that runs out stops the job ("pending before it is stopped")."""
    backend.script_job("first", runtime_seconds=10 * 3600)
    sm.create_training_job(**plan_job("first", plan, count=2))
    sm.create_training_job(**plan_job("second", plan, count=1, MaxPendingTimeInSeconds=7200))
    advance_to(backend, day(2))  # a day and a half of Scheduled: not counted
    assert status(sm, "second") == ("InProgress", "Pending")
    backend.clock.advance(7199)
    assert status(sm, "second") == ("InProgress", "Pending")
    backend.clock.advance(1)
    described = sm.describe_training_job(TrainingJobName="second")
    assert_conforms("DescribeTrainingJob", described)
    assert (described["TrainingJobStatus"], described["SecondaryStatus"]) == ("Stopped", "Stopped")
    assert "FailureReason" not in described
    assert described["SecondaryStatusTransitions"][-1]["StatusMessage"] == (
        "Training job stopped: the maximum allowed pending time was exceeded"
    )
    assert "TrainingTimeInSeconds" not in described or described["TrainingTimeInSeconds"] == 0
    assert counts(sm, "plan") == (2, 0)  # "first" still runs


def test_only_the_default_pending_limit_ends_in_insufficient_capacity(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 10))
    arn, _ = buy(sm, backend, "long", count=2, hours=24 * 8)
    advance_to(backend, day(2))
    backend.script_job("hog", runtime_seconds=3 * 86400)
    sm.create_training_job(**plan_job("hog", arn, count=2, MaxRuntimeInSeconds=4 * 86400))
    sm.create_training_job(**plan_job("waiter", arn, count=1))  # the default limit: 2 days
    backend.clock.advance(timedelta(days=2) - timedelta(seconds=1))
    assert status(sm, "waiter") == ("InProgress", "Pending")
    backend.clock.advance(1)
    described = sm.describe_training_job(TrainingJobName="waiter")
    assert (described["TrainingJobStatus"], described["SecondaryStatus"]) == ("Failed", "Failed")
    assert described["FailureReason"].startswith("InsufficientCapacityError")


def test_waiting_job_starts_when_instances_free_up(sm, backend, plan):
    advance_to(backend, day(2))
    sm.create_training_job(**plan_job("a", plan, count=2))
    sm.create_training_job(**plan_job("b", plan, count=1))
    assert status(sm, "b") == ("InProgress", "Pending")
    backend.clock.advance(780)
    assert status(sm, "a")[0] == "Completed"
    assert status(sm, "b") == ("InProgress", "Starting")


@pytest.mark.parametrize(
    "change,code,fragment",
    [
        ({"InstanceType": "ml.p4d.24xlarge"}, "ValidationException", "does not match"),
        ({"InstanceCount": 4}, "ValidationException", "exceeds"),
        (
            {"TrainingPlanArn": "arn:aws:sagemaker:us-east-1:123456789012:training-plan/nope"},
            "ResourceNotFound",
            "does not exist",
        ),
    ],
)
def test_job_must_fit_its_plan(sm, plan, change, code, fragment):
    request = plan_job("bad", plan)
    request["ResourceConfig"].update(change)
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**request)
    error = excinfo.value.response["Error"]
    assert error["Code"] == code and fragment in error["Message"]


def test_plan_must_target_training_jobs_and_be_usable(sm, backend):
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 3))
    hyperpod, _ = buy(sm, backend, "hp", count=1, hours=24, target="hyperpod-cluster")
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**plan_job("x", hyperpod))
    assert "targets hyperpod-cluster" in excinfo.value.response["Error"]["Message"]
    pending, _ = buy(sm, backend, "unpaid", count=1, hours=24, pay=False)
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**plan_job("y", pending))
    assert "is Pending" in excinfo.value.response["Error"]["Message"]


def test_warm_pool_on_a_plan_holds_its_instances_until_the_cutoff(sm, backend, plan):
    advance_to(backend, day(2))
    sm.create_training_job(**plan_job("w1", plan, keep_alive=3600))
    backend.clock.advance(780)
    assert sm.describe_training_job(TrainingJobName="w1")["WarmPoolStatus"]["Status"] == "Available"
    assert counts(sm, "plan") == (1, 1)  # the pool keeps the plan's instance
    sm.create_training_job(**plan_job("w2", plan, keep_alive=3600))
    assert sm.describe_training_job(TrainingJobName="w2")["WarmPoolStatus"]["Status"] == "InUse"
    assert counts(sm, "plan") == (1, 1)
    other = create_request("off-plan", keep_alive=3600)
    other["ResourceConfig"]["InstanceType"] = P5
    sm.create_training_job(**other)  # not on the plan: does not match the plan's pool
    assert "WarmPoolStatus" not in sm.describe_training_job(TrainingJobName="off-plan")
    backend.clock.advance(610)
    sm.update_training_job(TrainingJobName="w2", ResourceConfig={"KeepAlivePeriodInSeconds": 3600})
    advance_to(backend, day(3) - timedelta(minutes=30))
    assert sm.describe_training_job(TrainingJobName="w2")["WarmPoolStatus"]["Status"] == "Terminated"
    assert counts(sm, "plan") == (0, 2)
