"""A container instance's own system files: ``/tmp``, ``/etc/environment``, ``sshd``, and ``ssh``.

SageMaker's v3 MPI driver (``sm_drivers/distributed_drivers/mpi_driver.py``)
appends the environment to ``/etc/environment``, starts ``/usr/sbin/sshd -D``,
waits until paramiko connects to every worker's port 22, exchanges
``/tmp/ready.<host>`` and ``/tmp/done.algo-1`` with ``ssh <host> touch ...``,
and runs ``mpirun``, which starts its daemons on the workers with ``ssh``. So
each instance of a container job gets, in its view (:mod:`.namespace`), its
own ``/tmp`` and ``/etc/environment`` (a copy of this machine's, so nothing
reaches the real one), an ``sshd`` stand-in (:mod:`.sshd`) and, first on
``PATH``, the run's ``ssh`` (:mod:`.remote_shell`); paramiko's port-22 check
is answered by ``instance_site/sitecustomize.py`` (on the job's ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import attrs

from sagemaker_plans_local.runtime import remote_shell, sshd

#: The directory of the site module paramiko's check goes through (after the job bootstrap).
INSTANCE_SITE = Path(__file__).parent / "instance_site"
#: The run's directory: where the instances' directories are (the view's ssh and the check find them).
INSTANCES_VARIABLE = "SAGEMAKER_PLANS_LOCAL_INSTANCES"
MACHINE_ENVIRONMENT = Path("/etc/environment")
SHELL_DIR = "bin"


@attrs.frozen
class System:
    """One container instance's ``system`` directory: ``tmp/``, ``environment``, ``sshd``."""

    root: Path

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def environment(self) -> Path:
        return self.root / "environment"

    @property
    def sshd(self) -> Path:
        return self.root / "sshd"

    def prepare(self, machine_environment: Path = MACHINE_ENVIRONMENT) -> None:
        """An empty ``tmp/``, this machine's ``/etc/environment`` copied, the ``sshd`` script."""
        self.tmp.mkdir(parents=True, exist_ok=True)
        try:
            text = machine_environment.read_text(errors="replace")
        except OSError:
            text = ""
        self.environment.write_text(text)
        _script(self.sshd, [sys.executable, "-I", "-S", sshd.__file__, str(self.root)])


def write_shell(base: Path) -> Path:
    """The run's ``ssh`` (``<base>/bin/ssh``); the directory to put first on ``PATH``."""
    directory = base / SHELL_DIR
    directory.mkdir(parents=True, exist_ok=True)
    _script(directory / "ssh", [sys.executable, "-I", "-S", remote_shell.__file__, str(base)])
    return directory


def environment(env: dict[str, str], base: Path) -> dict[str, str]:
    """A container's environment with the run's ``ssh`` first on ``PATH`` and the instances named."""
    result = dict(env)
    path = env.get("PATH") or os.defpath
    result["PATH"] = os.pathsep.join([str(base / SHELL_DIR), path])
    result[INSTANCES_VARIABLE] = str(base)
    return result


def _script(path: Path, argv: list[str]) -> None:
    path.write_text(
        "#!/bin/sh\n# sagemaker-plans-local (runtime/systems.py)\n"
        f'exec {" ".join(shlex.quote(word) for word in argv)} "$@"\n'
    )
    path.chmod(0o755)
