"""Make unmodified code local: plain ``sagemaker.Session()`` (v2 or v3) and every boto3 client.

With ``SAGEMAKER_PLANS_LOCAL=0`` both :func:`activated` and :func:`activate`
do nothing at all (no backend, no patch, no hook): the code runs against AWS.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from typing import Callable, Iterator

import boto3

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.sdk import routing
from sagemaker_plans_local.sdk.default_backend import default_backend
from sagemaker_plans_local.sdk.flag import local_by_default
from sagemaker_plans_local.sdk.major import installed_major, layer
from sagemaker_plans_local.sdk.remote import Backend, RemoteBackend

_lock = threading.Lock()
_open: list[contextlib.ExitStack] = []


def _default_region(stack: contextlib.ExitStack, backend: Backend) -> None:
    """Sessions created without a configured region get the backend's (as clients do)."""
    if boto3.session.Session().region_name is None:
        stack.enter_context(_environment("AWS_DEFAULT_REGION", backend.region))


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


@contextlib.contextmanager
def sdk_layer(backend: Backend) -> Iterator[None]:
    """The installed SDK's waits, telemetry and (v3, in process) cached clients follow ``backend``'s activation.

    ``LocalBackend.activate()`` and ``RemoteBackend.activate()`` enter it when an SDK is installed.
    """
    major = installed_major()
    if major is None:
        yield
        return
    layer("waits").install()
    with contextlib.ExitStack() as stack:
        routing.push(backend)
        stack.callback(routing.pop, backend)
        if major >= 3 and isinstance(backend, LocalBackend):
            from sagemaker_plans_local.sdk.v3.cached_clients import routed

            stack.enter_context(routed(backend))
        yield


@contextlib.contextmanager
def activated(backend: Backend | None = None, endpoint_url: str | None = None) -> Iterator[Backend | None]:
    """Within the block, every boto3 client and SDK session is answered by ``backend``.

    ``backend``, else the server at ``endpoint_url``, else :func:`default_backend`
    (``SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL``'s server, or the in-process one). Yields the
    backend (None, and changes nothing, when ``SAGEMAKER_PLANS_LOCAL=0``).
    """
    if not local_by_default():
        yield None
        return
    if backend is not None and endpoint_url is not None:
        raise ValueError("activate either a backend or an endpoint_url, not both")
    backend = backend or (RemoteBackend(endpoint_url) if endpoint_url else default_backend())
    with contextlib.ExitStack() as stack:
        stack.enter_context(backend.activate())  # the SDK layer too (sdk_layer)
        _default_region(stack, backend)
        yield backend


def activate(backend: Backend | None = None, endpoint_url: str | None = None) -> Callable[[], None]:
    """Like :func:`activated` for the rest of the process; returns a function that undoes it.

    What is still active when the interpreter exits is undone at exit, before the modules are torn down.
    """
    stack = contextlib.ExitStack()
    stack.enter_context(activated(backend, endpoint_url))
    with _lock:
        if not _open:
            atexit.register(_deactivate_all)
        _open.append(stack)

    def deactivate() -> None:
        with _lock:
            if stack in _open:
                _open.remove(stack)
        stack.close()

    return deactivate


def _deactivate_all() -> None:
    """Undo every :func:`activate` still open, innermost first (at interpreter exit)."""
    with _lock:
        stacks, _open[:] = list(reversed(_open)), []
        atexit.unregister(_deactivate_all)
    for stack in stacks:
        stack.close()
