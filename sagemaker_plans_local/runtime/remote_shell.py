"""The ``ssh`` of a container's view: runs a command on another instance of the run, on this machine.

Run as ``python -I -S remote_shell.py <run's instances directory> <ssh arguments...>``
(standard library only; the view's ``ssh`` on ``PATH`` execs it). Options are
skipped (with their values), then ``[user@]host command...``. As ``ssh``, it
fails with 255 when the host's ``sshd`` does not listen (:func:`.sshd.up`); else
the command runs through ``/bin/sh -c`` in the host's view (its ``/opt/ml``,
``/tmp``, ``/etc/environment``, ``sshd`` and hostname; :mod:`.namespace`), with
this process's environment and, over it, the host's ``/etc/environment``
(as ``sshd``'s ``pam_env`` reads it), under this process (a stop reaches it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys

#: ssh's options that take a value (``ssh(1)``'s synopsis).
WITH_VALUE = set("BbcDEeFIiJLlmOoPpQRSWw")
HOST = re.compile(r"algo-[0-9]+")
SSH_FAILED = 255


def split(argv: list[str]) -> tuple[str, list[str]]:
    """``(host, command words)`` of an ssh command line."""
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        letters = argv[i][1:]
        for at, letter in enumerate(letters):
            if letter in WITH_VALUE:
                i += 1 if at + 1 < len(letters) else 2
                break
        else:
            i += 1
    rest = argv[i + 1 :] if argv[i : i + 1] == ["--"] else argv[i:]
    if not rest:
        raise SystemExit("usage: ssh [options] host command...")
    return rest[0].rsplit("@", 1)[-1], rest[1:]


def environment_file(path: str) -> dict[str, str]:
    """``NAME=value`` lines (quotes around the value dropped), as ``pam_env`` reads ``/etc/environment``."""
    found: dict[str, str] = {}
    try:
        with open(path, errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return found
    for line in lines:
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, equals, value = line.partition("=")
        if not equals or line.startswith("#") or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        found[name] = value
    return found


def _sshd_module():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_sagemaker_local_sshd", os.path.join(here, "sshd.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    instances, (host, command) = argv[0], split(argv[1:])
    system = os.path.join(instances, host, "system")
    if not HOST.fullmatch(host) or not _sshd_module().up(host, system):
        sys.stderr.write(f"ssh: connect to host {host} port 22: Connection refused\n")
        return SSH_FAILED
    env = {**os.environ, **environment_file(os.path.join(system, "environment"))}
    namespace = os.path.join(os.path.dirname(os.path.abspath(__file__)), "namespace.py")
    view = ["--opt-ml", os.path.join(instances, host, "opt", "ml"), "--hostname", host]
    view += ["--tmp", os.path.join(system, "tmp"), "--nested", "yes"]
    view += ["--environment", os.path.join(system, "environment"), "--sshd", os.path.join(system, "sshd")]
    shell = ["/bin/sh", "-c", " ".join(command)] if command else ["/bin/sh"]
    program = [sys.executable, "-I", "-S", namespace, *view, "--", *shell]
    os.execve(program[0], program, env)
    return SSH_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
