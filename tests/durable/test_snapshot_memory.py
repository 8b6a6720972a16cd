"""What a snapshot's load leaves behind: one object per moment, a frozen state, no runtime until a run."""

from __future__ import annotations

import gc
import io

from sagemaker_plans_local import LocalBackend
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
