"""SDK v3's waits, made local for local sessions and inside activations (installed once, on first use).

- sagemaker-core's ``TrainingJob.wait`` and ``TrainingPlan.wait_for_status``
  (``resources``), what ``ModelTrainer.train()`` waits with;
- ``sagemaker.core.remote_function.job._logs_for_job``, what ``@remote``
  and ``RemoteExecutor`` jobs wait with (``_Job.wait``), and
  ``RemoteExecutor``'s job poller (``remote_executor``).

Each asks :func:`routing.backend_for` and calls the SDK's original when no
backend answers the session. Nothing is installed until a local session or
an activation is made, and the remote-function ones when their modules are
first imported (``post_import``).
"""

from __future__ import annotations

import threading
from types import ModuleType

from sagemaker_plans_local.sdk import local_waits, remote_executor, routing, telemetry
from sagemaker_plans_local.sdk.post_import import when_imported
from sagemaker_plans_local.sdk.v3 import resources

_lock = threading.Lock()
_installed = False


def install() -> None:
    """Install the dispatching waits and the telemetry filter (once per process)."""
    global _installed
    with _lock:
        if not _installed:
            resources.install()
            when_imported("sagemaker.core.remote_function.job", _patch_remote_function_wait)
            when_imported("sagemaker.core.remote_function.client", remote_executor.patch)
            _installed = True
    telemetry.install()


def _patch_remote_function_wait(remote_job: ModuleType) -> None:
    routing.route_remote_function_wait(
        remote_job,
        lambda session, backend, job_name, wait: local_waits.logs_for_job(
            session, backend, job_name, remote_job, wait
        ),
    )
