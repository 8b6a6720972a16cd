"""The control API under /_sagemaker_plans_local/: what LocalBackend does in process, over HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest
from botocore.exceptions import ClientError

from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import create_request
from tests.server.clients import client, control, raw


def test_health_names_the_services(sagemaker_server):
    assert control(sagemaker_server, "health", method="GET") == (
        200,
        {
            "status": "running",
            "services": ["sagemaker", "s3", "sts", "iam", "logs", "resourcegroupstaggingapi"],
        },
    )


def test_the_clock_is_shown_and_advanced_for_every_account(sagemaker_server):
    other = sagemaker_server.backend("111122223333")
    assert control(sagemaker_server, "clock", method="GET") == (
        200,
        {"now": FIXTURE_START.isoformat(), "manual": True},
    )
    later = FIXTURE_START + timedelta(seconds=900.5)
    assert control(sagemaker_server, "clock", {"advance_seconds": 900.5}) == (
        200,
        {"now": later.isoformat(), "manual": True},
    )
    assert sagemaker_server.backend().clock.now() == other.clock.now() == later
    assert sagemaker_server.backend("210987654321").clock.now() == later  # an account first seen now


@pytest.mark.parametrize(
    "document", [{}, {"advance_seconds": -1}, {"advance_seconds": "9"}, {"advance_seconds": True}]
)
def test_a_bad_advance_is_a_400(sagemaker_server, document):
    status, answer = control(sagemaker_server, "clock", document)
    assert (status, answer["error"]) == (400, "BadRequest")
    assert sagemaker_server.backend().clock.now() == FIXTURE_START


def test_a_wall_clock_is_not_advanced(tmp_path):
    with LocalServer(root=tmp_path / "server") as server:
        status, answer = control(server, "clock", {"advance_seconds": 60})
        assert (status, answer["error"], control(server, "clock", method="GET")[1]["manual"]) == (
            409,
            "WallClock",
            False,
        )


def test_reset_gives_fresh_backends_with_the_same_settings(sagemaker_server):
    sm = client(sagemaker_server)
    sm.create_training_job(**create_request("before-reset"))
    assert control(sagemaker_server, "settings", {"job_runtime_seconds": 42})[0] == 200
    control(sagemaker_server, "clock", {"advance_seconds": 60})
    assert control(sagemaker_server, "reset", {}) == (
        200,
        {"status": "reset", "now": FIXTURE_START.isoformat()},
    )
    assert sm.list_training_jobs()["TrainingJobSummaries"] == []
    assert sagemaker_server.backend().settings.job_runtime_seconds == 42


def test_capacity_is_cleared_and_added(sagemaker_server):
    sm = client(sagemaker_server)
    search = dict(
        InstanceType="ml.p5.48xlarge", InstanceCount=2, DurationHours=24, TargetResources=["training-job"]
    )
    assert control(sagemaker_server, "capacity/clear", {}) == (200, {"status": "cleared"})
    assert sm.search_training_plan_offerings(**search)["TrainingPlanOfferings"] == []
    block = {
        "instance_type": "ml.p5.48xlarge",
        "count": 2,
        "availability_zone": "us-east-1a",
        "start": "2026-01-02T11:30:00Z",
        "end": "2026-01-04T11:30:00Z",
    }
    assert control(sagemaker_server, "capacity", block) == (200, {"status": "added"})
    offerings = sm.search_training_plan_offerings(**search)["TrainingPlanOfferings"]
    zones = {
        reserved["AvailabilityZone"]
        for offering in offerings
        for reserved in offering["ReservedCapacityOfferings"]
    }
    assert zones == {"us-east-1a"}


@pytest.mark.parametrize(
    "change",
    [
        {"count": 0},
        {"count": "2"},
        {"start": "yesterday"},
        {"end": "2026-01-01T00:00:00Z"},
        {"instance_type": 5},
    ],
)
def test_bad_capacity_is_a_400(sagemaker_server, change):
    block = {"instance_type": "ml.p5.48xlarge", "count": 2, "availability_zone": "us-east-1a"}
    block.update({"start": "2026-01-02T11:30:00Z", "end": "2026-01-04T11:30:00Z", **change})
    assert control(sagemaker_server, "capacity", block)[0] == 400


def test_a_scripted_job_fails_as_scripted(sagemaker_server):
    script = {
        "job_name": "doomed",
        "outcome": "AlgorithmError",
        "runtime_seconds": 30,
        "failure_reason": "boom",
    }
    assert control(sagemaker_server, "scripts/jobs", script) == (200, {"status": "scripted"})
    sm = client(sagemaker_server)
    sm.create_training_job(**create_request("doomed"))
    control(sagemaker_server, "clock", {"advance_seconds": 3600})
    described = sm.describe_training_job(TrainingJobName="doomed")
    assert (described["TrainingJobStatus"], described["FailureReason"]) == ("Failed", "AlgorithmError: boom")
    assert control(sagemaker_server, "scripts/jobs", {"job_name": "x", "outcome": "Exploded"})[0] == 400


def test_settings_are_changed_per_account_and_checked(sagemaker_server):
    status, settings = control(
        sagemaker_server, "settings?account=111122223333", {"instance_quota": {"ml.m5.large": 1}}
    )
    assert (status, settings["instance_quota"]) == (200, {"ml.m5.large": 1})
    assert sagemaker_server.backend("111122223333").settings.instance_quota == {"ml.m5.large": 1}
    assert sagemaker_server.backend().settings.instance_quota != {"ml.m5.large": 1}
    for bad in (
        {"no_such_setting": 1},
        {"job_runtime_seconds": "10"},
        {"fast_forward_waits": 1},
        {"warm_pool_quota": -1},
    ):
        assert control(sagemaker_server, "settings", bad)[0] == 400
    assert control(sagemaker_server, "settings?account=abc", {})[0] == 400


def test_a_settings_change_reaches_the_jobs(sagemaker_server):
    control(sagemaker_server, "settings", {"instance_quota": 0})
    with pytest.raises(ClientError) as raised:
        client(sagemaker_server).create_training_job(**create_request("over-quota"))
    assert raised.value.response["Error"]["Code"] == "ResourceLimitExceeded"


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "no/such/path", None, 404),
        ("DELETE", "clock", None, 405),
        ("POST", "clock", b"not json", 400),
        ("POST", "clock", b"[1, 2]", 400),
        ("GET", "reset", None, 405),
    ],
)
def test_bad_control_requests(sagemaker_server, method, path, body, status):
    json_type = {"Content-Type": "application/json"}  # any other type is a 415 (tests/server/test_guard.py)
    answered, headers, answer = raw(
        sagemaker_server, "/_sagemaker_plans_local/" + path, body, method, json_type
    )
    assert answered == status
    assert headers["Content-Type"] == "application/json"
    assert b'"message"' in answer


def test_a_scripted_plan_payment_fails(sagemaker_server):
    assert control(sagemaker_server, "scripts/plans", {"training_plan_name": "unpaid"}) == (
        200,
        {"status": "scripted"},
    )
    sm = client(sagemaker_server)
    offering = sm.search_training_plan_offerings(
        InstanceType="ml.p5.48xlarge", InstanceCount=2, DurationHours=48, TargetResources=["training-job"]
    )["TrainingPlanOfferings"][0]
    sm.create_training_plan(
        TrainingPlanName="unpaid", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"]
    )
    control(sagemaker_server, "clock", {"advance_seconds": 3600})
    assert sm.describe_training_plan(TrainingPlanName="unpaid")["Status"] == "Failed"
    assert (
        control(sagemaker_server, "scripts/plans", {"training_plan_name": "x", "payment_succeeds": 1})[0]
        == 400
    )


def test_next_change_moves_every_account_to_the_earliest_scheduled_change(sagemaker_server):
    idle = sagemaker_server.backend("111122223333")
    assert control(sagemaker_server, "clock", {"next_change": True}) == (
        200,
        {"now": FIXTURE_START.isoformat(), "manual": True, "changed": False},  # nothing scheduled
    )
    client(sagemaker_server).create_training_job(**create_request("stepped", keep_alive=None))
    backend = sagemaker_server.backend()
    seen = []
    while (due := backend.clock.next_due()) is not None:
        status, answer = control(sagemaker_server, "clock", {"next_change": True})
        assert (status, answer) == (200, {"now": due.isoformat(), "manual": True, "changed": True})
        assert idle.clock.now() == backend.clock.now() == due  # one time line
        seen.append(backend.training_job("stepped").status)
    described = client(sagemaker_server).describe_training_job(TrainingJobName="stepped")
    assert (seen[-1], backend.clock.now()) == ("Completed", described["TrainingEndTime"])
    assert control(sagemaker_server, "clock", {"next_change": True})[1]["changed"] is False


@pytest.mark.parametrize(
    "document",
    [
        {"next_change": False},
        {"next_change": "yes"},
        {"next_change": 1},
        {"next_change": True, "advance_seconds": 5},
    ],
)
def test_a_bad_next_change_is_a_400(sagemaker_server, document):
    client(sagemaker_server).create_training_job(**create_request("waiting"))
    status, answer = control(sagemaker_server, "clock", document)
    assert (status, answer["error"]) == (400, "BadRequest")
    assert sagemaker_server.backend().clock.now() == FIXTURE_START


def test_a_wall_clock_has_no_next_change_to_move_to(tmp_path):
    with LocalServer(root=tmp_path / "server") as server:
        status, answer = control(server, "clock", {"next_change": True})
        assert (status, answer["error"]) == (409, "WallClock")
