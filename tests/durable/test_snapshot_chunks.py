"""The chunked snapshot format: records and exports across chunks, and what does not add up refused."""

from __future__ import annotations

import io
import pickle
import sqlite3

import pytest

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.durable import snapshot_chunks, snapshots, state
from tests.conftest import START
from tests.durable.test_snapshots import _snapshots
from tests.durable.views import state_of
from tests.durable.worker import job_request


def _pooled(backend) -> None:
    """Two jobs, the second on the warm pool the first kept."""
    sm = backend.client()
    sm.create_training_job(**job_request("first", keep_alive=900))
    backend.clock.advance(1200)
    sm.create_training_job(**job_request("second", keep_alive=900))


def _blob(backend, chunk_bytes: int, monkeypatch) -> bytes:
    monkeypatch.setattr(snapshot_chunks, "CHUNK_BYTES", chunk_bytes)
    with backend._emulation.lock:
        return snapshots.dumps(backend._emulation)


def _frames(blob: bytes) -> list[bytes]:
    stream = io.BytesIO(blob[len(snapshot_chunks.MAGIC) :])
    frames = []
    while stream.tell() < len(blob) - len(snapshot_chunks.MAGIC):
        frames.append(snapshot_chunks._frame(stream))
    return frames


def _joined(frames: list[bytes]) -> bytes:
    return snapshot_chunks.MAGIC + b"".join(len(frame).to_bytes(8, "little") + frame for frame in frames)


def test_a_chunk_per_record_keeps_what_two_records_share(tmp_path, monkeypatch):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        _pooled(backend)
        blob = _blob(backend, 1, monkeypatch)
        before = state_of(backend)
    directory = snapshot_chunks.Directory(*pickle.loads(_frames(blob)[0]))
    assert len(directory.counts) // 4 == len(directory.kinds) // 4 > 10  # one record a chunk
    assert directory.export_places  # the one lock, written with the emulation, named by the clock
    snapshots._state.executors = []
    emulation = snapshot_chunks.load(io.BytesIO(blob))
    assert emulation.clock._lock is emulation.lock  # one lock, as before the snapshot
    jobs = emulation.region("us-east-1").training_jobs
    first, second = jobs.get("first"), jobs.get("second")
    assert jobs._clock is emulation.clock  # one clock, written with the emulation
    assert first.pool is not None and first.pool is second.pool  # one warm pool, handed over
    assert first.status == before["jobs"]["first"]["TrainingJobStatus"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda frames: frames[:-1],  # a chunk missing
        lambda frames: [*frames, frames[-1]],  # one too many
        lambda frames: [*frames[:-1], frames[-1] + b"."],  # bytes past its records
        lambda frames: [*frames[:-1], frames[-1][:-3]],  # a torn chunk
    ],
)
def test_chunks_that_do_not_add_up_are_refused(tmp_path, monkeypatch, damage):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        _pooled(backend)
        blob = _blob(backend, 4096, monkeypatch)
    frames = _frames(blob)
    assert len(frames) > 2
    snapshots._state.executors = []
    snapshot_chunks.load(io.BytesIO(_joined(frames)))  # intact: loads
    with pytest.raises((ValueError, pickle.UnpicklingError, EOFError)):
        snapshot_chunks.load(io.BytesIO(_joined(damage(frames))))
    with pytest.raises(ValueError, match="not a chunked snapshot"):
        snapshot_chunks.load(io.BytesIO(blob[1:]))


def test_a_snapshot_of_the_older_layout_under_this_stamp_costs_a_full_replay(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 1)
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        _pooled(backend)
        expected = state_of(backend)
        whole = pickle.dumps({"seq": 1}, protocol=5)  # a plain pickle: format 1's layout
    [(seq, stamp)] = _snapshots(tmp_path)
    connection = sqlite3.connect(tmp_path / "state.sqlite3")
    with connection:
        connection.execute("UPDATE snapshots SET data = ?, digest = ?", (whole, snapshots.digest_of(whole)))
    connection.close()
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    with LocalBackend(root=tmp_path) as reopened:
        assert state_of(reopened) == expected
    assert "not a chunked snapshot" in caplog.text
