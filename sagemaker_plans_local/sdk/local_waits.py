"""fit()'s waits in local mode: on the backend directly, without the SDK's polling sleeps."""

from __future__ import annotations

from sagemaker import session as sdk_session

from ..backend import LocalBackend

#: Real seconds between log flushes while a job's process runs.
LOG_FLUSH_SECONDS = 0.05


def wait_for_job(session, backend: LocalBackend, job_name: str) -> dict:
    """Like ``Session.wait_for_job``: block until the job ends; raise as the SDK does on failure."""
    backend.wait_for_training_job(job_name, region=session.boto_region_name)
    description = session.sagemaker_client.describe_training_job(TrainingJobName=job_name)
    sdk_session._check_job_status(job_name, description, "TrainingJobStatus")
    return description


def logs_for_job(session, backend: LocalBackend, job_name: str, wait: bool = False,
                 log_type="All", timeout=None) -> dict:
    """Like ``Session.logs_for_job``: print status and the job's log streams as SageMaker does."""
    client = session.sagemaker_client
    region = session.boto_region_name
    description = client.describe_training_job(TrainingJobName=job_name)
    print(sdk_session.secondary_training_status_message(description, None), end="")
    instance_count, stream_names, positions, logs, log_group, dot, color_wrap = sdk_session._logs_init(
        session.boto_session, description, job="Training")
    last = description
    done = not wait or description["TrainingJobStatus"] in ("Completed", "Failed", "Stopped")

    def flush() -> None:
        sdk_session._flush_log_streams(stream_names, instance_count, logs, log_group, job_name,
                                       positions, dot, color_wrap)

    while True:
        flush()
        if done:
            break
        backend.step_training_job(job_name, region=region, max_wait=LOG_FLUSH_SECONDS)
        description = client.describe_training_job(TrainingJobName=job_name)
        if sdk_session.secondary_training_status_changed(description, last):
            # As on AWS, the script's output comes after "Training" and before what follows it.
            training = _through_training(description, last)
            if training is not None:
                print()
                print(sdk_session.secondary_training_status_message(training, last), end="")
                last = training
            flush()
            if sdk_session.secondary_training_status_changed(description, last):
                print()
                print(sdk_session.secondary_training_status_message(description, last), end="")
            last = description
        if description["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"):
            print()
            done = True  # one more flush for the last lines
    if wait:
        sdk_session._check_job_status(job_name, description, "TrainingJobStatus")
        if dot:
            print()
        training = description.get("TrainingTimeInSeconds")
        billable = description.get("BillableTimeInSeconds")
        if training is not None:
            print("Training seconds:", training * instance_count)
        if billable is not None:
            print("Billable seconds:", billable * instance_count)
    return description


def _through_training(description: dict, last: dict) -> dict | None:
    """``description`` cut after a newly reached Training transition, if there is one."""
    transitions = description.get("SecondaryStatusTransitions") or []
    seen = len(last.get("SecondaryStatusTransitions") or [])
    for index in range(seen, len(transitions)):
        if transitions[index]["Status"] == "Training":
            return {**description, "SecondaryStatusTransitions": transitions[:index + 1]}
    return None
