"""No training process outlives its job or the process that started it (Linux: the supervisor)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.runtime.world import EPOCH, SCRIPTS, START, wait_for_line

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] != b"Z"


def read_pids(path: Path, count: int, limit: float = 120) -> list[int]:
    """The first ``count`` pids the script recorded (waits at most ``limit`` seconds for them)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        pids = [int(p) for p in path.read_text().split()] if path.exists() else []
        if len(pids) >= count:
            return pids[:count]
        time.sleep(0.02)
    raise AssertionError(f"{path} never listed {count} pids")


def still_alive(pids: list[int], limit: float = 120) -> list[int]:
    """Poll (at most ``limit`` seconds) until every pid has ended; those still running."""
    deadline = time.monotonic() + limit
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


@pytest.fixture
def pids_file(tmp_path):
    path = tmp_path / "pids.txt"
    yield path
    for pid in [int(p) for p in path.read_text().split()] if path.exists() else []:
        if pid == os.getpid():
            continue  # unsupervised, the entry point's parent is this process
        try:  # never leave a failed test's sleepers behind
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def escaper_source(tmp_path: Path) -> Path:
    """A source directory holding only the escaper script (sleepers that leave the session)."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "escaper.py").write_bytes((SCRIPTS / "escaper.py").read_bytes())
    return source


def escaper_job(world, name, pids_file, **hyperparameters):
    return world.job(name, "escaper.py", hyperparameters={"pids": str(pids_file), **hyperparameters})


def test_descendants_that_left_the_session_die_when_the_entry_point_exits(world, pids_file):
    run, result = world.run(escaper_job(world, "leaves", pids_file))
    assert result.exit_code == 0
    pids = read_pids(pids_file, 4)  # setsid child, double-forked grandchild, entry point, supervisor
    assert still_alive(pids) == []


@pytest.mark.parametrize("ignore_term", [False, True])
def test_stopping_a_run_ends_every_descendant(world, pids_file, ignore_term):
    job = escaper_job(world, "stopped", pids_file, stay=600, **{"ignore-term": ignore_term})
    run = world.executor.start(job, START)
    wait_for_line(world, f"stopped/algo-1-{EPOCH}", "ready")
    pids = read_pids(pids_file, 4)
    assert all(alive(pid) for pid in pids)
    run.stop()
    result = run.wait(120)
    assert result is not None and result.exit_code == 143  # the entry point ended on SIGTERM
    assert still_alive(pids) == []


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_parent_leaves_no_training_process_behind(tmp_path, pids_file, signum):
    source = escaper_source(tmp_path)
    parent = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "backend_parent.py"), str(source), str(pids_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        pids = read_pids(pids_file, 4)
        assert all(alive(pid) for pid in pids)
    finally:
        parent.send_signal(signum)
        _, stderr = parent.communicate()
    assert parent.returncode == -signum, stderr.decode()
    assert still_alive(pids) == []
