"""Child processes of a run: output line by line to a sink, stoppable, never outliving the run.

On Linux a process is started under :mod:`.supervisor`, a subreaper that
holds every descendant (double forks and ``setsid`` included), kills them all
when the main process exits, and kills them all if this process dies. Other
systems start it in a new session (its own process group) and signal the
group: that reaches what it spawned unless it left the group, and nothing
outlives this process's death by design. Either way, when the main process
exits, whatever it left running is killed, as when a container's main
process ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from typing import IO, Callable, Mapping, Sequence

#: Bytes of output tail kept per process for failure reasons.
TAIL_LIMIT = 1024
#: Longest log event: CloudWatch's 256 KiB less its 26 bytes of per-event overhead.
MAX_LINE_BYTES = 256 * 1024 - 26
#: How long the output readers may lag behind the process's exit. They end at once when the last
#: writer is gone (every process of the run is killed first); the bound only matters for a
#: process that escaped the run, and is long so a loaded machine still logs every line.
READER_JOIN_SECONDS = 60.0

LineSink = Callable[[str, bool], None]  # (line, from_stderr)

#: Whether processes run under the supervisor (it needs Linux's prctl).
SUPERVISED = sys.platform.startswith("linux")
if SUPERVISED:
    from sagemaker_plans_local.runtime import supervisor


def supervised(argv: Sequence[str]) -> list[str]:
    """``argv`` as run under the supervisor (Linux), so it dies with this process; else as is."""
    if not SUPERVISED:
        return list(argv)
    return [sys.executable, "-I", "-S", supervisor.__file__, str(os.getpid()), *argv]


def run_captured(
    argv: Sequence[str], env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a helper command (a virtualenv's creation, a probe) to its end, output captured.

    Like every process of a run it is supervised and in a session of its own, so it
    neither outlives this process nor gets a terminal's signals meant for it.
    """
    return subprocess.run(
        supervised(argv),
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )


def exit_code(returncode: int) -> int:
    """A signal death as a shell (and Docker) reports it: 128 + the signal number."""
    return 128 - returncode if returncode < 0 else returncode


class Tail:
    """The last lines written, at most :data:`TAIL_LIMIT` characters in all."""

    def __init__(self, limit: int = TAIL_LIMIT) -> None:
        self._limit = limit
        self._lines: deque[str] = deque()
        self._size = 0

    def add(self, line: str) -> None:
        self._lines.append(line)
        self._size += len(line) + 1
        while self._size > self._limit and len(self._lines) > 1:
            self._size -= len(self._lines.popleft()) + 1

    def text(self) -> str:
        return "\n".join(self._lines)[-self._limit :]


class ManagedProcess:
    """One child process whose stdout and stderr are read line by line."""

    def __init__(
        self, argv: Sequence[str], cwd: str | os.PathLike, env: Mapping[str, str], sink: LineSink
    ) -> None:
        self.stderr_tail = Tail()
        self.output_tail = Tail()
        self._sink = sink
        self._tail_lock = threading.Lock()
        self._popen = subprocess.Popen(
            supervised(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._readers = [
            threading.Thread(target=self._pump, args=(self._popen.stdout, False), daemon=True),
            threading.Thread(target=self._pump, args=(self._popen.stderr, True), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @property
    def pid(self) -> int:
        return self._popen.pid

    def _pump(self, pipe: IO[bytes], is_stderr: bool) -> None:
        with pipe:
            for raw in iter(lambda: pipe.readline(MAX_LINE_BYTES), b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                with self._tail_lock:
                    self.output_tail.add(line)
                    if is_stderr:
                        self.stderr_tail.add(line)
                self._sink(line, is_stderr)

    def wait(self) -> int:
        """Wait for the exit (its exit code), kill what it left behind, drain its output."""
        returncode = self._popen.wait()
        self._signal_group(signal.SIGKILL)
        for reader in self._readers:
            reader.join(READER_JOIN_SECONDS)
        return exit_code(returncode)

    def running(self) -> bool:
        return self._popen.poll() is None

    def terminate(self) -> None:
        """SIGTERM to every process of the run."""
        if self.running():
            self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to every process of the run."""
        if self.running():
            self._signal(supervisor.KILL_NOW if SUPERVISED else signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        if SUPERVISED:  # the supervisor alone: it passes the signal on to each descendant
            self._popen.send_signal(signum)
        else:
            self._signal_group(signum)

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self._popen.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


class Stopped(Exception):
    """The run was stopped before this step could start."""


class ProcessGroup:
    """The processes of one run: launched until the run is cancelled, then terminated.

    :meth:`cancel` sends SIGTERM to every live process and SIGKILL after
    ``grace`` seconds to those still alive; nothing is launched after it.
    """

    def __init__(self, grace: float) -> None:
        self._grace = grace
        self._lock = threading.Lock()
        self._live: set[ManagedProcess] = set()
        self._cancelled = False
        self._killer: threading.Timer | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def launch(
        self, argv: Sequence[str], cwd: str | os.PathLike, env: Mapping[str, str], sink: LineSink
    ) -> ManagedProcess:
        with self._lock:
            if self._cancelled:
                raise Stopped()
            process = ManagedProcess(argv, cwd, env, sink)
            self._live.add(process)
            return process

    def finished(self, process: ManagedProcess) -> None:
        with self._lock:
            self._live.discard(process)

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            live = list(self._live)
            if live:
                self._killer = threading.Timer(self._grace, self._kill_all)
                self._killer.daemon = True
                self._killer.start()
        for process in live:
            process.terminate()

    def _kill_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for process in live:
            process.kill()

    def close(self) -> None:
        with self._lock:
            killer, self._killer = self._killer, None
        if killer is not None:
            killer.cancel()


def run_to_end(
    group: ProcessGroup, argv: Sequence[str], cwd: str | os.PathLike, env: Mapping[str, str], sink: LineSink
) -> tuple[int, ManagedProcess]:
    """Launch in ``group`` and wait: ``(exit code, process)``; raises :class:`Stopped`."""
    process = group.launch(argv, cwd, env, sink)
    try:
        return process.wait(), process
    finally:
        group.finished(process)
