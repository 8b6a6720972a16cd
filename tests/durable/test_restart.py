"""A durable root keeps everything across a restart: reopening it shows exactly what was left."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.journal import SCHEMA_VERSION, Journal, SchemaError
from tests.conftest import START
from tests.durable.views import state_of
from tests.durable.worker import job_request
from tests.plan_helpers import buy, day, own_inventory
from tests.raw_requests import sagemaker_json


def test_jobs_pools_plans_tags_clock_and_settings_survive_a_restart(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        sm = backend.client()
        backend.settings.max_keep_alive_seconds = 1800
        backend.script_job("fails", outcome="AlgorithmError", failure_reason="boom")
        sm.create_training_job(**job_request("first", keep_alive=900), Tags=[{"Key": "team", "Value": "a"}])
        sm.create_training_job(**job_request("fails", keep_alive=0))
        backend.run_until_idle(timedelta(minutes=20))
        sm.create_training_job(**job_request("second", keep_alive=900))  # reuses first's pool
        logs = backend.client("logs")
        logs.create_log_group(logGroupName="app")
        logs.create_log_stream(logGroupName="app", logStreamName="s")
        logs.put_log_events(
            logGroupName="app", logStreamName="s", logEvents=[{"timestamp": 1767225600000, "message": "hi"}]
        )
        own_inventory(backend, ("ml.p5.48xlarge", 4, "us-east-1a", 2, 30))
        plan_arn, _ = buy(sm, backend, "reserved")
        before = state_of(backend)
        cache = backend.training_job("second").cache_dir
        (cache / "weights.bin").write_bytes(b"w" * 100)
    assert before["jobs"]["first"]["WarmPoolStatus"]["ReusedByJob"] == "second"
    with LocalBackend(root=tmp_path) as reopened:
        assert state_of(reopened) == before
        events = reopened.client("logs").get_log_events(logGroupName="app", logStreamName="s")["events"]
        assert [e["message"] for e in events] == ["hi"]
        assert reopened.training_job("second").cache_dir == cache
        assert (cache / "weights.bin").read_bytes() == b"w" * 100
        # what the plan bought stays sold: the same search finds no second plan's worth
        sm = reopened.client()
        offerings = sm.search_training_plan_offerings(
            InstanceType="ml.p5.48xlarge", InstanceCount=4, DurationHours=48, TargetResources=["training-job"]
        )["TrainingPlanOfferings"]
        assert all(o["ReservedCapacityOfferings"][0]["StartTime"] >= day(4) for o in offerings)
        assert sm.describe_training_plan(TrainingPlanName="reserved")["TrainingPlanArn"] == plan_arn
        # and it goes on from where it was: the kept pool expires on the restored clock
        reopened.run_until_idle(timedelta(hours=2))
        assert sm.describe_training_job(TrainingJobName="second")["WarmPoolStatus"]["Status"] == "Terminated"
        assert not cache.exists()


#: One step of a session on a manual clock, as (kind, argument).
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("job"), st.sampled_from([0, 300, 900])),
        st.tuples(st.just("advance"), st.integers(1, 2000)),
        st.tuples(st.just("stop"), st.integers(0, 9)),
        st.tuples(st.just("keep_alive"), st.sampled_from([600, 3600])),
        st.tuples(st.just("script"), st.sampled_from(["Completed", "AlgorithmError"])),
    ),
    max_size=12,
)


def _play(backend, steps) -> None:
    sm = backend.client()
    names: list[str] = []
    for kind, argument in steps:
        if kind == "job":
            names.append(f"job-{len(names)}")
            try:
                sm.create_training_job(**job_request(names[-1], keep_alive=argument))
            except sm.exceptions.ClientError:
                names.pop()  # a keep-alive over the setting's maximum: refused, changing nothing
        elif kind == "advance":
            backend.clock.advance(argument)
        elif kind == "stop" and names:
            try:
                sm.stop_training_job(TrainingJobName=names[argument % len(names)])
            except sm.exceptions.ClientError:
                pass  # not stoppable any more: a 4xx that changes nothing
        elif kind == "keep_alive":
            backend.settings.max_keep_alive_seconds = argument
        elif kind == "script":
            backend.script_job(f"job-{len(names)}", outcome=argument)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS)
def test_any_session_reopens_to_the_state_it_left(tmp_path_factory, steps):
    root = tmp_path_factory.mktemp("root")
    with LocalBackend(root=root, start_time=START) as backend:
        _play(backend, steps)
        before = state_of(backend)
    with LocalBackend(root=root) as reopened:
        assert state_of(reopened) == before


def test_a_root_written_by_a_newer_package_is_refused_clearly(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        backend.client().create_training_job(**job_request("kept", keep_alive=0))
    journal = Journal(tmp_path)
    journal.set_meta("schema_version", str(SCHEMA_VERSION + 1))
    journal.close()
    with pytest.raises(SchemaError, match=rf"schema version {SCHEMA_VERSION + 1}, written by a newer"):
        LocalBackend(root=tmp_path)


def test_a_root_keeps_its_clock_and_account(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START):
        pass
    with pytest.raises(ValueError, match="made with a manual clock starting at 2026-01-01T00:00:00"):
        LocalBackend(root=tmp_path, start_time=START + timedelta(days=1))
    with pytest.raises(ValueError, match="holds the state of account 123456789012, not of 111122223333"):
        LocalBackend(root=tmp_path, account_id="111122223333")
    with LocalBackend(root=tmp_path, start_time=START) as same:
        assert same.clock.now() == START and same.clock.manual


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    operation=st.sampled_from(["CreateTrainingJob", "StopTrainingJob", "CreateTrainingPlan", "AddTags"]),
    body=st.one_of(
        st.binary(max_size=40),
        st.dictionaries(
            st.sampled_from(["TrainingJobName", "Tags", "ResourceArn", "x"]), st.integers(), max_size=3
        ),
    ),
)
def test_bad_input_to_a_durable_root_gets_a_4xx_and_journals_nothing(tmp_path_factory, operation, body):
    root = tmp_path_factory.mktemp("bad")
    with LocalBackend(root=root, start_time=START) as backend:
        journal = Journal(root)
        before = journal.last_seq()
        status, answer = sagemaker_json(backend, operation, body)
        assert 400 <= status < 500, answer
        assert journal.last_seq() == before  # nothing written, nothing to replay
        journal.close()


def test_a_wall_clock_root_reopens_on_the_wall_clock_with_its_jobs(tmp_path):
    with LocalBackend(root=tmp_path) as backend:
        backend.client().create_training_job(**job_request("walled", keep_alive=0))
        backend.clock.advance(3600)  # a wall clock's offset is kept too
        backend.wait_for_training_job("walled")
        before = state_of(backend)
    with LocalBackend(root=tmp_path) as reopened:
        assert not reopened.clock.manual
        assert reopened.clock.offset == backend.clock.offset
        after = state_of(reopened)
        assert after["jobs"] == before["jobs"]
        assert after["jobs"]["walled"]["TrainingJobStatus"] == "Completed"


def test_an_entry_that_cannot_be_replayed_is_passed_over_with_a_log_line(tmp_path, caplog):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        backend.client().create_training_job(**job_request("kept", keep_alive=0))
    journal = Journal(tmp_path)
    journal.append(START.isoformat(), "setting", {"name": "no_such_setting", "value": 1})
    journal.close()
    with LocalBackend(root=tmp_path) as reopened:
        assert (
            reopened.client().describe_training_job(TrainingJobName="kept")["TrainingJobStatus"]
            == "InProgress"
        )
    assert "cannot replay journal entry 2 (setting)" in caplog.text
