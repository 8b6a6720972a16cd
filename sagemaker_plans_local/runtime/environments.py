"""Virtual environments: a script-mode job's ``requirements.txt``, a container's Python.

A script-mode job whose code directory holds ``requirements.txt`` runs in a
virtualenv of the job, shared by its instances (``<job's directory>/venv``);
each instance of a ``ContainerEntrypoint`` job runs in its own
(``<instance>/venv``: the SDK's drivers install on every instance). Both are
kept with a warm pool's instances, made with ``python -m venv
--system-site-packages --without-pip`` from the executor's Python, plus
``pip``/``pip3`` commands running that virtualenv's ``python -m pip``. A ``.pth``
file in it adds that Python's own site directories (those of *its* virtualenv,
when it runs in one: ``--system-site-packages`` alone would reach only the
base installation), so the script sees what the calling environment has -
the "image" - and what pip adds on top takes precedence.

pip is the calling environment's pip, run by the virtualenv's interpreter
(``<venv>/bin/python -m pip install -r requirements.txt``), so it installs
into the virtualenv and counts the calling environment's packages as already
satisfied, and what a job installs never reaches the calling environment. A
hash of ``requirements.txt`` (and of the base Python) recorded in the
virtualenv after a successful install lets the job's other instances, and a
warm start on the same pool, skip pip entirely. The caller serialises the
instances of a script-mode job (the first installs, the others wait and find
it done).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Callable, Mapping

from sagemaker_plans_local.runtime.processes import run_captured

REQUIREMENTS = "requirements.txt"
MARKER = ".requirements.sha256"
BASE_MARKER = ".base-python"
PTH_NAME = "_sagemaker_local_base.pth"
#: Commands a container expects beside ``python``/``python3``, as ``python -m <module>``: pip (v3's
#: driver checks for it) and torchrun (v3's Torchrun driver starts it; it fails as an image without
#: PyTorch would when torch is not installed).
MODULE_COMMANDS = {"pip": "pip", "pip3": "pip", "torchrun": "torch.distributed.run"}

#: Runs pip: (argv, env) -> (exit code, output tail); raises processes.Stopped.
Runner = Callable[[list[str], Mapping[str, str]], tuple[int, str]]

#: Run as ``python -c`` (not ``-I``: the user site and ``PYTHONUSERBASE`` count), it drops the working
#: directory ``-c`` puts first on ``sys.path`` before it imports anything.
_SITE_QUERY = (
    "import sys\nif sys.path[:1] == ['']:\n    del sys.path[0]\n"
    "import json, site; print(json.dumps(site.getsitepackages()"
    " + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])))"
)


class InstallError(Exception):
    """pip failed; ``str(error)`` is the failure reason."""

    def __init__(self, exit_code: int, reason: str) -> None:
        super().__init__(reason)
        self.exit_code = exit_code


class VirtualEnvironments:
    """Makes and fills the virtualenvs of one executor's jobs."""

    def __init__(self, python: str) -> None:
        self.python = python
        self._site_dirs: list[str] | None = None
        self._lock = threading.Lock()

    def site_dirs(self) -> list[str]:
        """The executor Python's site directories (asked once)."""
        with self._lock:
            if self._site_dirs is None:
                out = _checked([self.python, "-c", _SITE_QUERY])
                self._site_dirs = [d for d in json.loads(out) if os.path.isdir(d)]
            return self._site_dirs

    def prepare(
        self, venv: Path, requirements: Path, env: Mapping[str, str], run: Runner
    ) -> tuple[str, dict[str, str]]:
        """Make ``venv`` hold ``requirements``: (its python, the env to run the script with)."""
        python = self.ensure(venv)
        venv_env = activated(env, venv)
        digest = self.digest(requirements)
        if _read(venv / MARKER) == digest:
            return str(python), venv_env
        pip_env = dict(venv_env)
        pip_env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        pip_env.setdefault("PIP_NO_INPUT", "1")
        argv = [str(python), "-m", "pip", "install", "-r", REQUIREMENTS]
        code, tail = run(argv, pip_env)
        if code != 0:
            raise InstallError(code, _install_reason(code, tail))
        (venv / MARKER).write_text(digest)
        return str(python), venv_env

    def ensure(self, venv: Path) -> Path:
        """``venv`` made (again, if its base Python changed); its python."""
        python = venv / "bin" / "python"
        if not python.exists() or _read(venv / BASE_MARKER) != self.python:
            self._create(venv)
        return python

    def digest(self, requirements: Path) -> str:
        sha = hashlib.sha256(requirements.read_bytes())
        sha.update(b"\0" + self.python.encode())
        return sha.hexdigest()

    def _create(self, venv: Path) -> None:
        if venv.exists():
            shutil.rmtree(venv)
        # -I: ``-m`` would find ``venv`` (and what it imports) in the working directory first
        _checked([self.python, "-I", "-m", "venv", "--system-site-packages", "--without-pip", str(venv)])
        site_packages = next((venv / "lib").glob("python*/site-packages"))
        dirs = self.site_dirs()
        # One line starting with "import" is executed by site.py; no comprehension (scoping).
        (site_packages / PTH_NAME).write_text(
            "import site; " + "; ".join("site.addsitedir(%s)" % json.dumps(d) for d in dirs) + "\n"
        )
        for name, module in MODULE_COMMANDS.items():
            command = venv / "bin" / name
            python = shlex.quote(str(venv / "bin" / "python"))
            command.write_text('#!/bin/sh\nexec %s -m %s "$@"\n' % (python, module))
            command.chmod(0o755)
        (venv / BASE_MARKER).write_text(self.python)


def activated(env: Mapping[str, str], venv: Path) -> dict[str, str]:
    """``env`` as ``source venv/bin/activate`` leaves it."""
    result = dict(env)
    result["VIRTUAL_ENV"] = str(venv)
    result["PATH"] = os.pathsep.join([str(venv / "bin")] + ([env["PATH"]] if env.get("PATH") else []))
    result.pop("PYTHONHOME", None)
    return result


def _checked(argv: list[str]) -> str:
    """Run a helper to its end (supervised: it dies with this process); its stdout."""
    done = run_captured(argv)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, argv, done.stdout, done.stderr)
    return done.stdout


def _install_reason(code: int, tail: str) -> str:
    head = f"InstallRequirementsError: pip install -r {REQUIREMENTS} exited with code {code}"
    if not tail:
        return head
    room = 1024 - len(head) - 2
    if len(tail) > room:
        tail = "..." + tail[-(room - 3) :]
    return f"{head}: {tail}"


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None
