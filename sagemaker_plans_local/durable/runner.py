"""The detached runner of a root: it owns the runs of jobs that observers created (``durable/detached.py``).

``main([lock fd, root, account, region])``, in a process started by :func:`.detached.start`
that holds ``DIR/runner.lock``: open the root as a
backend that runs code, and loop — replay the journal, apply the changes due on
the clock, which claims and runs the jobs' code through the normal executor —
until it has nothing to run (:func:`.detached.has_work`) and either no other
process has the root open or nothing was journaled for
``settings.runner_idle_seconds``. It also ends on SIGTERM, when its root's
journal is removed or replaced (a reset), and when a write of its journal fails (a full
disk): its runs then end as a dead process's, and the next runner started on the root
takes up its jobs.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import threading
import time
from pathlib import Path

from sagemaker_plans_local.backend_root import BackendRoot
from sagemaker_plans_local.backend_state import local_executor, open_state, shut_down
from sagemaker_plans_local.durable import owners
from sagemaker_plans_local.durable.detached import RunnerLock, has_work
from sagemaker_plans_local.durable.state import Durable

log = logging.getLogger("sagemaker_plans_local.runner")

#: Longest real time between two looks at the journal and the clock.
POLL_SECONDS = 0.1
#: Real seconds between two checks whether the runner is idle.
CHECK_SECONDS = 1.0
#: Bytes of ``runner.log`` above which a starting runner empties it.
LOG_LIMIT = 1 << 20


def main(argv: list[str]) -> int:
    """Run the runner of ``argv[1]`` (account ``argv[2]``, home region ``argv[3]``) holding its lock on
    the descriptor ``argv[0]``; its exit code."""
    hold = RunnerLock(int(argv[0]))
    root, account_id, region = Path(argv[1]), argv[2], argv[3]
    if os.fstat(2).st_size > LOG_LIMIT:  # stderr: the root's runner.log, appended to
        os.ftruncate(2, 0)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s runner %(process)d: %(message)s")
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        log.info("running the jobs of %s", root)
        serve(root, account_id, region, hold, stopping)
        log.info("exiting")
        return 0
    except Exception:
        log.exception("failed")
        return 1
    finally:
        hold.release()


def serve(root: Path, account_id: str, region: str, hold: RunnerLock, stopping: threading.Event) -> None:
    """Open the root, run what falls due until idle (or stopped), then close it."""
    held = BackendRoot(root)
    factory = functools.partial(local_executor, endpoint_url=None)
    emulation, _services, durable = open_state(held, account_id, region, None, factory, runs_code=True)
    assert durable is not None  # a given root is durable
    try:
        _loop(durable, hold, stopping)
    finally:
        shut_down(emulation, held, durable)


def _loop(durable: Durable, hold: RunnerLock, stopping: threading.Event) -> None:
    clock = durable.emulation.clock
    journal_file = _identity(durable.journal.path)
    idle = _Idleness(durable)
    next_check = time.monotonic()
    while not stopping.is_set():
        if durable.journal.failed is not None:  # no run's end can be recorded: the next runner recovers
            log.error("cannot write the journal: exiting (%s)", durable.journal.failed)
            return
        clock.catch_up()  # replays what others journaled, then applies what fell due
        if time.monotonic() >= next_check:
            next_check = time.monotonic() + CHECK_SECONDS
            if _identity(durable.journal.path) != journal_file:
                log.info("the root's journal was removed or replaced: stopping")
                return
            if idle.check() and _let_go(durable, hold):
                return
        due = clock.next_due()
        wait = POLL_SECONDS if due is None else (due - clock.now()).total_seconds()
        stopping.wait(min(max(wait, 0.0), POLL_SECONDS))


class _Idleness:
    """Whether the runner has nothing left to do: no job to run, and nobody else on the root or
    nothing journaled for ``settings.runner_idle_seconds``."""

    def __init__(self, durable: Durable) -> None:
        self._durable = durable
        self._seq = -1
        self._since = time.monotonic()

    def check(self) -> bool:
        durable = self._durable
        with durable.emulation.lock:
            busy = has_work(durable.emulation)
        seq = durable.journal.last_seq()
        if busy or seq != self._seq:
            self._seq, self._since = seq, time.monotonic()
        if busy:
            return False
        pids = owners.live_pids(durable.root)
        alone = pids is not None and not pids - {os.getpid()}
        quiet = time.monotonic() - self._since >= durable.emulation.settings.runner_idle_seconds
        return alone or quiet


def _let_go(durable: Durable, hold: RunnerLock) -> bool:
    """Release the lock if nothing is to run, under the journal's write lock: a job journaled after
    this is created by a process that then finds no runner and starts one."""
    with durable.emulation.lock, durable.journal.writing():
        durable.sync()
        if has_work(durable.emulation):
            return False
        durable.runs_code = False  # from now on it claims nothing, while it closes
        hold.release()
    return True


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino
