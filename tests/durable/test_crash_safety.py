"""A process killed (SIGKILL) in the middle of writes leaves a root that reopens whole: each call is all or nothing."""

from __future__ import annotations

import hashlib
import random
import signal
import sqlite3
import time

from sagemaker_plans_local import LocalBackend
from tests.conftest import START
from tests.durable.processes import Worker
from tests.durable.views import state_of


def _steps_of(backend) -> list[int]:
    names = backend.client().get_paginator("list_training_jobs").paginate(PaginationConfig={"PageSize": 100})
    return sorted(int(name.split("-")[1]) for name in names.search("TrainingJobSummaries[].TrainingJobName"))


def test_kill_9_in_the_middle_of_writes_never_leaves_half_applied_state(tmp_path):
    rounds, chooser = 8, random.Random(10)
    with LocalBackend(root=tmp_path, start_time=START):
        pass
    committed = -1
    for _ in range(rounds):
        worker = Worker()
        try:
            worker.ask("open", str(tmp_path))
            worker.send("write_loop", committed + 1)
            committed = max(committed, worker.answer())  # it writes: kill it a little later
            time.sleep(chooser.uniform(0.0, 0.3))
            worker.process.send_signal(signal.SIGKILL)
        finally:
            worker.stop()
        with sqlite3.connect(tmp_path / "state.sqlite3") as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        with LocalBackend(root=tmp_path) as reopened:
            steps = _steps_of(reopened)
            state = state_of(reopened)
            _check_objects(reopened)
        assert steps == list(range(len(steps)))  # no step missing, none twice: calls are whole
        assert len(steps) > committed  # everything reported committed is there
        committed = len(steps) - 1
        with LocalBackend(root=tmp_path) as again:  # replay is deterministic
            assert state_of(again) == state
    assert committed >= rounds  # the loop did write in each round


def _check_objects(backend) -> None:
    """Every object's bytes match its ETag and length (no torn write)."""
    s3 = backend.client("s3")
    for listed in s3.list_objects_v2(Bucket="crash").get("Contents", []):
        got = s3.get_object(Bucket="crash", Key=listed["Key"])
        body = got["Body"].read()
        assert len(body) == got["ContentLength"] == listed["Size"]
        assert hashlib.md5(body).hexdigest() == got["ETag"].strip('"')
