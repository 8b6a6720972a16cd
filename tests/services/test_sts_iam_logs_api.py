"""STS, IAM and CloudWatch Logs answered in-process; the log store's reading semantics."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.sdk.major import logs_module, session_module
from sagemaker_plans_local.services.logs.streams import (
    InvalidLogRequest,
    LogGroupAlreadyExists,
    LogGroupNotFound,
    LogStore,
    LogStreamNotFound,
)

from . import ACCOUNT, START, Services

GROUP = "/aws/sagemaker/TrainingJobs"
MS = 1000


@pytest.fixture
def services(tmp_path):
    return Services(tmp_path)


@pytest.fixture
def logs(services):
    return services.client("logs")


def error_of(call, **kwargs) -> dict:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    return caught.value.response


# -- STS and IAM ---------------------------------------------------------------------------------


def test_get_caller_identity_as_the_sdk_asks_it(services):
    sts_regional_endpoint = session_module().sts_regional_endpoint

    for region in ("us-east-1", "eu-west-1"):
        sts = services.client("sts", region=region, endpoint_url=sts_regional_endpoint(region))
        identity = sts.get_caller_identity()
        assert identity["Account"] == ACCOUNT
        assert identity["Arn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/SageMakerRole/SageMaker"
        role = services.client("iam").get_role(RoleName="SageMakerRole")["Role"]
        assert identity["UserId"] == f"{role['RoleId']}:SageMaker"  # as AWS: the role's id, the session
        assert identity["ResponseMetadata"]["HTTPStatusCode"] == 200
        assert identity["ResponseMetadata"]["RequestId"]


def test_every_role_exists(services):
    iam = services.client("iam")
    role = iam.get_role(RoleName="SageMakerRole")["Role"]
    assert role["Arn"] == f"arn:aws:iam::{ACCOUNT}:role/SageMakerRole"
    assert role["RoleName"] == "SageMakerRole" and role["Path"] == "/"
    assert role["CreateDate"] == START
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {
        "Service": "sagemaker.amazonaws.com"
    }
    services.clock.advance(3600)
    assert iam.get_role(RoleName="SageMakerRole")["Role"]["CreateDate"] == START
    assert iam.get_role(RoleName="Other")["Role"]["CreateDate"] == START + timedelta(hours=1)
    assert role["RoleId"] != iam.get_role(RoleName="Other")["Role"]["RoleId"]


def test_iam_validates_like_aws_and_refuses_the_rest_with_501(services):
    iam = services.client("iam", config=Config(parameter_validation=False))
    invalid = error_of(iam.get_role, RoleName="bad name!")
    assert invalid["Error"]["Code"] == "ValidationError"
    assert invalid["Error"]["Message"].startswith(
        "1 validation error detected: Value 'bad name!' at 'roleName' "
        "failed to satisfy constraint: Member must satisfy regular "
        "expression pattern: "
    )
    assert invalid["ResponseMetadata"]["HTTPStatusCode"] == 400
    missing = error_of(iam.get_role)
    assert "Member must not be null" in missing["Error"]["Message"]
    other = error_of(iam.list_roles)
    assert other["Error"]["Code"] == "NotImplemented" and "ListRoles" in other["Error"]["Message"]
    assert other["ResponseMetadata"]["HTTPStatusCode"] == 501


def test_sagemaker_expands_a_role_name_through_iam(services):
    session = session_module().Session(
        boto_session=services.session(),
        sagemaker_client=object(),
        sagemaker_runtime_client=object(),
        sagemaker_featurestore_runtime_client=object(),
        sagemaker_metrics_client=object(),
    )
    assert session.expand_role("SageMakerRole") == f"arn:aws:iam::{ACCOUNT}:role/SageMakerRole"


def test_a_bug_answers_500_internal_failure_on_query_services(services, monkeypatch):
    sts = services.client("sts")
    monkeypatch.setattr(
        services.apis["sts"], "_handlers", {"GetCallerIdentity": lambda region, params: 1 / 0}
    )
    answer = error_of(sts.get_caller_identity)
    assert (answer["Error"]["Code"], answer["ResponseMetadata"]["HTTPStatusCode"]) == ("InternalFailure", 500)


# -- CloudWatch Logs API ----------------------------------------------------------------------------


def test_missing_group_and_stream(logs):
    missing = error_of(logs.describe_log_streams, logGroupName=GROUP)
    assert missing["Error"] == {
        "Code": "ResourceNotFoundException",
        "Message": "The specified log group does not exist.",
    }
    with pytest.raises(logs.exceptions.ResourceNotFoundException):
        logs.get_log_events(logGroupName=GROUP, logStreamName="job/algo-1")
    logs.create_log_group(logGroupName=GROUP)
    stream = error_of(logs.get_log_events, logGroupName=GROUP, logStreamName="job/algo-1")
    assert stream["Error"]["Message"] == "The specified log stream does not exist."
    with pytest.raises(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_group(logGroupName=GROUP)
    logs.create_log_stream(logGroupName=GROUP, logStreamName="s")
    with pytest.raises(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_stream(logGroupName=GROUP, logStreamName="s")


def test_put_and_read_events(services, logs):
    logs.create_log_group(logGroupName="app")
    logs.create_log_stream(logGroupName="app", logStreamName="main")
    base = int(START.timestamp() * MS)
    logs.put_log_events(
        logGroupName="app",
        logStreamName="main",
        logEvents=[{"timestamp": base + i, "message": f"line {i}"} for i in range(5)],
    )
    answer = logs.get_log_events(logGroupName="app", logStreamName="main", startFromHead=True, limit=3)
    assert [e["message"] for e in answer["events"]] == ["line 0", "line 1", "line 2"]
    assert answer["events"][0] == {"timestamp": base, "message": "line 0", "ingestionTime": base}
    rest = logs.get_log_events(logGroupName="app", logStreamName="main", nextToken=answer["nextForwardToken"])
    assert [e["message"] for e in rest["events"]] == ["line 3", "line 4"]
    done = logs.get_log_events(logGroupName="app", logStreamName="main", nextToken=rest["nextForwardToken"])
    assert done["events"] == [] and done["nextForwardToken"] == rest["nextForwardToken"]
    tail = logs.get_log_events(logGroupName="app", logStreamName="main", limit=2)
    assert [e["message"] for e in tail["events"]] == ["line 3", "line 4"]
    back = logs.get_log_events(logGroupName="app", logStreamName="main", nextToken=tail["nextBackwardToken"])
    assert [e["message"] for e in back["events"]] == ["line 0", "line 1", "line 2"]
    window = logs.get_log_events(
        logGroupName="app", logStreamName="main", startTime=base + 1, endTime=base + 3, startFromHead=True
    )
    assert [e["message"] for e in window["events"]] == ["line 1", "line 2"]
    out_of_order = error_of(
        logs.put_log_events,
        logGroupName="app",
        logStreamName="main",
        logEvents=[{"timestamp": base + 10, "message": "b"}, {"timestamp": base, "message": "a"}],
    )
    assert out_of_order["Error"]["Code"] == "InvalidParameterException"
    bad_token = error_of(
        logs.get_log_events, logGroupName="app", logStreamName="main", nextToken="f/nonsense"
    )
    assert bad_token["Error"]["Code"] == "InvalidParameterException"


def test_describe_log_streams_orders_and_pages(services, logs):
    for index, name in enumerate(["job-b/algo-1-1", "job-a/algo-2-1", "job-a/algo-1-1", "other/x"]):
        services.logs.append(GROUP, name, START + timedelta(seconds=10 - index), f"from {name}")
    answer = logs.describe_log_streams(
        logGroupName=GROUP, logStreamNamePrefix="job-a/", orderBy="LogStreamName", limit=1
    )
    assert [s["logStreamName"] for s in answer["logStreams"]] == ["job-a/algo-1-1"]
    stream = answer["logStreams"][0]
    assert stream["arn"] == f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:{GROUP}:log-stream:job-a/algo-1-1"
    assert (
        stream["firstEventTimestamp"] == stream["lastEventTimestamp"] == int(START.timestamp() * MS) + 8 * MS
    )
    following = logs.describe_log_streams(
        logGroupName=GROUP, logStreamNamePrefix="job-a/", nextToken=answer["nextToken"], limit=1
    )
    assert [s["logStreamName"] for s in following["logStreams"]] == ["job-a/algo-2-1"]
    assert "nextToken" not in following
    latest = logs.describe_log_streams(logGroupName=GROUP, orderBy="LastEventTime", descending=True)
    assert [s["logStreamName"] for s in latest["logStreams"]][0] == "job-b/algo-1-1"
    refused = error_of(
        logs.describe_log_streams, logGroupName=GROUP, orderBy="LastEventTime", logStreamNamePrefix="job"
    )
    assert refused["Error"]["Code"] == "InvalidParameterException"


def test_logs_validates_like_aws(services):
    logs = services.client("logs", config=Config(parameter_validation=False))
    answer = error_of(logs.get_log_events, logGroupName="bad group!", logStreamName="s", limit=0)
    assert answer["Error"]["Code"] == "InvalidParameterException"
    assert answer["Error"]["Message"].startswith("2 validation errors detected: ")
    assert (
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
        in answer["Error"]["Message"]
    )
    assert error_of(logs.describe_log_groups)["Error"]["Code"] == "NotImplemented"


def test_the_sdks_log_reader_follows_a_running_job(services, logs):
    """``sagemaker.logs.multi_stream_iter`` as ``Session.logs_for_job`` runs it, while a job writes."""
    Position, multi_stream_iter = logs_module().Position, logs_module().multi_stream_iter

    streams = ["job/algo-1-1000", "job/algo-2-1000"]
    base = START
    for i in range(3):
        for stream in streams:
            services.logs.append(GROUP, stream, base + timedelta(seconds=i), f"{stream} {i}")
    positions = {s: Position(timestamp=0, skip=0) for s in streams}
    first = list(multi_stream_iter(logs, GROUP, streams, positions))
    assert [event["message"] for _, event in first] == [f"{s} {i}" for i in range(3) for s in streams]
    # the SDK remembers (timestamp, skip) and polls again: only new lines come back
    for index, event in first:
        stream = streams[index]
        previous = positions[stream]
        skip = previous.skip + 1 if event["timestamp"] == previous.timestamp else 1
        positions[stream] = Position(timestamp=event["timestamp"], skip=skip)
    assert list(multi_stream_iter(logs, GROUP, streams, positions)) == []
    services.logs.append(GROUP, streams[1], base + timedelta(seconds=5), "late line")
    later = list(multi_stream_iter(logs, GROUP, streams, positions))
    assert [(index, event["message"]) for index, event in later] == [(1, "late line")]


# -- the log store ---------------------------------------------------------------------------------


def test_store_tokens_follow_appends():
    store = LogStore(VirtualClock(START))
    with pytest.raises(LogGroupNotFound):
        store.events("g", "s")
    store.create_log_group("g")
    with pytest.raises(LogGroupAlreadyExists):
        store.create_log_group("g")
    with pytest.raises(LogStreamNotFound):
        store.events("g", "s")
    store.create_log_stream("g", "s")
    events, forward, backward = store.events("g", "s", start_from_head=True)
    assert events == []
    assert store.events("g", "s", next_token=forward)[1] == forward
    store.append("g", "s", START, "one")
    events, forward2, _ = store.events("g", "s", next_token=forward)
    assert [e.message for e in events] == ["one"] and forward2 != forward
    assert store.events("g", "s", next_token=forward2)[0] == []
    with pytest.raises(InvalidLogRequest):
        store.events("g", "s", next_token="x/123")


def test_store_orders_by_timestamp_and_caps_a_page_at_1_mb():
    store = LogStore(VirtualClock(START))
    store.append("g", "s", 3000, "third")
    store.append("g", "s", 1000, "first")
    store.append("g", "s", 2000, "second")
    assert [e.message for e in store.events("g", "s", start_from_head=True)[0]] == [
        "first",
        "second",
        "third",
    ]
    big = "x" * 400_000
    for i in range(5):
        store.append("g", "big", 10_000 + i, big)
    page, token, _ = store.events("g", "big", start_from_head=True)
    assert len(page) == 2
    assert len(store.events("g", "big", next_token=token)[0]) == 2
    info = store.streams("g")[0]
    assert (info.name, info.first_event_timestamp, info.last_event_timestamp) == ("big", 10_000, 10_004)
    assert store.streams("g", order_by="LastEventTime")[0].name == "s"
    with pytest.raises(InvalidLogRequest):
        store.put_log_events("g", "s", [(0, "a"), (25 * 3600 * 1000, "b")])


def test_store_reader_sees_every_line_of_a_writer_thread():
    store = LogStore(VirtualClock(None))
    store.create_log_group("g")
    lines = 2000
    stamp = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def writer():
        for i in range(lines):
            store.append("g", "s", stamp + timedelta(milliseconds=i), f"line {i}")

    thread = threading.Thread(target=writer)
    thread.start()
    seen, token = [], None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            events, forward, _ = store.events("g", "s", start_from_head=True, limit=97, next_token=token)
        except LogStreamNotFound:
            continue
        seen.extend(e.message for e in events)
        if forward == token and not thread.is_alive() and len(seen) == lines:
            break
        token = forward
    thread.join()
    assert seen == [f"line {i}" for i in range(lines)]
