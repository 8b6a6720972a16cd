"""Make unmodified code local: plain ``sagemaker.Session()`` and every boto3 client."""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Callable, Iterator

import boto3
import sagemaker.session

from ..backend import LocalBackend
from . import local_waits, telemetry
from .default_backend import default_backend

_lock = threading.Lock()
_open: list[contextlib.ExitStack] = []


def _patch_waits(stack: contextlib.ExitStack, backend: LocalBackend) -> None:
    """While active, ``sagemaker.session.Session`` waits on the backend, not with sleeps."""
    cls = sagemaker.session.Session
    original_wait, original_logs = cls.wait_for_job, cls.logs_for_job

    def wait_for_job(self, job, poll=5):
        return local_waits.wait_for_job(self, backend, job)

    def logs_for_job(self, job_name, wait=False, poll=10, log_type="All", timeout=None):
        return local_waits.logs_for_job(self, backend, job_name, wait, log_type, timeout)

    cls.wait_for_job, cls.logs_for_job = wait_for_job, logs_for_job

    def restore() -> None:
        cls.wait_for_job, cls.logs_for_job = original_wait, original_logs

    stack.callback(restore)


def _default_region(stack: contextlib.ExitStack, backend: LocalBackend) -> None:
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
def activated(backend: LocalBackend | None = None) -> Iterator[LocalBackend]:
    """Within the block, every boto3 client and ``sagemaker.Session()`` is answered by ``backend``."""
    backend = backend or default_backend()
    with contextlib.ExitStack() as stack:
        stack.enter_context(backend.activate())
        _patch_waits(stack, backend)
        stack.enter_context(telemetry.silenced())
        _default_region(stack, backend)
        yield backend


def activate(backend: LocalBackend | None = None) -> Callable[[], None]:
    """Like :func:`activated` for the rest of the process; returns a function that undoes it."""
    stack = contextlib.ExitStack()
    stack.enter_context(activated(backend))
    with _lock:
        _open.append(stack)

    def deactivate() -> None:
        with _lock:
            if stack in _open:
                _open.remove(stack)
        stack.close()

    return deactivate
