"""On a container job's PYTHONPATH: paramiko's check of an instance's port 22 asks its ``sshd``.

SageMaker's v3 MPI driver waits until paramiko can connect to every worker's
``sshd`` on port 22. The instances' ``sshd`` here (``runtime/sshd.py``) speaks no SSH
and cannot take port 22 without privileges, so, once paramiko is imported,
``SSHClient.connect(host, 22)`` for a host of the run (``algo-<i>`` with a directory
under ``SAGEMAKER_PLANS_LOCAL_INSTANCES``) connects to that ``sshd`` instead: it
returns (no session is opened) when it listens, and raises paramiko's
``NoValidConnectionsError`` when not. Other hosts and ports are paramiko's own.
Then the sitecustomize this one shadows, if any, runs.
"""

import os
import sys


def _load(name, path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _patch(client):
    instances = os.environ.get("SAGEMAKER_PLANS_LOCAL_INSTANCES", "")
    here = os.path.dirname(os.path.abspath(__file__))
    sshd = _load("_sagemaker_local_sshd", os.path.join(os.path.dirname(here), "sshd.py"))
    original = client.SSHClient.connect

    def connect(self, hostname, port=22, *args, **kwargs):
        system = os.path.join(instances, str(hostname), "system")
        if not instances or port != 22 or not str(hostname).startswith("algo-") or not os.path.isdir(system):
            return original(self, hostname, port, *args, **kwargs)
        if not sshd.up(str(hostname), system):
            from paramiko.ssh_exception import NoValidConnectionsError  # type: ignore[import-untyped]

            refused = ConnectionRefusedError(111, "Connection refused")
            raise NoValidConnectionsError({(str(hostname), port): refused})
        return None

    client.SSHClient.connect = connect


class _AfterImport:
    """Patches ``paramiko.client`` once it is imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "paramiko.client":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get("SAGEMAKER_PLANS_LOCAL_INSTANCES"):
    sys.meta_path.insert(0, _AfterImport())


def _chain():
    """Run the sitecustomize this one shadows: the next one on sys.path after this directory."""
    import importlib.machinery

    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(entry or ".") for entry in sys.path]
    rest = sys.path[entries.index(here) + 1 :] if here in entries else []
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        _load("sitecustomize", spec.origin)


_chain()
