"""A root's detached runner: one process per root that runs the jobs' code, whoever created them.

A backend opened with ``runner="detached"`` never runs a job's code itself (it
is an observer): it makes sure the root's runner is up when it creates a job
with code, when it opens a root holding such a job, and while it awaits a run
nobody claimed. The runner (``durable/runner.py``) holds ``DIR/runner.lock``
(``flock``), so there is at most one per root. It is started detached — a
session of its own, its parent the init process (or the nearest subreaper) —
with the starting process's environment and working directory at that moment,
its output appended to ``DIR/runner.log`` (docs/durability.md, "A detached runner").
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sagemaker_plans_local.core.errors import JobNotFound
from sagemaker_plans_local.core.root_files import open_file, read_text

if TYPE_CHECKING:
    from sagemaker_plans_local.durable.state import Durable
    from sagemaker_plans_local.emulation import Emulation

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no runner without it

log = logging.getLogger(__name__)

#: The runner's lock file under a root (its pid inside while it runs).
LOCK = "runner.lock"
#: Where the runner's output goes, under a root.
LOG = "runner.log"
#: Real seconds between two starts of a runner by one backend for a run nobody claimed.
RESTART_SECONDS = 5.0
#: What the started interpreter runs: it drops the working directory from ``sys.path`` before it
#: imports anything (``python -c`` puts it first: a module planted where the starter works would run
#: as the starter), takes the lock (else exits: a runner is there) and forks; the first process
#: writes the child's pid into the lock file and exits (the starter reaps it), the child, holding the
#: lock, runs the runner from the starter's copy of the package. Not ``-I``: the starter's
#: ``PYTHONPATH`` and user site, where the package's dependencies may be, still apply.
BOOT = (
    "import sys\n"
    "if sys.path[:1] == ['']:\n"
    "    del sys.path[0]\n"
    "import fcntl, os\n"
    f"fd = os.open(os.path.join(sys.argv[2], {LOCK!r}), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)\n"
    "try:\n"
    "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "except BlockingIOError:\n"
    "    sys.exit(0)\n"
    "child = os.fork()\n"
    "if child:\n"
    "    os.ftruncate(fd, 0)\n"
    "    os.pwrite(fd, b'%d\\n' % child, 0)\n"
    "    os._exit(0)\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from sagemaker_plans_local.durable.runner import main\n"
    "sys.exit(main([str(fd), *sys.argv[2:]]))\n"
)
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


def available() -> bool:
    """Whether a detached runner can be had here (``flock`` and ``fork``: not on Windows)."""
    return fcntl is not None and hasattr(os, "fork")


class RunnerLock:
    """The hold of the one runner of a root on ``DIR/runner.lock``."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def take(cls, root: Path) -> "RunnerLock | None":
        """The lock if no other process holds it (None: a runner is there, or being probed)."""
        fd = open_file(root / LOCK, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return cls(fd)

    def release(self) -> None:
        """Let go (idempotent): the next process that needs a runner starts one."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def running(root: Path) -> bool:
    """Whether a runner holds ``root``'s lock (a probe: the lock taken and let go at once)."""
    held = RunnerLock.take(root)
    if held is None:
        return True
    held.release()
    return False


def runner_pid(root: Path) -> int | None:
    """The pid of ``root``'s runner, if one runs."""
    if not running(root):
        return None
    try:
        return int(read_text(root / LOCK).strip())
    except (OSError, ValueError):
        return None


def start(root: Path, account_id: str, region: str) -> None:
    """Start ``root``'s runner, detached, with this process's environment and working directory."""
    output = open_file(root / LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        starter = subprocess.Popen(
            [sys.executable, "-c", BOOT, _PACKAGE_PARENT, str(root), account_id, region],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,  # not in the group a notebook's kernel is killed with
        )
    finally:
        os.close(output)
    starter.wait()  # it locks, forks and exits: the lock is held, by a process nobody here waits for


def has_work(emulation: Emulation) -> bool:
    """Whether a job whose code runs locally is unfinished (call under the emulation's lock)."""
    for region in emulation.regions():
        jobs = region.training_jobs
        if any(not jobs.finished(job) and jobs.local_runs.runs(job) for job in jobs.all()):
            return True
    return False


class DetachedRunner:
    """A backend's :class:`~.runs.Summoner`: the root's runner, started when a job needs it."""

    def __init__(self, durable: Durable, account_id: str, region: str) -> None:
        self._durable = durable
        self._account_id = account_id
        self._region = region
        self._started = float("-inf")

    def job_created(self, region: str, job: str) -> None:
        emulation = self._durable.emulation
        with emulation.lock:
            jobs = emulation.region(region).training_jobs
            try:
                needed = jobs.local_runs.runs(jobs.get(job))
            except JobNotFound:  # deleted meanwhile by another process
                needed = False
        if needed:
            self.ensure()

    def run_unclaimed(self) -> None:
        self.ensure(limited=True)

    def ensure(self, limited: bool = False) -> None:
        """Start the root's runner unless it runs; ``limited``: not within :data:`RESTART_SECONDS`
        of this backend's last start (a runner that cannot open the root is not restarted in a loop)."""
        root = self._durable.root.absolute()
        if self._durable.closed or (limited and time.monotonic() - self._started < RESTART_SECONDS):
            return
        if running(root):
            return
        self._started = time.monotonic()
        log.info("starting the runner of %s (its output: %s)", root, root / LOG)
        try:
            start(root, self._account_id, self._region)
        except OSError:  # the job waits, unclaimed, for the next process that starts one
            log.warning("cannot start the runner of %s", root, exc_info=True)


def attach(durable: Durable, account_id: str, region: str) -> None:
    """Give ``durable`` (an observer) the root's detached runner; start it if a job already needs it."""
    runner = durable.runner = DetachedRunner(durable, account_id, region)
    with durable.emulation.lock:
        durable.emulation.clock.catch_up()  # what fell due since the last entry first
        needed = has_work(durable.emulation)
    if needed:
        runner.ensure()
