"""SDK v2's waits, made local for local sessions and inside activations (installed once, on first use).

- ``sagemaker.session.Session.wait_for_job`` / ``logs_for_job`` (what
  ``fit()`` and ``latest_training_job.wait()`` call) for a plain
  ``sagemaker.Session()`` inside ``activated()``;
- ``sagemaker.remote_function.job._logs_for_job``, the module-level
  function ``@remote`` and ``RemoteExecutor`` jobs wait with (it bypasses
  ``Session.logs_for_job``), and ``RemoteExecutor``'s job poller
  (``remote_executor``); both when their module is first imported.

Each replacement asks :func:`routing.backend_for` which backend answers the
session and calls the SDK's original when none does, so sessions going to
AWS are untouched. Nothing is installed while no local session or
activation has been made (``SAGEMAKER_PLANS_LOCAL=0``).
"""

from __future__ import annotations

import threading
from types import ModuleType

import sagemaker.session as sdk_session

from sagemaker_plans_local.sdk import local_waits, remote_executor, routing, telemetry
from sagemaker_plans_local.sdk.post_import import when_imported
from sagemaker_plans_local.sdk.remote import Backend

_lock = threading.Lock()
_installed = False


def wait_for_job(session, backend: Backend, job_name: str) -> dict:
    return local_waits.wait_for_job(session, backend, job_name, sdk_session)


def logs_for_job(session, backend: Backend, job_name: str, wait: bool = False) -> dict:
    return local_waits.logs_for_job(session, backend, job_name, sdk_session, wait)


def install() -> None:
    """Install the dispatching waits and the telemetry filter (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        _install_session_waits()
        when_imported("sagemaker.remote_function.job", _patch_remote_function_wait)
        when_imported("sagemaker.remote_function.client", remote_executor.patch)
        _installed = True
    telemetry.install()


def _install_session_waits() -> None:
    cls = sdk_session.Session
    original_wait, original_logs = cls.wait_for_job, cls.logs_for_job

    def wait_for_job_(self, job, poll=5):
        backend = routing.backend_for(self)
        if backend is None:
            return original_wait(self, job, poll)
        return wait_for_job(self, backend, job)

    def logs_for_job_(self, job_name, wait=False, poll=10, log_type="All", timeout=None):
        backend = routing.backend_for(self)
        if backend is None:
            return original_logs(self, job_name, wait, poll, log_type, timeout)
        return logs_for_job(self, backend, job_name, wait)

    cls.wait_for_job, cls.logs_for_job = wait_for_job_, logs_for_job_


def _patch_remote_function_wait(remote_job: ModuleType) -> None:
    routing.route_remote_function_wait(remote_job, logs_for_job)
