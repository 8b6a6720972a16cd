"""``RemoteExecutor``'s job poller, local for local sessions (both SDK majors).

The SDK's ``_polling_worker`` (``sagemaker.remote_function.client`` in v2,
``sagemaker.core.remote_function.client`` in v3) checks the running jobs
every 10 real seconds, and ``RemoteExecutor`` exits only once it has seen
them end. For an executor whose session is local (:func:`routing.backend_for`)
the replacement steps each running job on the backend instead, as a wait
does, and drops it from the running set as soon as it ends; for any other
session it is the SDK's own.
"""

from __future__ import annotations

import logging
from types import ModuleType

from sagemaker_plans_local.sdk import routing
from sagemaker_plans_local.sdk.local_waits import LOG_FLUSH_SECONDS
from sagemaker_plans_local.services.sagemaker.statuses import FINISHED_JOB_STATUSES as _ENDED

log = logging.getLogger(__name__)


def patch(client_module: ModuleType) -> None:
    """Replace ``client_module._polling_worker`` by a dispatching one."""
    original = client_module._polling_worker  # type: ignore[attr-defined]  # the SDK's untyped module

    def _polling_worker(executor) -> None:
        session = executor.job_settings.sagemaker_session
        backend = routing.backend_for(session)
        if backend is None:
            return original(executor)
        try:
            _poll_locally(executor, backend, session.boto_region_name)
        except Exception:  # as the SDK's worker: a background thread has no caller to raise to
            log.exception("Error occurred while monitoring the job statuses.")
        return None

    client_module._polling_worker = _polling_worker  # type: ignore[attr-defined]  # the SDK's untyped module


def _poll_locally(executor, backend, region: str) -> None:
    condition = executor._state_condition
    while True:
        with condition:
            if not executor._running_jobs:
                if executor._shutdown and not executor._pending_request_queue:
                    return
                condition.wait(timeout=LOG_FLUSH_SECONDS)  # until a job is submitted or shutdown
                continue
            running = list(executor._running_jobs)
        for job_name in running:
            job = backend.step_training_job(job_name, region=region, max_wait=LOG_FLUSH_SECONDS)
            if job.status in _ENDED:
                with condition:
                    executor._running_jobs.pop(job_name, None)
                    condition.notify_all()
