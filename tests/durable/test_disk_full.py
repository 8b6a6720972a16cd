"""A journal that cannot be written (issue 29, item 5): an AWS-shaped error, nothing half-stored, and a
detached runner that gives its lock up and exits instead of holding its root's jobs forever.

Disk-full is made three ways, none needing root: SQLite's ``max_page_count`` on a backend's own
journal connection (the insert fails), a small tmpfs filled up in a mount namespace of a child
process (the commit fails, as on a real disk), and, for a runner, ``max_page_count`` set on the
runner's connection by a ``sitecustomize`` while a flag file exists.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import uuid
from datetime import datetime, timezone

import pytest
from botocore.exceptions import ClientError

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.core.journal import JournalWriteError
from sagemaker_plans_local.durable import detached
from sagemaker_plans_local.durable.runs import INSTANCE_FAILURE
from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.conftest import create_request
from tests.durable.processes import REPO
from tests.durable.worker import SLEEPER, job_request
from tests.runtime.test_nothing_outlives import marked, poll

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
#: Generous: how long a runner may take to start a job's code, fail, or exit.
LIMIT = 120.0
#: A request needing many more pages than a journal has: 100 hyperparameters of 2,400 characters.
BIG = {f"p{index}": "x" * 2400 for index in range(100)}


def capped(backend: LocalBackend) -> None:
    """The backend's journal may grow no more: its next insert that needs a page fails."""
    assert backend._durable is not None  # a durable root
    connection = backend._durable.journal._connection
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")


def code_of(call) -> tuple[str, int]:
    with pytest.raises(ClientError) as raised:
        call()
    return raised.value.response["Error"]["Code"], raised.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_a_full_journal_answers_service_unavailable_and_stores_nothing(tmp_path):
    root = tmp_path / "root"
    backend = LocalBackend(root=root, start_time=START)
    sm = backend.client()
    sm.create_training_job(**create_request("before"))
    capped(backend)
    full = create_request("full", HyperParameters=BIG)
    assert code_of(lambda: sm.create_training_job(**full)) == ("ServiceUnavailable", 503)
    # the job the journal does not hold is never shown: the backend answers nothing until reopened
    assert code_of(lambda: sm.describe_training_job(TrainingJobName="full")) == ("ServiceUnavailable", 503)
    assert code_of(lambda: sm.list_training_jobs()) == ("ServiceUnavailable", 503)
    raw = backend.service("sagemaker").handle("us-east-1", "CreateTrainingJob", {"body": json.dumps(full)})
    assert raw.status == 503 and json.loads(bytes(raw.body))["__type"] == "ServiceUnavailable"
    with pytest.raises(JournalWriteError, match="database or disk is full"):
        backend.clock.advance(60)
    with pytest.raises(JournalWriteError):
        backend.settings.job_runtime_seconds = 5
    backend.close()  # nothing more is journaled, nothing raised
    with LocalBackend(root=root) as reopened:
        sm = reopened.client()
        summaries = sm.list_training_jobs()["TrainingJobSummaries"]
        assert [job["TrainingJobName"] for job in summaries] == ["before"]
        assert reopened.clock.now() == START and reopened.settings.job_runtime_seconds != 5
        sm.create_training_job(**full)  # room again
        assert sm.describe_training_job(TrainingJobName="full")["HyperParameters"] == BIG


def test_a_write_lock_never_had_fails_that_call_only(tmp_path):
    with LocalBackend(root=tmp_path / "root", start_time=START) as backend:
        assert backend._durable is not None  # a durable root
        backend._durable.journal._connection.execute("PRAGMA busy_timeout = 50")
        holder = sqlite3.connect(tmp_path / "root" / "state.sqlite3", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process's transaction that never ends
        sm = backend.client()
        with pytest.raises(ClientError) as raised:
            sm.create_training_job(**create_request("waited"))
        error = raised.value.response["Error"]
        assert error["Code"] == "ServiceUnavailable" and "retry later" in error["Message"]
        holder.execute("ROLLBACK")
        holder.close()
        sm.create_training_job(**create_request("waited"))  # nothing was applied, nothing is failed
        assert [job["TrainingJobName"] for job in sm.list_training_jobs()["TrainingJobSummaries"]] == [
            "waited"
        ]


def test_a_full_disk_fails_the_commit_and_stores_nothing(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "tests.durable.full_disk", str(mount)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    if "skip" in seen:
        pytest.skip(f"no tmpfs of our own here: {seen['skip']}")
    assert seen == {
        "before": "ok",
        "object": "ServiceUnavailable 503",  # S3's files: no room, the machine's fault, nothing stored
        "full": "ServiceUnavailable 503",
        "after": "ServiceUnavailable 503",
        "close": "ok",
        "kept": ["before"],
        "again": "ok",
        "objects": 0,
    }


#: Caps the journal of a runner (``python -c`` of the boot) while the flag file exists.
CAPPING = """
import os, sys
flag = os.environ.get("PLANS_LOCAL_TEST_FULL")
if flag and sys.argv[:1] == ["-c"] and os.path.exists(flag):
    from sagemaker_plans_local.core import journal
    opened = journal.Journal.__init__
    def capped(self, root):
        opened(self, root)
        pages = self._connection.execute("PRAGMA page_count").fetchone()[0]
        self._connection.execute(f"PRAGMA max_page_count = {pages}")
    journal.Journal.__init__ = capped
"""
#: A job whose log lines need far more pages than the capped journal has.
NOISY = "for line in range(2000):\n    print('line', line, 'x' * 200, flush=True)\n"
NOTEBOOK = """
import json, sys
from sagemaker_plans_local import LocalBackend
from tests.durable.worker import job_request

plan = json.loads(sys.argv[1])
backend = LocalBackend(root=plan["root"], runner="detached")
backend.client().create_training_job(**job_request(plan["job"], 0, plan["source"], 0))
print("created", flush=True)
"""


@pytest.mark.skipif(not SUPERVISED, reason="the detached runner's tests need Linux")
def test_a_runner_that_cannot_write_gives_its_root_up_and_the_next_one_recovers(tmp_path):
    root, source, injected = tmp_path / "root", tmp_path / "source", tmp_path / "injected"
    for directory in (source, injected):
        directory.mkdir()
    (source / "sleeper.py").write_text(NOISY)
    (injected / "sitecustomize.py").write_text(CAPPING)
    (tmp_path / "notebook.py").write_text(NOTEBOOK)
    flag = tmp_path / "full"
    flag.write_text("")
    with LocalBackend(root=root):  # a wall-clock root, as the default backend's
        pass
    marker = f"PLANS_LOCAL_TEST_FULL_RUNNER={uuid.uuid4().hex}"
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{injected}", "PLANS_LOCAL_TEST_FULL": str(flag)}
    env.update([marker.split("=")])
    try:
        plan = {"root": str(root), "job": "noisy", "source": str(source)}
        created = subprocess.run(
            [sys.executable, str(tmp_path / "notebook.py"), json.dumps(plan)],
            env=env,
            capture_output=True,
            text=True,
            timeout=LIMIT,
        )
        assert created.stdout == "created\n", created.stderr
        poll(lambda: detached.runner_pid(root) is None, "the runner that cannot write exits", LIMIT)
        assert "cannot write the journal" in (root / detached.LOG).read_text()
        flag.unlink()  # room again
        with LocalBackend(root=root, runner="detached") as notebook:
            job = notebook.wait_for_training_job("noisy")  # a new runner; the dead one's run failed
            assert (job.status, job.failure_reason) in {("Failed", INSTANCE_FAILURE), ("Completed", None)}
            (source / "sleeper.py").write_text(SLEEPER)
            notebook.client().create_training_job(**job_request("after", 0, str(source), 0))
            assert notebook.wait_for_training_job("after").status == "Completed"
    finally:
        for pid in marked(marker.encode()):
            os.kill(pid, signal.SIGKILL)
