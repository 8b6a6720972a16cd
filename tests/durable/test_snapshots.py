"""A root opens in time proportional to its live state: cheap replay, snapshots, no no-ops, no stale temp files."""

from __future__ import annotations

import gc
import os
import time

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.journal import Journal
from sagemaker_plans_local.durable import state
from sagemaker_plans_local.protocol import service as protocol_service
from tests.conftest import START
from tests.durable.processes import Worker
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


def test_temporary_files_of_a_dead_process_go_on_open_and_a_live_ones_stay(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        backend.client("s3").create_bucket(Bucket="kept")
    temporary = tmp_path / "s3" / ".tmp"
    dead, live = Worker(), Worker()
    try:
        for worker in (dead, live):
            assert worker.ask("open", str(tmp_path)) is not None
        (temporary / f"{dead.process.pid}-{'a' * 32}").write_bytes(b"half an upload")
        (temporary / f"{dead.process.pid}-{'b' * 32}").mkdir()  # a directory being removed
        (temporary / f"{live.process.pid}-{'c' * 32}").write_bytes(b"being written")
        old, fresh = temporary / ("d" * 32), temporary / ("e" * 32)  # names without a pid
        old.write_bytes(b"old")
        fresh.write_bytes(b"fresh")
        hours_ago = time.time() - 2 * 3600
        os.utime(old, (hours_ago, hours_ago))
        dead.stop()  # killed: its files are left behind
        with LocalBackend(root=tmp_path) as reopened:
            assert sorted(path.name for path in temporary.iterdir()) == sorted(
                [f"{live.process.pid}-{'c' * 32}", fresh.name]
            )
            assert reopened.client("s3").list_buckets()["Buckets"][0]["Name"] == "kept"
    finally:
        dead.stop()
        live.stop()


def test_the_object_store_names_its_temporary_files_after_its_process(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        store = backend._emulation.objects
        assert store._tmp_path().name.startswith(f"{os.getpid()}-")
