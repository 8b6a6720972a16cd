"""Worker processes (tests/durable/worker.py) for the shared-root tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Worker:
    """One worker process: ``ask(command, *args)`` sends a command and returns its JSON answer."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.durable.worker"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, command: str, *args) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([command, *args]) + "\n")
        self.process.stdin.flush()

    def answer(self):
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, f"the worker ended (exit code {self.process.poll()})"
        return json.loads(line)

    def ask(self, command: str, *args):
        self.send(command, *args)
        return self.answer()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
