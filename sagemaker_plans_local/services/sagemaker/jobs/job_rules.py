"""Training jobs' service rules beyond the shape model, and the quota error."""

from __future__ import annotations

from typing import Mapping

from sagemaker_plans_local.core.errors import InvalidRequest, LimitExceeded
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob
from sagemaker_plans_local.services.sagemaker.statuses import JobStatus, WarmPoolStatus
from sagemaker_plans_local.services.sagemaker.warm_pools.pools import WarmPool

#: Failures after which SageMaker keeps the warm pool (the cluster is healthy).
POOL_SAFE_FAILURES = ("AlgorithmError", "ClientError")


def check_create_rules(spec: Mapping, settings: Settings) -> None:
    """Service rules on CreateTrainingJob beyond what the shape model says."""
    resources = spec.get("ResourceConfig")
    if not spec.get("AlgorithmSpecification"):
        raise InvalidRequest("AlgorithmSpecification is required for a training job.")
    algorithm = spec["AlgorithmSpecification"]
    if not (algorithm.get("TrainingImage") or algorithm.get("AlgorithmName")):
        raise InvalidRequest(
            "Either TrainingImage or AlgorithmName must be specified in AlgorithmSpecification."
        )
    if resources is None:
        raise InvalidRequest("ResourceConfig is required for a training job.")
    groups = resources.get("InstanceGroups")
    if groups:
        if "InstanceType" in resources or "InstanceCount" in resources:
            raise InvalidRequest(
                "InstanceType and InstanceCount cannot be specified together "
                "with InstanceGroups in ResourceConfig."
            )
    elif "InstanceType" not in resources or "InstanceCount" not in resources:
        raise InvalidRequest(
            "ResourceConfig must specify InstanceType and InstanceCount when InstanceGroups is not specified."
        )
    keep_alive = resources.get("KeepAlivePeriodInSeconds") or 0
    check_keep_alive(keep_alive, settings)
    if keep_alive:
        if spec.get("EnableManagedSpotTraining"):
            raise InvalidRequest(
                "Managed warm pools (KeepAlivePeriodInSeconds) are not supported with managed spot training."
            )
        if groups:
            raise InvalidRequest(
                "Managed warm pools (KeepAlivePeriodInSeconds) are not "
                "supported with heterogeneous clusters (InstanceGroups)."
            )


def check_keep_alive(seconds: int, settings: Settings) -> None:
    limit = settings.max_keep_alive_seconds
    if seconds > limit:
        raise InvalidRequest(
            f"KeepAlivePeriodInSeconds {seconds} exceeds the maximum allowed value of {limit} seconds."
        )


def limit_exceeded(instance_type: str, limit: int, used: int, delta: int) -> LimitExceeded:
    return LimitExceeded(
        f"The account-level service limit '{instance_type} for training job usage' is "
        f"{limit} Instances, with current utilization of {used} Instances and a request "
        f"delta of {delta} Instances. Please use AWS Service Quotas to request an increase "
        "for this quota."
    )


def check_pool_updatable(job: TrainingJob) -> WarmPool:
    """The Available warm pool of a finished ``job`` (UpdateTrainingJob's keep-alive rule)."""
    pool = job.pool
    if job.warm_pool is None or job.warm_pool.status != WarmPoolStatus.AVAILABLE or pool is None:
        current = job.warm_pool.status if job.warm_pool else "None"
        raise InvalidRequest(
            "You can update KeepAlivePeriodInSeconds only for a training job that has "
            f"finished and whose warm pool status is Available; the warm pool status of "
            f"training job {job.name} is {current}."
        )
    return pool


def keeps_pool(status: JobStatus, instances_started: bool, failure_reason: str | None) -> bool:
    """Whether a job that ended in ``status`` leaves its instances healthy for a warm pool."""
    if status == JobStatus.COMPLETED:
        return True
    if status == JobStatus.STOPPED:
        return instances_started
    return failure_reason is not None and failure_reason.startswith(POOL_SAFE_FAILURES)


def job_output_uri(s3_output_path: str, job_name: str) -> str:
    """Where a job's artifacts go: ``<S3OutputPath>/<job>/output/``, one trailing ``/`` of the path taken off.

    S3 keys are literal, so ``s3://b/prefix/`` and ``s3://b/prefix`` give ``prefix/<job>/output/``, and
    ``s3://b/prefix//`` keeps its empty segment: ``prefix//<job>/output/`` (docs/behaviours.md).
    """
    base = s3_output_path[:-1] if s3_output_path.endswith("/") else s3_output_path
    return f"{base}/{job_name}/output/"
