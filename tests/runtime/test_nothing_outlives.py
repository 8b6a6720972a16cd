"""Nothing a job started outlives the process that owns the job, SIGKILL included (Linux).

The owner (``scripts/owner.py``) runs with a marker variable in its environment, which
every process it starts inherits; after the owner is killed, no live process on this
machine may carry the marker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

import pytest

from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.runtime.processes import SUPERVISED
from tests.runtime.world import SCRIPTS

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor needs Linux")

ROOT = Path(__file__).parents[2]
#: Generous: how long the processes of a killed owner may take to end.
LIMIT = 30.0
HANGING_PYTHON = """#!/bin/sh
if [ "$1 $2 $3" = "-I -m venv" ]; then
    exec {python} -c "import time; time.sleep(600)" venv-hang "$@"
fi
exec {python} "$@"
"""


def marked(marker: bytes) -> dict[int, str]:
    """Live processes whose environment holds ``marker``: {pid: command line}."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:  # ended meanwhile, or not ours
            continue
        if marker in environ.split(b"\0"):  # a zombie's environment reads empty
            found[int(entry)] = command.replace(b"\0", b" ").decode(errors="replace")
    return found


def poll(until: Callable[[], bool], what: str, limit: float = LIMIT) -> None:
    deadline = time.monotonic() + limit
    while not until():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.05)


@pytest.fixture
def owner(tmp_path):
    """Start ``owner.py <mode>``; yields (start, marker); kills every marked process at the end."""
    marker = f"PLANS_LOCAL_TEST_OWNER={uuid.uuid4().hex}".encode()
    started: list[subprocess.Popen] = []

    def start(mode: str) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        name, value = marker.decode().split("=")
        env[name] = value
        process = subprocess.Popen(
            [sys.executable, str(SCRIPTS / "owner.py"), mode, str(tmp_path)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        started.append(process)
        return process

    yield start, marker
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()
    for pid in marked(marker):  # never leave a failed test's processes behind
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_and_check(process: subprocess.Popen, marker: bytes) -> None:
    """SIGKILL the owner: within the limit, nothing it started is left."""
    process.kill()
    _, stderr = process.communicate()
    assert process.returncode == -signal.SIGKILL, stderr.decode()
    try:
        poll(lambda: not marked(marker), "every process of the killed owner ended")
    except AssertionError:
        raise AssertionError(f"still running: {marked(marker)}") from None


def source_with(tmp_path: Path, files: dict[str, bytes]) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "escaper.py").write_bytes((SCRIPTS / "escaper.py").read_bytes())
    for name, content in files.items():
        (source / name).write_bytes(content)


def running(marker: bytes, token: str, count: int = 1) -> Callable[[], bool]:
    return lambda: sum(token in command for command in marked(marker).values()) >= count


def test_a_virtualenv_being_made_dies_with_its_owner(owner, tmp_path):
    start, marker = owner
    source_with(tmp_path, {})
    python = tmp_path / "python"
    python.write_text(HANGING_PYTHON.format(python=sys.executable))
    python.chmod(0o755)
    process = start("venv")
    poll(running(marker, "venv-hang"), "the virtualenv is being made")
    kill_and_check(process, marker)


def test_a_pip_install_dies_with_its_owner(owner, tmp_path):
    start, marker = owner
    fifo = tmp_path / "more-requirements"
    os.mkfifo(fifo)  # pip blocks opening it: nobody writes
    source_with(tmp_path, {"requirements.txt": f"-r {fifo}\n".encode()})
    process = start("pip")
    poll(running(marker, "pip install", 2), "pip runs on both instances' behalf")
    kill_and_check(process, marker)


def test_an_entry_point_and_the_sleepers_that_left_its_session_die_with_its_owner(owner, tmp_path):
    start, marker = owner
    source_with(tmp_path, {})
    process = start("escaper")
    pids = tmp_path / "pids.txt"
    poll(lambda: pids.exists() and len(pids.read_text().split()) >= 8, "both instances' sleepers run")
    kill_and_check(process, marker)


@pytest.mark.skipif(views.unavailable() is not None, reason="no /opt/ml view on this machine")
def test_a_container_command_and_its_children_die_with_their_owner(owner):
    start, marker = owner
    process = start("container")
    poll(running(marker, "sleep 600", 4), "both instances' shells and their children run")
    kill_and_check(process, marker)
