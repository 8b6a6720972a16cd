"""A process working on a shared root, driven line by line from a test (``python -m tests.durable.worker``).

Commands on stdin, one JSON list per line; each answers one JSON line on stdout:
- ``["open", root]``: open a backend on ``root`` (its recorded clock);
- ``["job", name, keep_alive, source_dir_or_null, seconds]``: create a training job (script-mode
  ``sleeper.py`` running ``seconds`` when a source directory is given);
- ``["advance", seconds]``, ``["describe", name]``, ``["wait", name]``, ``["close"]``;
- ``["write_loop", start]``: write forever (job, advance, setting, S3 object), printing each step's
  number once it is committed — until killed;
- ``["snapshot_loop", start]``: the same, with a snapshot of the state after each step.
"""

from __future__ import annotations

import json
import sys

from sagemaker_plans_local import LocalBackend
from tests.conftest import create_request

SLEEPER = (
    "import sys, time\nprint('sleeping', flush=True)\n"
    "time.sleep(float(sys.argv[sys.argv.index('--seconds') + 1]))\nprint('slept')\n"
)


def job_request(name: str, keep_alive: int, source: str | None = None, seconds: float = 0) -> dict:
    """The suite's CreateTrainingJob request; script-mode ``sleeper.py`` when ``source`` is given."""
    request = create_request(name, keep_alive=keep_alive or None)
    if source is not None:
        request["HyperParameters"] = {
            "sagemaker_program": '"sleeper.py"',
            "sagemaker_submit_directory": json.dumps(source),
            "seconds": str(seconds),
        }
    return request


def write_loop(backend: LocalBackend, start: int, snapshots: bool = False) -> None:
    sm, s3 = backend.client(), backend.client("s3")
    s3.create_bucket(Bucket="crash")
    for step in range(start, 10**9):
        sm.create_training_job(**job_request(f"w-{step}", keep_alive=600 if step % 2 else 0))
        backend.clock.advance(7)
        backend.settings.job_runtime_seconds = 100 + step
        s3.put_object(Bucket="crash", Key=f"k-{step % 5}", Body=str(step).encode() * (step % 50 + 1))
        if snapshots:
            assert backend._durable is not None  # a durable root
            backend._durable.snapshot()
        print(json.dumps(step), flush=True)


def main() -> None:
    backend: LocalBackend | None = None
    for line in sys.stdin:
        command, *args = json.loads(line)
        if command == "open":
            backend = LocalBackend(root=args[0])
            answer: object = str(backend.clock.now())
        elif command == "close":
            assert backend is not None
            backend.close()
            answer = "closed"
        else:
            assert backend is not None
            answer = _act(backend, command, args)
        print(json.dumps(answer, default=str), flush=True)


def _act(backend: LocalBackend, command: str, args: list) -> object:
    sm = backend.client()
    if command == "job":
        return sm.create_training_job(**job_request(*args))["TrainingJobArn"]
    if command == "advance":
        return str(backend.clock.advance(args[0]))
    if command == "describe":
        return sm.describe_training_job(TrainingJobName=args[0])
    if command == "wait":
        return backend.wait_for_training_job(args[0]).status
    if command in ("write_loop", "snapshot_loop"):
        write_loop(backend, args[0], snapshots=command == "snapshot_loop")
    raise ValueError(command)


if __name__ == "__main__":
    main()
