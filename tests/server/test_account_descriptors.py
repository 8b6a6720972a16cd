"""Accounts hold no descriptors while idle: a durable one closes (and opens again on use), an ephemeral
one holds none; thousands of accounts are served, and a root holding them reopens, under ``ulimit -n 1024``.

The roots live on ``/dev/shm`` where there is one: what is measured is descriptors, and a disk's
fsyncs would only make making 2,000 journals take minutes instead of seconds.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.server.accounts import MAX_OPEN_ACCOUNTS, MAX_OPEN_VARIABLE
from sagemaker_plans_local.server.runner import LocalServer
from tests.conftest import START
from tests.durable.worker import SLEEPER, job_request
from tests.server.clients import client, control

REPO = Path(__file__).resolve().parents[2]
LIMIT = 1024
ACCOUNTS = 2000
#: Descriptors a server may hold beyond those it began with: its open accounts (4 each) and some slack.
BOUND = 4 * MAX_OPEN_ACCOUNTS + 40
A, B, C, D = "111111111111", "222222222222", "333333333333", "444444444444"


def fast_directory() -> Path:
    shm = Path("/dev/shm")
    return Path(tempfile.mkdtemp(dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))


@pytest.fixture
def fast_root() -> Iterator[Path]:
    directory = fast_directory()
    yield directory / "root"
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def many() -> Iterator[Path]:
    """A root of 2,000 accounts (a bucket each), made with no descriptor limit."""
    directory = fast_directory()
    assert load("create", directory / "root", limit=0)["statuses"] == {"200": ACCOUNTS}
    yield directory / "root"
    shutil.rmtree(directory, ignore_errors=True)


def load(mode: str, root: Path | None, limit: int = LIMIT) -> dict:
    """tests/server/account_load.py in a process of its own under ``ulimit -n 1024`` (by default)."""
    argv = [mode, "-" if root is None else str(root), str(ACCOUNTS), str(limit)]
    done = subprocess.run(
        [sys.executable, "-m", "tests.server.account_load", *argv],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(root.parent if root else fast_directory())},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def held(root: Path, account: str) -> bool:
    """Whether this process holds a descriptor on a file of ``account``'s state."""
    directory = str(root / "accounts" / account)
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(directory):
                return True
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
    return False


def small_server(root: Path, max_open: int = 2) -> LocalServer:
    server = LocalServer(root=root, start_time=START)
    server.accounts.max_open = max_open
    return server.start()


def test_a_durable_server_answers_2000_new_accounts_under_1024_descriptors(fast_root):
    seen = load("create", fast_root)
    assert seen["statuses"] == {"200": ACCOUNTS}
    assert seen["most"] - seen["began"] <= BOUND
    assert seen["after"] == seen["began"]  # a stopped server holds nothing


def test_an_in_memory_server_answers_2000_new_accounts_under_1024_descriptors():
    seen = load("create", None)
    assert seen["statuses"] == {"200": ACCOUNTS}
    assert seen["most"] - seen["began"] <= 40  # an ephemeral account holds none at all


def test_a_root_of_2000_accounts_reopens_under_1024_descriptors(many):
    root = many
    seen = load("reopen", root)
    assert len(seen["found"]) == 40 and all(found == [200, True] for found in seen["found"].values())
    assert seen["most"] - seen["began"] <= BOUND
    later = (START + timedelta(seconds=60)).isoformat()
    assert seen["now"] == later and seen["clocks"] == {later: 40}
    assert sum(1 for d in (root / "accounts").iterdir() if (d / "state.sqlite3").exists()) == ACCOUNTS + 1
    assert json.loads((root / "clock.json").read_text()) == {"now": later}


def test_an_advance_reaches_a_closed_account(fast_root):
    with small_server(fast_root) as server:
        client(server, key=A).create_training_job(**job_request("closed", keep_alive=0))
        for key in (B, C, D):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert not held(fast_root, A) and not held(fast_root, B)
        server.accounts.advance(1200)
        assert not held(fast_root, B)  # nothing of its own fell due: it stays closed
        job = client(server, key=A).describe_training_job(TrainingJobName="closed")
        assert job["TrainingJobStatus"] == "Completed"
        assert server.backend(B).clock.now() == START + timedelta(seconds=1200)
        assert [b["Name"] for b in client(server, "s3", key=B).list_buckets()["Buckets"]] == [f"b-{B}"]


def test_the_next_change_of_a_closed_account_is_found(fast_root):
    with small_server(fast_root) as server:
        client(server, key=A).create_training_job(**job_request("closed", keep_alive=0))
        for key in (B, C, D):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert not held(fast_root, A)
        steps = []
        while (answer := control(server, "clock", {"next_change": True})[1])["changed"]:
            steps.append(answer["now"])
        assert steps and steps == sorted(steps)
        job = client(server, key=A).describe_training_job(TrainingJobName="closed")
        assert job["TrainingJobStatus"] == "Completed"
        assert job["TrainingEndTime"] <= server.accounts.now()


def test_a_reset_empties_closed_accounts_and_keeps_their_settings(fast_root):
    with small_server(fast_root) as server:
        for number, key in enumerate((A, B, C, D)):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
            assert control(server, f"settings?account={key}", {"job_runtime_seconds": 100 + number})[0] == 200
        server.accounts.advance(30)
        assert not held(fast_root, A)
        assert control(server, "reset")[1]["now"] == START.isoformat()
        for number, key in enumerate((A, B, C, D)):
            assert client(server, "s3", key=key).list_buckets()["Buckets"] == []
            kept = control(server, f"settings?account={key}", method="GET")[1]
            assert kept["job_runtime_seconds"] == 100 + number
            assert server.backend(key).clock.now() == START


def test_a_backend_someone_holds_stays_open_until_let_go(fast_root):
    with small_server(fast_root) as server:
        kept = server.backend(A)
        for key in (B, C, D):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert held(fast_root, A) and not held(fast_root, B)
        client(server, "s3", key=A).create_bucket(Bucket="through-the-server")
        assert [b["Name"] for b in kept.client("s3").list_buckets()["Buckets"]] == ["through-the-server"]
        del kept
        gc.collect()  # the client made above lets its backend go too
        client(server, "s3", key=B).list_buckets()
        client(server, "s3", key=C).list_buckets()
        assert not held(fast_root, A)


def test_an_account_whose_job_code_runs_stays_open_until_it_ends(fast_root, tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "sleeper.py").write_text(SLEEPER)
    with small_server(fast_root) as server:
        server.backend(A).settings.cold_start_seconds = 0
        sm = client(server, key=A)
        sm.create_training_job(**job_request("running", keep_alive=0, source=str(source), seconds=600))
        server.accounts.advance(1)  # training starts: sleeper.py runs (for ten real minutes)
        for key in (B, C, D):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert held(fast_root, A) and not held(fast_root, B)
        assert sm.describe_training_job(TrainingJobName="running")["SecondaryStatus"] == "Training"
        sm.stop_training_job(TrainingJobName="running")
        server.backend(A).wait_for_training_job("running")
        client(server, "s3", key=B).list_buckets()
        client(server, "s3", key=C).list_buckets()
        assert not held(fast_root, A)
        assert sm.describe_training_job(TrainingJobName="running")["TrainingJobStatus"] == "Stopped"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from([A, B, C, D]), st.sampled_from(["bucket", "look", "advance"])),
        min_size=1,
        max_size=10,
    )
)
def test_accounts_keep_their_state_and_time_whichever_are_open(steps):
    root = fast_directory() / "root"
    buckets: dict[str, list[str]] = {}
    try:
        with small_server(root) as server:
            for number, (key, action) in enumerate(steps):
                s3 = client(server, "s3", key=key)
                if action == "bucket":
                    s3.create_bucket(Bucket=f"b-{number}")
                    buckets.setdefault(key, []).append(f"b-{number}")
                elif action == "advance":
                    server.accounts.advance(60)
                listed = [b["Name"] for b in s3.list_buckets()["Buckets"]]
                assert listed == sorted(buckets.get(key, []))
                assert sum(held(root, k) for k in (A, B, C, D)) <= 2
            for key in buckets:
                assert server.backend(key).clock.now() == server.accounts.now()
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def test_the_number_of_open_accounts_is_set_by_the_environment(fast_root, monkeypatch):
    monkeypatch.setenv(MAX_OPEN_VARIABLE, "3")
    with LocalServer(root=fast_root, start_time=START) as server:
        assert server.accounts.max_open == 3
        for key in (A, B, C, D):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert [held(fast_root, key) for key in (A, B, C, D)] == [False, True, True, True]
    monkeypatch.setenv(MAX_OPEN_VARIABLE, "0")
    with pytest.raises(ValueError, match="SAGEMAKER_PLANS_LOCAL_MAX_OPEN_ACCOUNTS must be a whole number"):
        LocalServer(root=fast_root)


def test_accounts_closing_and_opening_under_concurrent_requests_answer_every_one(fast_root):
    keys = [str(555_000_000_000 + n) for n in range(8)]
    failures: list[str] = []

    def work(worker: int) -> None:
        for step in range(12):
            key = keys[(worker * 5 + step) % len(keys)]
            s3 = client(server, "s3", key=key)
            try:
                s3.put_object(Bucket=f"b-{key}", Key=f"{worker}-{step}", Body=b"x" * step)
                assert s3.get_object(Bucket=f"b-{key}", Key=f"{worker}-{step}")["Body"].read() == b"x" * step
            except Exception as error:  # every failure is reported below
                failures.append(f"{key} {worker}-{step}: {error!r}")

    with small_server(fast_root, max_open=3) as server:
        for key in keys:
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        threads = [threading.Thread(target=work, args=(worker,)) for worker in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        counts = [
            client(server, "s3", key=key).list_objects_v2(Bucket=f"b-{key}")["KeyCount"] for key in keys
        ]
        assert sum(counts) == 6 * 12
        assert sum(held(fast_root, key) for key in keys) <= 3


def test_a_root_served_before_clock_json_takes_the_latest_account_s_time(fast_root, monkeypatch):
    with small_server(fast_root) as server:
        for key in (A, B, C):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        server.accounts.advance(90)
    with LocalBackend(
        account_id=B, root=fast_root / "accounts" / B
    ) as own:  # a backend of its own moves B on
        own.clock.advance(30)
    (fast_root / "clock.json").unlink()
    (fast_root / "dues.json").unlink()
    monkeypatch.setenv(MAX_OPEN_VARIABLE, "1")  # read one at a time: at most one stays open
    with LocalServer(root=fast_root) as server:
        assert server.accounts.now() == START + timedelta(seconds=120)
        assert [held(fast_root, key) for key in (A, B, C)].count(True) <= 1
    assert json.loads((fast_root / "clock.json").read_text()) == {
        "now": (START + timedelta(seconds=120)).isoformat()
    }


def test_a_change_another_process_makes_in_a_closed_account_is_found(fast_root):
    with small_server(fast_root) as server:
        for key in (A, B, C):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert not held(fast_root, A)
        with LocalBackend(account_id=A, root=fast_root / "accounts" / A) as other:
            other.client().create_training_job(**job_request("elsewhere", keep_alive=0))
        while control(server, "clock", {"next_change": True})[1]["changed"]:
            pass
        job = client(server, key=A).describe_training_job(TrainingJobName="elsewhere")
        assert job["TrainingJobStatus"] == "Completed"


def test_a_wall_clock_account_closed_and_opened_again_goes_on(fast_root):
    server = LocalServer(root=fast_root)
    server.accounts.max_open = 2
    with server:
        client(server, key=A).create_training_job(**job_request("walled", keep_alive=0))
        for key in (B, C):
            client(server, "s3", key=key).create_bucket(Bucket=f"b-{key}")
        assert not held(fast_root, A)
        assert server.backend(A).wait_for_training_job("walled").status == "Completed"
        assert (
            client(server, key=A).describe_training_job(TrainingJobName="walled")["TrainingJobStatus"]
            == "Completed"
        )
