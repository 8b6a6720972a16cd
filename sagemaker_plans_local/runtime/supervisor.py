"""The supervisor a local training process runs under (Linux): no descendant outlives it.

Run as ``python -I -S supervisor.py <parent pid> <command...>`` (standard
library only, so nothing of the job's ``PYTHONPATH`` is imported). It makes
itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so descendants whose
parent exits — a double fork, a child that called ``setsid`` — are
reparented to it instead of escaping, and asks for ``SIGUSR1`` when the
process that started it dies (``PR_SET_PDEATHSIG``). It then runs the
command as its one child and:

- on ``SIGTERM`` forwards ``SIGTERM`` to every descendant (a stop);
- on ``SIGUSR1`` (the kill after the grace, or its parent died) sends
  ``SIGKILL`` to every descendant;
- when the command exits, kills whatever is left, reaps everything, and
  exits with the command's exit code (``128 + n`` after signal ``n``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: What the supervisor is sent to kill everything now (also its parent-death signal).
KILL_NOW = signal.SIGUSR1
_HANDLED = (signal.SIGTERM, KILL_NOW)


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, read from ``/proc`` (parents before children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # it has just exited
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, frontier = [], [root]
    while frontier:
        below = children.get(frontier.pop(), [])
        found.extend(below)
        frontier.extend(below)
    return found


def signal_descendants(signum: int) -> None:
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _on_signal(signum: int, _frame) -> None:
    signal_descendants(signal.SIGKILL if signum == KILL_NOW else signal.SIGTERM)


def _start(command: list[str]) -> int:
    """Fork and exec the command with default signal handling; its pid."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _HANDLED)
    pid = os.fork()
    if pid == 0:
        try:
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the supervisor killed outright: die too
            for signum in _HANDLED:
                signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            os.execvp(command[0], command)
        except OSError as error:
            os.write(2, f"{command[0]}: {error.strerror}\n".encode())
        os._exit(127)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return pid


def _wait_for(child: int) -> int:
    """Reap children until ``child`` exits; its exit code as a shell reports it."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


def _end_all() -> None:
    """Kill and reap every remaining descendant (orphans are reparented here meanwhile)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] != 0:
                continue  # reaped one; look again
            signal_descendants(signal.SIGKILL)
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main(argv: list[str]) -> int:
    parent, command = int(argv[0]), argv[1:]
    for signum in _HANDLED:
        signal.signal(signum, _on_signal)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, KILL_NOW)
    if os.getppid() != parent:  # the parent died before the request took effect
        return 128 + signal.SIGKILL
    child = _start(command)
    try:
        return _wait_for(child)
    finally:
        _end_all()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
