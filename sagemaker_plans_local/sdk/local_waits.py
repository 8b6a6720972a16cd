"""The SDKs' job waits in local mode: on the backend directly, without polling sleeps.

``logs_for_job`` prints what the SDK's ``logs_for_job`` prints (status lines,
the job's log streams, ``Training seconds:``) using the SDK's own helpers,
passed in as ``helpers``: ``sagemaker.session`` (v2) or
``sagemaker.core.remote_function.job`` (v3), which both define
``secondary_training_status_message``/``_changed``, ``_logs_init``,
``_flush_log_streams`` and ``_check_job_status``.

The SDK prints a dot for each poll that finds no log stream yet. It does so
after the job ended too, which on AWS never happens (every job has a stream
by then) but would here for a job that wrote nothing: the last read prints no
dot, so ``Training seconds:`` starts its own line.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import TYPE_CHECKING

from sagemaker_plans_local.services.sagemaker.statuses import FINISHED_JOB_STATUSES as _ENDED

if TYPE_CHECKING:
    from sagemaker_plans_local.sdk.remote import Backend

#: Real seconds between log flushes while a job's process runs.
LOG_FLUSH_SECONDS = 0.05
#: Real seconds between updates of the progress line of a wait on a terminal.
PROGRESS_SECONDS = 0.1


def wait_for_job(session, backend: "Backend", job_name: str, helpers: ModuleType) -> dict:
    """Like ``Session.wait_for_job``: block until the job ends; raise as the SDK does on failure.

    On an interactive terminal (stderr a TTY) a transient rich progress line on stderr shows the
    job's status while it waits; otherwise the wait is silent, as the SDK's is.
    """
    if sys.stderr.isatty():  # a TTY itself: not $FORCE_COLOR, which CI may set
        from rich.console import Console

        _wait_showing_progress(session, backend, job_name, Console(stderr=True, force_terminal=True))
    else:
        backend.wait_for_training_job(job_name, region=session.boto_region_name)
    description = session.sagemaker_client.describe_training_job(TrainingJobName=job_name)
    helpers._check_job_status(job_name, description, "TrainingJobStatus")
    return description


def _wait_showing_progress(session, backend: "Backend", job_name: str, console) -> None:
    """The backend's own wait, while a thread shows the job's status and secondary status."""
    from botocore.exceptions import BotoCoreError, ClientError
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    stopped = threading.Event()
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"{job_name}: waiting")

        def show() -> None:
            while not stopped.wait(PROGRESS_SECONDS):
                try:
                    description = session.sagemaker_client.describe_training_job(TrainingJobName=job_name)
                except (BotoCoreError, ClientError):  # the wait itself reports what went wrong
                    return
                status = f"{description['TrainingJobStatus']} ({description.get('SecondaryStatus')})"
                progress.update(task, description=f"{job_name}: {status}")

        watcher = threading.Thread(target=show, name=f"progress of {job_name}", daemon=True)
        watcher.start()
        try:
            backend.wait_for_training_job(job_name, region=session.boto_region_name)
        finally:
            stopped.set()
            watcher.join()


def logs_for_job(session, backend: "Backend", job_name: str, helpers: ModuleType, wait: bool = False) -> dict:
    """Like ``Session.logs_for_job``: print status and the job's log streams as SageMaker does."""
    client = session.sagemaker_client
    description = client.describe_training_job(TrainingJobName=job_name)
    print(helpers.secondary_training_status_message(description, None), end="")
    reader = _LogReader(session, description, job_name, helpers)
    last = description
    done = not wait or description["TrainingJobStatus"] in _ENDED
    while True:
        reader.flush(dots=not done)
        if done:
            break
        backend.step_training_job(job_name, region=session.boto_region_name, max_wait=LOG_FLUSH_SECONDS)
        description = client.describe_training_job(TrainingJobName=job_name)
        last = _print_transitions(description, last, reader, helpers)
        if description["TrainingJobStatus"] in _ENDED:
            print()
            done = True  # one more flush for the last lines
    if wait:
        helpers._check_job_status(job_name, description, "TrainingJobStatus")
        _print_times(description, reader.instance_count)
    return description


class _LogReader:
    """The SDK's log-stream state for one job, flushed with the SDK's own ``_flush_log_streams``."""

    def __init__(self, session, description: dict, job_name: str, helpers: ModuleType) -> None:
        (
            self.instance_count,
            self.stream_names,
            self.positions,
            self.logs,
            self.log_group,
            self.dot,
            self.color_wrap,
        ) = helpers._logs_init(session.boto_session, description, job="Training")
        self.job_name = job_name
        self._helpers = helpers

    def flush(self, dots: bool = True) -> None:
        """Print new log lines; with ``dots=False`` print nothing (no dot) while no stream exists."""
        if not dots and not self.positions and not self._has_stream():
            return
        self._helpers._flush_log_streams(
            self.stream_names,
            self.instance_count,
            self.logs,
            self.log_group,
            self.job_name,
            self.positions,
            self.dot,
            self.color_wrap,
        )

    def _has_stream(self) -> bool:
        try:
            found = self.logs.describe_log_streams(
                logGroupName=self.log_group, logStreamNamePrefix=self.job_name + "/", limit=1
            )
        except self.logs.exceptions.ResourceNotFoundException:
            return False
        return bool(found["logStreams"])


def _print_transitions(description: dict, last: dict, reader: _LogReader, helpers: ModuleType) -> dict:
    """Print new status lines; as on AWS, the script's output comes after "Training" and before what follows."""
    if not helpers.secondary_training_status_changed(description, last):
        return last
    training = _through_training(description, last)
    if training is not None:
        print()
        print(helpers.secondary_training_status_message(training, last), end="")
        last = training
    reader.flush()
    if helpers.secondary_training_status_changed(description, last):
        print()
        print(helpers.secondary_training_status_message(description, last), end="")
    return description


def _print_times(description: dict, instance_count: int) -> None:
    training = description.get("TrainingTimeInSeconds")
    billable = description.get("BillableTimeInSeconds")
    if training is not None:
        print("Training seconds:", training * instance_count)
    if billable is not None:
        print("Billable seconds:", billable * instance_count)


def _through_training(description: dict, last: dict) -> dict | None:
    """``description`` cut after a newly reached Training transition, if there is one."""
    transitions = description.get("SecondaryStatusTransitions") or []
    seen = len(last.get("SecondaryStatusTransitions") or [])
    for index in range(seen, len(transitions)):
        if transitions[index]["Status"] == "Training":
            return {**description, "SecondaryStatusTransitions": transitions[: index + 1]}
    return None
