"""sagemaker-core's resource waits, local for local sessions and inside activations.

``TrainingJob.wait`` and the ``wait_for_status`` of ``TrainingPlan`` and
``Cluster`` (HyperPod) poll with ``time.sleep(poll)`` (5 real seconds). For
a resource whose boto3 session is answered by a backend
(:func:`routing.backend_for`), the replacements step the backend instead: a
job's simulated phases and a plan's or a cluster's status changes are
waited for as the backend waits (a manual clock moves to each change at
once, a wall clock sleeps until it unless ``settings.fast_forward_waits``),
and a job's real process is waited for. They log what sagemaker-core logs (each new log event as ``<stream>:\\n<message>``
on ``sagemaker.core.resources``'s logger, then ``Final Resource Status``)
and raise its errors; on a terminal they draw its transient progress panel (a spinner with real
elapsed time and the status). ``timeout`` counts the backend's clock. Other resources call
the originals.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from datetime import timedelta
from typing import Callable, Iterator

from sagemaker.core import resources
from sagemaker.core.utils.exceptions import FailedStatusError, TimeoutExceededError

from sagemaker_plans_local.sdk import routing
from sagemaker_plans_local.sdk.local_waits import LOG_FLUSH_SECONDS
from sagemaker_plans_local.sdk.remote import Backend, RemoteBackend
from sagemaker_plans_local.services.sagemaker.statuses import FINISHED_JOB_STATUSES as _ENDED

_lock = threading.Lock()
_installed = False


def install() -> None:
    """Replace the waits by dispatching ones (once per process)."""
    global _installed
    with _lock:
        if _installed:
            return
        _install_training_job_wait()
        for class_name, status_attribute, reason_attribute in STATUS_WAITS:
            _install_status_wait(class_name, status_attribute, reason_attribute)
        _installed = True


def _install_training_job_wait() -> None:
    original = resources.TrainingJob.wait

    def wait(self, poll: int = 5, timeout: int | None = None, logs: bool | None = False) -> None:
        backend = routing.backend_for(self._session)
        if backend is None:
            return original(self, poll=poll, timeout=timeout, logs=logs)
        return wait_for_training_job(self, backend, timeout, bool(logs))

    resources.TrainingJob.wait = wait


#: Resources whose ``wait_for_status`` moves the clock locally: (class name, status attribute, reason attribute).
STATUS_WAITS = (("TrainingPlan", "status", "status_message"), ("Cluster", "cluster_status", None))


def _install_status_wait(class_name: str, status_attribute: str, reason_attribute: str | None) -> None:
    cls = getattr(resources, class_name)
    original = cls.wait_for_status

    def wait_for_status(self, target_status, poll: int = 5, timeout: int | None = None) -> None:
        backend = routing.backend_for(self._session)
        if backend is None:
            return original(self, target_status, poll=poll, timeout=timeout)
        return wait_for_status_locally(
            self, backend, target_status, timeout, status_attribute, reason_attribute
        )

    cls.wait_for_status = wait_for_status


def _region(resource, backend: Backend) -> str:
    session = resource._session
    return resource._region or getattr(session, "region_name", None) or backend.region


def wait_for_training_job(job, backend: Backend, timeout: int | None, logs: bool) -> None:
    """``TrainingJob.wait`` on ``backend``: step it until the job ends, showing sagemaker-core's panel."""
    with _wait_panel() as show:
        _step_until_ended(job, backend, timeout, logs, show)


@contextlib.contextmanager
def _wait_panel() -> Iterator[Callable[[str], None]]:
    """On a terminal, sagemaker-core's own transient "Wait Log Panel" (a spinner, the elapsed time and the
    current status), as ``TrainingJob.wait`` draws it on AWS; nothing elsewhere (stdout not a TTY)."""
    if not sys.stdout.isatty():  # a TTY itself: not $FORCE_COLOR, which CI may set
        yield lambda status: None
        return
    from rich.console import Console, Group
    from rich.live import Live
    from rich.panel import Panel
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.status import Status

    progress = Progress(SpinnerColumn("bouncingBar"), TextColumn("{task.description}"), TimeElapsedColumn())
    progress.add_task("Waiting for TrainingJob...")
    current = Status("Current status:")
    panel = Panel(Group(progress, current), title="Wait Log Panel", border_style="blue")
    with Live(panel, console=Console(force_terminal=True), transient=True):
        yield lambda status: current.update(f"Current status: [bold]{status}")


def _step_until_ended(
    job, backend: Backend, timeout: int | None, logs: bool, show: Callable[[str], None]
) -> None:
    region = _region(job, backend)
    deadline = None if timeout is None else backend.clock.now() + timedelta(seconds=timeout)
    reader = _LogReader(backend.client("logs", region_name=region), job.get_name()) if logs else None
    while True:
        job.refresh()
        status = job.training_job_status
        show(status)
        if reader is not None:
            reader.log_new_events()
        if status in _ENDED:
            resources.logger.info(f"Final Resource Status: [bold]{status}")
            if "failed" in status.lower():
                raise FailedStatusError(resource_type="TrainingJob", status=status, reason=job.failure_reason)
            return
        if deadline is not None and backend.clock.now() >= deadline:
            raise TimeoutExceededError(
                resource_type="TrainingJob",
                status=status,
                message=("Your training job is still running. Call .refresh() to check its current status."),
            )
        backend.step_training_job(job.get_name(), region=region, max_wait=LOG_FLUSH_SECONDS)


def wait_for_status_locally(
    resource,
    backend: Backend,
    target_status: str,
    timeout: int | None,
    status_attribute: str,
    reason_attribute: str | None,
) -> None:
    """``<Resource>.wait_for_status`` on ``backend``: wait for each next change of its clock."""
    kind = type(resource).__name__
    deadline = None if timeout is None else backend.clock.now() + timedelta(seconds=timeout)
    while True:
        resource.refresh()
        status = getattr(resource, status_attribute)
        if status == target_status:
            resources.logger.info(f"Final Resource Status: [bold]{status}")
            return
        if "failed" in status.lower():
            reason = getattr(resource, reason_attribute) if reason_attribute else "(Unknown)"
            raise FailedStatusError(resource_type=kind, status=status, reason=reason)
        if isinstance(backend, RemoteBackend):  # the server moves first; its clock tells whether in time
            if not backend.wait_for_next_change() or (
                deadline is not None and backend.clock.now() > deadline
            ):
                raise TimeoutExceededError(resource_type=kind, status=status)
            continue
        due = backend.clock.next_due()
        if due is None or (deadline is not None and due > deadline):
            # Nothing scheduled would change the resource in time: on AWS the wait would time out.
            raise TimeoutExceededError(resource_type=kind, status=status)
        backend.wait_for_next_change()


class _LogReader:
    """The job's CloudWatch log streams, read forward as sagemaker-core's MultiLogStreamHandler does."""

    def __init__(self, logs_client, job_name: str) -> None:
        self._logs = logs_client
        self._prefix = job_name + "/"
        self._tokens: dict[str, str | None] = {}

    def log_new_events(self) -> None:
        for stream in self._streams():
            for event in self._new_events(stream):
                resources.logger.info(f"{stream}:\n{event['message']}", extra={"markup": False})

    def _streams(self) -> list[str]:
        try:
            pages = self._logs.get_paginator("describe_log_streams").paginate(
                logGroupName="/aws/sagemaker/TrainingJobs",
                logStreamNamePrefix=self._prefix,
                orderBy="LogStreamName",
            )
            return [stream["logStreamName"] for page in pages for stream in page["logStreams"]]
        except self._logs.exceptions.ResourceNotFoundException:
            return []

    def _new_events(self, stream: str):
        while True:
            token = self._tokens.get(stream)
            response = self._logs.get_log_events(
                logGroupName="/aws/sagemaker/TrainingJobs",
                logStreamName=stream,
                startFromHead=True,
                **({"nextToken": token} if token else {}),
            )
            self._tokens[stream] = response["nextForwardToken"]
            if not response["events"]:
                return
            yield from response["events"]
