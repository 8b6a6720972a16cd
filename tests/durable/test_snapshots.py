"""A root opens in time proportional to its live state: cheap replay, snapshots, no no-ops, no stale temp files."""

from __future__ import annotations

import gc
import os
import random
import shutil
import signal
import sqlite3
import time
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.journal import Journal
from sagemaker_plans_local.durable import snapshot_chunks, state
from sagemaker_plans_local.protocol import service as protocol_service
from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.conftest import START
from tests.durable.processes import Worker
from tests.durable.test_restart import STEPS, _play
from tests.durable.views import state_of
from tests.durable.worker import SLEEPER, job_request


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
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)  # replayed, not loaded
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


# -- snapshots -------------------------------------------------------------------------------
def _snapshots(root) -> list[tuple[int, str]]:
    connection = sqlite3.connect(root / "state.sqlite3")
    try:
        return connection.execute("SELECT seq, stamp FROM snapshots ORDER BY seq").fetchall()
    finally:
        connection.close()


def _full_replay_of(root, tmp_path_factory):
    """A copy of ``root`` elsewhere (a snapshot's stamp names its root) without its snapshots."""
    copy = tmp_path_factory.mktemp("copy") / "root"
    shutil.copytree(root, copy)
    connection = sqlite3.connect(copy / "state.sqlite3")
    with connection:
        connection.execute("DELETE FROM snapshots")
    connection.close()
    return copy


def _session(backend, steps, tags) -> None:
    _play(backend, steps)
    sm = backend.client()
    for index, name in enumerate(
        sorted(job["TrainingJobName"] for job in state_of(backend)["jobs"].values())
    ):
        if index < tags:
            arn = sm.describe_training_job(TrainingJobName=name)["TrainingJobArn"]
            sm.add_tags(ResourceArn=arn, Tags=[{"Key": "n", "Value": str(index)}])


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(first=STEPS, second=STEPS, tags=st.integers(0, 3), wall=st.booleans())
def test_a_snapshot_reopens_to_what_a_full_replay_gives(
    tmp_path_factory, monkeypatch, first, second, tags, wall
):
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 1)
    monkeypatch.setattr(snapshot_chunks, "CHUNK_BYTES", 1)  # a chunk per record: every reference crosses
    root = tmp_path_factory.mktemp("root")
    with LocalBackend(root=root, start_time=None if wall else START) as backend:
        _session(backend, [("job", 900), *first], tags)
    assert len(_snapshots(root)) == 1  # taken on close
    with LocalBackend(root=root) as backend:
        _session(backend, second, 0)  # entries after the snapshot
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    copy = _full_replay_of(root, tmp_path_factory)
    with LocalBackend(root=root) as loaded, LocalBackend(root=copy) as replayed:
        if wall:  # a wall clock applies a due change when a process looks (docs/durability.md, Limits)
            assert _coarse(state_of(loaded)) == _coarse(state_of(replayed))
            return
        assert state_of(loaded) == state_of(replayed)
        loaded.run_until_idle(timedelta(days=2))  # and they go on alike: the clocks' queues were kept
        replayed.run_until_idle(timedelta(days=2))
        assert state_of(loaded) == state_of(replayed)


def _coarse(view: dict) -> dict:
    """What two processes on a wall clock agree on whenever they look: the jobs, their tags, the settings."""
    jobs = {name: (job["TrainingJobArn"], job["CreationTime"]) for name, job in view["jobs"].items()}
    return {"jobs": jobs, "tags": view["tags"], "settings": view["settings"]}


def test_reopening_from_a_snapshot_replays_only_the_entries_after_it(tmp_path, monkeypatch):
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        for index in range(state.SNAPSHOT_ON_CLOSE + 5):
            backend.settings.job_runtime_seconds = 601 + index
        backend.client().create_training_job(**job_request("kept", keep_alive=900))
        backend.clock.advance(60)
    [(seq, _)] = _snapshots(tmp_path)
    with LocalBackend(root=tmp_path) as backend:
        backend.clock.advance(30)  # one entry after the snapshot
        before = state_of(backend)
    replayed = []
    real = state.Durable._replay
    monkeypatch.setattr(
        state.Durable, "_replay", lambda self, entry: replayed.append(entry.seq) or real(self, entry)
    )
    with LocalBackend(root=tmp_path) as reopened:
        assert state_of(reopened) == before
    assert replayed == [seq + 1]


def test_a_snapshot_of_another_version_a_corrupt_one_or_one_that_fails_to_load_is_passed_over(
    tmp_path_factory, monkeypatch, caplog
):
    for damage in (
        "UPDATE snapshots SET stamp = '0/another-version'",
        "UPDATE snapshots SET data = CAST(substr(data, 1, length(data) / 2) AS BLOB)",  # torn
        "UPDATE snapshots SET data = zeroblob(length(data))",
        None,  # intact, but it fails to load
    ):
        root = tmp_path_factory.mktemp("damaged")
        monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 1)
        with LocalBackend(root=root, start_time=START) as backend:
            _session(backend, [("job", 900), ("advance", 400), ("job", 0)], tags=1)
            expected = state_of(backend)
        monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
        assert len(_snapshots(root)) == 1
        connection = sqlite3.connect(root / "state.sqlite3")
        with connection:
            connection.execute(damage or "SELECT 1")
        connection.close()
        with monkeypatch.context() as patch:
            if damage is None:
                patch.setattr(snapshot_chunks, "_Unpickler", _Failing)
            with LocalBackend(root=root) as reopened:
                assert state_of(reopened) == expected  # by full replay
    assert caplog.text.count("passing over the snapshot") == 3  # another version's is simply not this one's


class _Failing:
    def __init__(self, *arguments) -> None:
        pass

    def load(self):
        raise EOFError("a snapshot that cannot be read")


def test_a_failure_while_writing_a_snapshot_leaves_a_root_that_opens(tmp_path, monkeypatch):
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 1)

    def torn(self, stamp, seq, digest, data):
        with self.writing():
            self._connection.execute(
                "INSERT INTO snapshots (seq, stamp, digest, data) VALUES (?, ?, ?, ?)",
                (seq, stamp, digest, data[:9]),
            )
            raise OSError("disk full")

    monkeypatch.setattr(Journal, "put_snapshot", torn)
    with LocalBackend(root=tmp_path, start_time=START) as backend:
        _session(backend, [("job", 900), ("advance", 400)], tags=1)
        expected = state_of(backend)
    assert _snapshots(tmp_path) == []  # rolled back whole
    monkeypatch.undo()
    with LocalBackend(root=tmp_path) as reopened:
        assert state_of(reopened) == expected


def test_a_process_snapshots_as_it_works_and_another_goes_on_from_its_snapshot(
    tmp_path, tmp_path_factory, monkeypatch
):
    monkeypatch.setattr(state, "SNAPSHOT_CHANGES", 4)
    monkeypatch.setattr(state, "SNAPSHOT_BYTES_PER_CHANGE", 10**12)
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    worker = Worker()
    try:
        with LocalBackend(root=tmp_path, start_time=START) as backend:
            sm = backend.client()
            for index in range(9):
                sm.create_training_job(**job_request(f"job-{index}", keep_alive=600))
            assert [seq for seq, _ in _snapshots(tmp_path)] == [
                8
            ]  # after its 4th and 8th change: the newest kept
            worker.ask("open", str(tmp_path))  # loads the snapshot, replays the 9th
            worker.ask("job", "from-worker", 0, None, 0)
            worker.ask("advance", 500)
            here = state_of(backend)  # this process replays the worker's entries
        assert worker.ask("describe", "job-8")["TrainingJobStatus"] == "InProgress"
        worker.ask("close")
    finally:
        worker.stop()
    copy = _full_replay_of(tmp_path, tmp_path_factory)
    with LocalBackend(root=tmp_path) as loaded, LocalBackend(root=copy) as replayed:
        assert state_of(loaded) == state_of(replayed) == here


@pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")
def test_no_snapshot_while_a_local_run_is_in_progress_and_one_after_it(
    tmp_path, tmp_path_factory, monkeypatch
):
    source = tmp_path_factory.mktemp("source")
    (source / "sleeper.py").write_text(SLEEPER)
    root = tmp_path / "root"
    with LocalBackend(root=root, start_time=START) as backend:
        backend.settings.cold_start_seconds = 0
        sm = backend.client()
        sm.create_training_job(**job_request("trained", 0, str(source), 600))
        backend.clock.advance(1)  # training starts: sleeper.py runs here, now
        assert backend.training_job("trained").status == "InProgress"
        assert not backend._durable.snapshot()  # a process cannot be kept
        assert _snapshots(root) == []
        sm.stop_training_job(TrainingJobName="trained")  # its process is terminated
        assert backend.wait_for_training_job("trained").status == "Stopped"
        assert backend._durable.snapshot()
        before = state_of(backend)
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    copy = _full_replay_of(root, tmp_path_factory)
    with LocalBackend(root=root) as loaded, LocalBackend(root=copy) as replayed:
        assert state_of(loaded) == state_of(replayed) == before


def test_kill_9_while_writing_snapshots_leaves_a_root_that_opens_to_its_whole_journal(
    tmp_path, tmp_path_factory
):
    from tests.durable.test_crash_safety import _check_objects, _steps_of

    chooser = random.Random(11)
    root = tmp_path / "root"
    with LocalBackend(root=root, start_time=START):
        pass
    committed = -1
    for _ in range(4):
        worker = Worker()
        try:
            worker.ask("open", str(root))
            worker.send("snapshot_loop", committed + 1)  # a change, a snapshot, a change, ...
            committed = max(committed, worker.answer())
            time.sleep(chooser.uniform(0.0, 0.3))
            worker.process.send_signal(signal.SIGKILL)
        finally:
            worker.stop()
        with sqlite3.connect(root / "state.sqlite3") as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert _snapshots(root)  # the root has one to open from
        copy = _full_replay_of(root, tmp_path_factory)
        with LocalBackend(root=root) as loaded, LocalBackend(root=copy) as replayed:
            steps = _steps_of(loaded)
            assert state_of(loaded) == state_of(replayed)
            _check_objects(loaded)
        assert steps == list(range(len(steps))) and len(steps) > committed
        committed = len(steps) - 1


def _clusters_view(sm) -> dict:
    """Every cluster, its groups and its nodes (logical ids included) as the API shows them."""
    view = {}
    for summary in sm.list_clusters()["ClusterSummaries"]:
        name = summary["ClusterName"]
        described = sm.describe_cluster(ClusterName=name)
        nodes = sm.list_cluster_nodes(ClusterName=name, IncludeNodeLogicalIds=True)["ClusterNodeSummaries"]
        view[name] = (described["ClusterStatus"], described["InstanceGroups"], nodes)
    return view


def test_a_hyperpod_cluster_moving_onto_a_plan_snapshots_and_goes_on_as_a_full_replay(
    tmp_path_factory, monkeypatch
):
    from tests.api.test_cluster_plan_updates import COLD, advance_to, at, buy, group

    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 1)
    root = tmp_path_factory.mktemp("root")
    with LocalBackend(root=root, start_time=START) as backend:
        sm = backend.client()
        plan = buy(backend, sm, "hp")
        sm.create_cluster(ClusterName="c", InstanceGroups=[group("workers", 2)])
        advance_to(backend, at(2, 1))
        sm.update_cluster(ClusterName="c", InstanceGroups=[group("workers", 2, plan)])  # Updating: due later
    assert len(_snapshots(root)) == 1
    monkeypatch.setattr(state, "SNAPSHOT_ON_CLOSE", 10**9)
    copy = _full_replay_of(root, tmp_path_factory)
    with LocalBackend(root=root) as loaded, LocalBackend(root=copy) as replayed:
        assert _clusters_view(loaded.client()) == _clusters_view(replayed.client())
        for backend in (loaded, replayed):
            backend.clock.advance(COLD)
        moved = _clusters_view(loaded.client())
        assert moved == _clusters_view(replayed.client()) and moved["c"][0] == "InService"
        assert moved["c"][1][0]["TrainingPlanArn"] == plan
