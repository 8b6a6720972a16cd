"""One instance of a local run: its outcome, its log stream, and how a failure is reported."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from sagemaker_plans_local.runtime.contract import LOG_GROUP
from sagemaker_plans_local.runtime.inputs import Snapshot
from sagemaker_plans_local.runtime.paths import InstanceTree
from sagemaker_plans_local.runtime.processes import ManagedProcess

#: Exit code of a run that failed before the entry point ran (inputs, code, internal error).
SETUP_EXIT_CODE = 1
#: Longest FailureReason kept (longer ones are cut, ending in "...").
REASON_LIMIT = 1024


@attrs.define
class InstanceOutcome:
    """How one instance's process ended, and what it leaves to upload."""

    exit_code: int = SETUP_EXIT_CODE
    failure_reason: str | None = None
    tree: InstanceTree | None = None  # set once the inputs are in place (outputs are packed)
    checkpoints: tuple[str, Path, Snapshot] | None = None


class InstanceLog:
    """An instance's log stream; each line is stamped ``virtual start + real elapsed``."""

    def __init__(self, store: Any, stream: str, at: datetime, started: float) -> None:
        self.stream = stream
        self._store = store
        self._at = at
        self._started = started
        self._lock = threading.Lock()

    def line(self, text: str, is_stderr: bool = False) -> None:
        with self._lock:  # one order for stdout and stderr: the timestamps'
            stamp = self._at + timedelta(seconds=time.monotonic() - self._started)
            self._store.append(LOG_GROUP, self.stream, stamp, text)


def limit_reason(text: str) -> str:
    """``text`` cut to :data:`REASON_LIMIT` characters."""
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 3] + "..."


def over_cap_reason(cap: int, count: int, per_host: int = 1) -> str:
    """The FailureReason of a job whose instances (× a launcher's processes per host, when more
    than one) are more than the local processes that may run for it."""
    asks = (
        f"{count} ({count // per_host} instances x {per_host} processes per host)" if per_host > 1 else count
    )
    return (
        f"ClientError: The local runtime runs at most {cap} local instance processes per job "
        f"(setting max_instance_processes); this job asks for {asks}. Raise the setting "
        "(backend.settings.max_instance_processes, or POST /_sagemaker_plans_local/settings) "
        'or use fewer instances; see docs/local-runtime.md, "Instances".'
    )


def failure_reason(failure_file: Path, process: ManagedProcess, code: int) -> str:
    """``/opt/ml/output/failure`` if the script wrote one, else its stderr's last lines."""
    try:
        written = failure_file.read_text(errors="replace").strip()
    except OSError:
        written = ""
    if written:
        return limit_reason(written)
    return process.stderr_tail.text().strip() or f"ExitCode {code}"
