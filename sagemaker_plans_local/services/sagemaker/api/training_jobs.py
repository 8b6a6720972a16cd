"""SageMaker training-job operations: requests in, model-shaped responses out."""

from __future__ import annotations

from typing import Any, Callable

from sagemaker_plans_local.protocol.pagination import indexed_page, within
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
from sagemaker_plans_local.services.sagemaker.jobs.job_rules import job_output_uri
from sagemaker_plans_local.services.sagemaker.region import Region

_model = service_model()
#: Members a job echoes back in DescribeTrainingJob exactly as it was created (from the model).
ECHOED = tuple(
    name
    for name in _model.shape_for("CreateTrainingJobRequest").members
    if name in _model.shape_for("DescribeTrainingJobResponse").members
)
#: Flags AWS always reports, false when the request left them out.
DEFAULT_FLAGS = (
    "EnableNetworkIsolation",
    "EnableInterContainerTrafficEncryption",
    "EnableManagedSpotTraining",
)
DEFAULT_STOPPING_CONDITION = {"MaxRuntimeInSeconds": 86400}
#: What a job reports of a member its request left out.
_DEFAULTS = {**dict.fromkeys(DEFAULT_FLAGS, False), "StoppingCondition": DEFAULT_STOPPING_CONDITION}
#: The members :func:`describe` computes (the others are echoed from the request).
_MADE = frozenset(
    ("TrainingJobName TrainingJobArn ModelArtifacts TrainingJobStatus SecondaryStatus FailureReason "
     "WarmPoolStatus CreationTime TrainingStartTime TrainingEndTime LastModifiedTime "
     "SecondaryStatusTransitions TrainingTimeInSeconds BillableTimeInSeconds").split()
)  # fmt: skip
#: DescribeTrainingJob's members describe answers, in model order, each with whether it is echoed.
_DESCRIBED = tuple(
    (name, name not in _MADE)
    for name in _model.shape_for("DescribeTrainingJobResponse").members
    if name in _MADE or name in ECHOED or name in _DEFAULTS
)
# Statuses go out as their plain ``_value_``: the ``value`` descriptor costs 5x (once per job listed).


def model_artifacts_uri(job: TrainingJob) -> str:
    """``model.tar.gz`` under the job's output prefix; the ``model/`` prefix for an uncompressed model."""
    config = job.spec["OutputDataConfig"]
    model = "model/" if config.get("CompressionType") == "NONE" else "model.tar.gz"
    return job_output_uri(config["S3OutputPath"], job.name) + model


def warm_pool_status(job: TrainingJob) -> dict | None:
    view = job.warm_pool
    if view is None:
        return None
    return {
        "Status": view.status._value_,
        "ResourceRetainedBillableTimeInSeconds": view.retained_seconds,
        "ReusedByJob": view.reused_by,
    }


def describe(job: TrainingJob) -> dict:
    """The DescribeTrainingJob response for ``job``, its members in model order (as botocore parses them)."""
    training_seconds = job.training_seconds
    made: dict[str, Any] = {
        "TrainingJobName": job.name,
        "TrainingJobArn": job.arn,
        "ModelArtifacts": {"S3ModelArtifacts": model_artifacts_uri(job)},
        "TrainingJobStatus": job.status._value_,
        "SecondaryStatus": job.secondary_status._value_,
        "FailureReason": job.failure_reason,
        "WarmPoolStatus": warm_pool_status(job),
        "CreationTime": job.created_at,
        "TrainingStartTime": job.training_start,
        "TrainingEndTime": job.training_end,
        "LastModifiedTime": job.last_modified,
        "SecondaryStatusTransitions": [
            {"Status": t.status._value_, "StartTime": t.start, "EndTime": t.end, "StatusMessage": t.message}
            for t in job.transitions
        ],
        "TrainingTimeInSeconds": training_seconds,
        "BillableTimeInSeconds": training_seconds,
    }
    spec, response = job.spec, {}
    for name, echoed in _DESCRIBED:
        if not echoed:
            response[name] = made[name]
        elif name in spec:
            response[name] = spec[name]
        elif name in _DEFAULTS:
            response[name] = _DEFAULTS[name]
    return response


def summary(job: TrainingJob) -> dict:
    return {
        "TrainingJobName": job.name,
        "TrainingJobArn": job.arn,
        "CreationTime": job.created_at,
        "TrainingEndTime": job.training_end,
        "LastModifiedTime": job.last_modified,
        "TrainingJobStatus": job.status._value_,
        "SecondaryStatus": job.secondary_status._value_,
        "WarmPoolStatus": None if job.warm_pool is None else warm_pool_status(job),
        "TrainingPlanArn": job.resource_config.get("TrainingPlanArn"),
    }


def create_training_job(region: Region, params: dict) -> dict:
    job = region.training_jobs.create(params)
    return {"TrainingJobArn": job.arn}


def describe_training_job(region: Region, params: dict) -> dict:
    return describe(region.training_jobs.get(params["TrainingJobName"]))


def stop_training_job(region: Region, params: dict) -> dict:
    region.training_jobs.stop(params["TrainingJobName"])
    return {}


def delete_training_job(region: Region, params: dict) -> dict:
    region.training_jobs.delete(params["TrainingJobName"])
    return {}


def update_training_job(region: Region, params: dict) -> dict:
    jobs = region.training_jobs
    name = params["TrainingJobName"]
    job = jobs.get(name)
    keep_alive = (params.get("ResourceConfig") or {}).get("KeepAlivePeriodInSeconds")
    if keep_alive is not None:
        jobs.update_keep_alive(name, keep_alive)
    for member in ("ProfilerConfig", "ProfilerRuleConfigurations", "RemoteDebugConfig"):
        if member in params:
            job.spec[member] = params[member]
    jobs.touch(name)
    return {"TrainingJobArn": job.arn}


#: The job-table index behind each SortBy value.
_SORT_INDEXES = {"Name": "name", "CreationTime": "created", "Status": "status"}


def _filter(params: dict) -> Callable[[TrainingJob], bool]:
    """Whether a job passes the request's filters (each test made once per request)."""
    tests: list[Callable[[TrainingJob], bool]] = []
    if "NameContains" in params:
        part = params["NameContains"]
        tests.append(lambda job: part in job.name)
    if "StatusEquals" in params:
        status = params["StatusEquals"]
        tests.append(lambda job: job.status == status)
    if any(name in params for name in ("CreationTimeAfter", "CreationTimeBefore")):
        tests.append(lambda job: within(job.created_at, params, "CreationTime"))
    if any(name in params for name in ("LastModifiedTimeAfter", "LastModifiedTimeBefore")):
        tests.append(lambda job: within(job.last_modified, params, "LastModifiedTime"))
    if "WarmPoolStatusEquals" in params:
        pool_status = params["WarmPoolStatusEquals"]
        tests.append(lambda job: job.warm_pool is not None and job.warm_pool.status == pool_status)
    if "TrainingPlanArnEquals" in params:
        plan_arn = params["TrainingPlanArnEquals"]
        tests.append(lambda job: job.resource_config.get("TrainingPlanArn") == plan_arn)
    if not tests:
        return lambda job: True
    return lambda job: all(test(job) for test in tests)


def list_training_jobs(region: Region, params: dict) -> dict:
    """``MaxResults`` jobs are taken in sort order, then filtered (the operation's documentation)."""
    chunk, token = indexed_page(
        region.training_jobs.scan,
        params,
        _SORT_INDEXES,
        "CreationTime",
        _filter(params),
        evaluate_first=True,
    )
    return {"TrainingJobSummaries": [summary(job) for job in chunk], "NextToken": token}


HANDLERS = {
    "CreateTrainingJob": create_training_job,
    "DescribeTrainingJob": describe_training_job,
    "ListTrainingJobs": list_training_jobs,
    "StopTrainingJob": stop_training_job,
    "UpdateTrainingJob": update_training_job,
    "DeleteTrainingJob": delete_training_job,
}
