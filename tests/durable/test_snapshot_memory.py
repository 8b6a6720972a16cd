"""What a snapshot keeps and its load leaves behind: one object per moment and method, a frozen
state, no runtime until a run, the newest snapshot of each stamp."""

from __future__ import annotations

import gc
import io

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core import journal as journal_module
from sagemaker_plans_local.core.journal import Journal
from sagemaker_plans_local.durable import snapshot_chunks, snapshots, state
from tests.conftest import START
from tests.durable.test_snapshots import _Failing, _snapshots
from tests.durable.worker import job_request


def _two_jobs(root, monkeypatch) -> None:
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 1)
    with LocalBackend(root=root, start_time=START) as backend:
        sm = backend.client()
        sm.create_training_job(**job_request("first", 0))
        sm.create_training_job(**job_request("second", 0))
        backend.clock.advance(60)
    assert len(_snapshots(root)) == 1


def test_equal_moments_load_as_one_object_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot_chunks, "CHUNK_BYTES", 1)  # a chunk per record: every job its own
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        sm = backend.client()
        sm.create_training_job(**job_request("first", 0))
        sm.create_training_job(**job_request("second", 0))
        with backend._emulation.lock:
            blob = snapshots.dumps(backend._emulation)
    snapshots._state.executors = []
    jobs = snapshot_chunks.load(io.BytesIO(blob)).region("us-east-1").training_jobs
    first, second = jobs.get("first"), jobs.get("second")
    assert first.created_at == second.created_at == START
    assert first.created_at is second.created_at  # written in two chunks, made once
    assert first.transitions[0].start is second.created_at


def test_a_loaded_state_is_frozen_until_its_backend_closes(tmp_path, monkeypatch):
    _two_jobs(tmp_path, monkeypatch)
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    gc.unfreeze()
    with LocalBackend(root=tmp_path) as reopened:
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0  # out of the collector's generations
        job = reopened.training_job("first")
        assert not any(job is tracked for tracked in gc.get_objects())
        assert (
            reopened.client().describe_training_job(TrainingJobName="second")["TrainingJobName"] == "second"
        )
    assert gc.get_freeze_count() == 0  # given back: a closed state's cycles are collected


def test_a_snapshot_that_fails_to_load_freezes_nothing(tmp_path, monkeypatch):
    _two_jobs(tmp_path, monkeypatch)
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    monkeypatch.setattr(snapshot_chunks, "_Unpickler", _Failing)
    gc.unfreeze()
    with LocalBackend(root=tmp_path) as reopened:  # a full replay
        assert reopened.training_job("first").name == "first"
        assert gc.get_freeze_count() == 0
        assert gc.isenabled()


def test_a_reopened_region_makes_its_executor_when_a_job_first_needs_it(tmp_path, monkeypatch):
    _two_jobs(tmp_path, monkeypatch)
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    with LocalBackend(root=tmp_path) as reopened:
        executor = reopened._emulation.region("us-east-1").training_jobs.executor
        assert isinstance(executor, snapshots.LateExecutor)
        reopened.client().describe_training_job(TrainingJobName="first")
        assert executor.target is None  # a read runs no code: no runtime made
        reopened.clock.advance(600)  # the jobs start training: is their code run here?
        assert executor.target is not None
        assert reopened.training_job("first").status.value == "InProgress"


def test_loading_keeps_no_chunk_unpickler_alive(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot_chunks, "CHUNK_BYTES", 256)  # many chunks, each its own unpickler
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        _jobs(backend, 20)
        with backend._emulation.lock:
            blob = snapshots.dumps(backend._emulation)
    snapshots._state.executors = []
    emulation = snapshot_chunks.load(io.BytesIO(blob))
    # an unpickler held (by a cycle through its memo, which the collector does not see) would keep
    # all its chunk built the records from
    assert not [kept for kept in gc.get_objects() if isinstance(kept, snapshot_chunks._Unpickler)]
    assert emulation.region("us-east-1").training_jobs.get("job-19").name == "job-19"


def test_a_fired_event_is_kept_without_its_action_and_equal_methods_load_as_one(tmp_path, monkeypatch):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        _jobs(backend, 2)
        backend.clock.advance(60)  # the first of each job's events has fired
        jobs = backend._emulation.region("us-east-1").training_jobs
        fired = [event for event in jobs.get("job-0").events if event._clock is None]
        assert fired and fired[0].action is not None  # the live state still holds it
        with backend._emulation.lock:
            blob = snapshots.dumps(backend._emulation)
    snapshots._state.executors = []
    loaded = snapshot_chunks.load(io.BytesIO(blob)).region("us-east-1").training_jobs
    first, second = loaded.get("job-0").events, loaded.get("job-1").events
    assert [event.action for event in first if event._clock is None] == [None]
    pending = [
        (event.action, other.action) for event, other in zip(first, second) if event._clock is not None
    ]
    assert pending and all(one.func is other.func for one, other in pending)  # one bound method each


def _jobs(backend, count: int) -> None:
    sm = backend.client()
    for index in range(count):
        sm.create_training_job(**job_request(f"job-{index}", 0))


def test_the_snapshot_just_written_is_kept_beside_other_stamps_at_the_same_entry(tmp_path):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        _jobs(backend, 1)
    journal = Journal(tmp_path)
    try:
        for version in range(journal_module.KEPT_SNAPSHOTS + 3):  # each package version's, one entry
            journal.put_snapshot(f"0/version-{version}", 5, "digest", b"data")
            assert journal.latest_snapshot(f"0/version-{version}") == (5, "digest")
    finally:
        journal.close()
    assert len(_snapshots(tmp_path)) == journal_module.KEPT_SNAPSHOTS
