"""A root opens in time proportional to its live state: cheap replay, snapshots, no no-ops, no stale temp files."""

from __future__ import annotations

import gc

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.journal import Journal
from sagemaker_plans_local.durable import state
from sagemaker_plans_local.protocol import service as protocol_service
from tests.conftest import START
from tests.durable.views import state_of
from tests.durable.worker import job_request


def test_replay_does_not_validate_journaled_requests_again(tmp_path, monkeypatch):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        for index in range(3):
            backend.client().create_training_job(**job_request(f"job-{index}", keep_alive=0))
        before = state_of(backend)
    checked = []
    real = protocol_service.violations
    monkeypatch.setattr(protocol_service, "violations", lambda *args: checked.append(args) or real(*args))
    with LocalBackend(root=tmp_path) as reopened:
        replayed = len(checked)
        assert state_of(reopened) == before
    assert replayed == 0  # the three creates were valid when journaled
    assert checked  # live calls (the reads above) are still validated


def test_a_long_replay_runs_with_the_cyclic_collector_paused(tmp_path, monkeypatch):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        for seconds in range(state.GC_PAUSE_ENTRIES):
            backend.settings.job_runtime_seconds = 601 + seconds
    seen = []
    real = state.APPLY["setting"]
    monkeypatch.setitem(
        state.APPLY, "setting", lambda durable, body: seen.append(gc.isenabled()) or real(durable, body)
    )
    assert gc.isenabled()
    with LocalBackend(root=tmp_path) as reopened:
        assert reopened.settings.job_runtime_seconds == 600 + state.GC_PAUSE_ENTRIES
    assert len(seen) == state.GC_PAUSE_ENTRIES and not any(seen)
    assert gc.isenabled()  # and on again afterwards


def _entries(root) -> int:
    journal = Journal(root)
    try:
        return journal.last_seq()
    finally:
        journal.close()


def test_calls_and_settings_that_change_nothing_are_not_journaled(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        sm = backend.client()
        arn = sm.create_training_job(**job_request("tagged", keep_alive=0))["TrainingJobArn"]
        sm.add_tags(ResourceArn=arn, Tags=[{"Key": "team", "Value": "a"}])
        backend.settings.job_runtime_seconds = 1200
        written = _entries(tmp_path)
        for _ in range(5):
            sm.add_tags(ResourceArn=arn, Tags=[{"Key": "team", "Value": "a"}])  # already there
            sm.delete_tags(ResourceArn=arn, TagKeys=["absent"])  # no such key
            backend.settings.job_runtime_seconds = 1200  # the value it has
        assert _entries(tmp_path) == written
        sm.add_tags(ResourceArn=arn, Tags=[{"Key": "team", "Value": "b"}])  # a change: journaled
        sm.delete_tags(ResourceArn=arn, TagKeys=["team"])
        assert _entries(tmp_path) == written + 2
        before = state_of(backend)
    with LocalBackend(root=tmp_path) as reopened:
        assert state_of(reopened) == before


def test_a_tag_call_the_read_cannot_observe_still_answers_as_the_service(tmp_path):
    from tests.raw_requests import sagemaker_json

    with LocalBackend(root=tmp_path, start_time=START) as backend:
        for body in (b"[" * 10000, {"ResourceArn": 5}, {"Tags": []}):
            status, _ = sagemaker_json(backend, "AddTags", body)
            assert 400 <= status < 500
        assert _entries(tmp_path) == 0
