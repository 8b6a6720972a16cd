"""This machine's side of an instance's view: can it be given here, and the command line.

The view itself is set up by :mod:`.namespace`, the program every
``ContainerEntrypoint`` process (and every process of a multi-instance
script-mode job) starts as. Whether this machine allows it (Linux, user
namespaces or root) is probed once per process, by running that program on a
scratch tree; a container job that cannot get its view fails before anything
runs, with :func:`failure_reason`; a script-mode job runs without it.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Sequence

from sagemaker_plans_local.runtime import namespace
from sagemaker_plans_local.runtime.processes import run_captured

DOCS = 'docs/local-runtime.md, "ContainerEntrypoint jobs and the /opt/ml view"'

_lock = threading.Lock()
_probed: list[str | None] = []  # [the cause, or None when the view works], once probed


def unavailable() -> str | None:
    """Why a process cannot get its view on this machine; None when it can."""
    with _lock:
        if not _probed:
            _probed.append(_probe())
        return _probed[0]


def _probe() -> str | None:
    if not sys.platform.startswith("linux"):
        return f"mount namespaces need Linux; this is {sys.platform}"
    with tempfile.TemporaryDirectory(prefix="sagemaker-plans-local-probe-") as scratch:
        done = run_captured([*program(), "--probe", scratch])
    if done.returncode == 0:
        return None
    return done.stdout.strip() or done.stderr.strip() or f"the probe exited with code {done.returncode}"


def failure_reason(cause: str) -> str:
    """The FailureReason of a container job on a machine that cannot give it its view."""
    return (
        "ClientError: The local runtime cannot show a ContainerEntrypoint job its instance "
        f"at /opt/ml on this machine ({cause}). It needs Linux with unprivileged user "
        f"namespaces, or root; see {DOCS}."
    )


def launcher(
    command: Sequence[str],
    *,
    opt_ml: Path | None = None,
    cache: Path | None = None,
    cwd: str | None = None,
    hosts: Path | None = None,
    hostname: str | None = None,
    system: Any = None,
) -> list[str]:
    """The command line that runs ``command`` in its view: each part only when given (``system``:
    a container instance's :class:`~.systems.System`)."""
    options = {"--opt-ml": opt_ml, "--cache": cache, "--cwd": cwd, "--hosts": hosts, "--hostname": hostname}
    if system is not None:
        options.update({"--tmp": system.tmp, "--environment": system.environment, "--sshd": system.sshd})
    given = [part for name, value in options.items() if value is not None for part in (name, str(value))]
    return [*program(), *given, "--", *command]


def program() -> list[str]:
    """How :mod:`.namespace` is started: this Python, isolated, without site."""
    return [sys.executable, "-I", "-S", namespace.__file__]
