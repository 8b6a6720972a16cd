"""``Session``: a ``sagemaker.session.Session`` answered in-process, or plain AWS by one flag."""

from __future__ import annotations

import os
import time
from datetime import datetime
from typing import Any, Sequence

import sagemaker.session

from ..backend import LocalBackend
from . import local_waits, telemetry
from .default_backend import default_backend

#: ``0`` sends sessions to AWS; anything else (or unset) keeps them local.
FLAG = "SAGEMAKER_PLANS_LOCAL"


def local_by_default() -> bool:
    return os.environ.get(FLAG, "1").strip() != "0"


class Session(sagemaker.session.Session):
    """A SageMaker session, local by default (``SAGEMAKER_PLANS_LOCAL=0`` means AWS).

    Local: every call is answered by ``backend`` (default: the process-wide
    wall-clock backend) — SageMaker, S3, STS, IAM and CloudWatch Logs — and
    ``fit()`` waits on the backend instead of polling. ``local=False``: a
    plain SageMaker session on boto3; the extra methods below then call AWS.
    """

    def __init__(self, backend: LocalBackend | None = None, local: bool | None = None, **kwargs: Any) -> None:
        self.local = local_by_default() if local is None else local
        self.backend = (backend or default_backend()) if self.local else None
        if self.backend is not None and "boto_session" not in kwargs:
            kwargs["boto_session"] = self.backend.boto_session()
        if self.backend is not None:
            telemetry.install()  # a local session never reaches the network
        super().__init__(**kwargs)

    # -- waits without the SDK's sleeps (local mode) ------------------------------
    def wait_for_job(self, job, poll=5):
        if self.backend is None:
            return super().wait_for_job(job, poll)
        return local_waits.wait_for_job(self, self.backend, job)

    def logs_for_job(self, job_name, wait=False, poll=10, log_type="All", timeout=None):
        if self.backend is None:
            return super().logs_for_job(job_name, wait, poll, log_type, timeout)
        return local_waits.logs_for_job(self, self.backend, job_name, wait, log_type, timeout)

    # -- what the SDK lacks (both modes) ------------------------------------------
    def search_training_plan_offerings(self, instance_type: str, instance_count: int, duration_hours: int,
                                       target_resources: Sequence[str] = ("training-job",),
                                       start_time_after: datetime | None = None,
                                       end_time_before: datetime | None = None) -> list[dict]:
        """SearchTrainingPlanOfferings: up to three offerings, best first."""
        request: dict[str, Any] = {"InstanceType": instance_type, "InstanceCount": instance_count,
                                   "DurationHours": duration_hours, "TargetResources": list(target_resources)}
        if start_time_after is not None:
            request["StartTimeAfter"] = start_time_after
        if end_time_before is not None:
            request["EndTimeBefore"] = end_time_before
        return self.sagemaker_client.search_training_plan_offerings(**request)["TrainingPlanOfferings"]

    def create_training_plan(self, training_plan_name: str, training_plan_offering_id: str,
                             tags: list[dict] | None = None) -> str:
        """CreateTrainingPlan; returns the plan's ARN."""
        request: dict[str, Any] = {"TrainingPlanName": training_plan_name,
                                   "TrainingPlanOfferingId": training_plan_offering_id}
        if tags:
            request["Tags"] = tags
        return self.sagemaker_client.create_training_plan(**request)["TrainingPlanArn"]

    def describe_training_plan(self, training_plan_name: str) -> dict:
        return self.sagemaker_client.describe_training_plan(TrainingPlanName=training_plan_name)

    def wait_for_training_plan(self, training_plan_name: str, poll: float = 30) -> dict:
        """Wait until the plan's payment is settled (no longer ``Pending``); its description.

        Locally the backend's clock is fast-forwarded to the settlement; on AWS this polls.
        """
        while True:
            plan = self.describe_training_plan(training_plan_name)
            if plan["Status"] != "Pending":
                return plan
            if self.backend is not None:
                self.backend.advance_to_next_change()
            else:
                time.sleep(poll)

    def search_training_plan_extensions(self, training_plan_arn: str, duration_hours: int) -> list[dict]:
        """Extension offerings for a plan (SearchTrainingPlanOfferings with TrainingPlanArn)."""
        return self.sagemaker_client.search_training_plan_offerings(
            TrainingPlanArn=training_plan_arn, DurationHours=duration_hours)["TrainingPlanExtensionOfferings"]

    def extend_training_plan(self, training_plan_extension_offering_id: str) -> list[dict]:
        """ExtendTrainingPlan; returns the extensions bought."""
        return self.sagemaker_client.extend_training_plan(
            TrainingPlanExtensionOfferingId=training_plan_extension_offering_id)["TrainingPlanExtensions"]

    def describe_reserved_capacity(self, reserved_capacity_arn: str) -> dict:
        return self.sagemaker_client.describe_reserved_capacity(ReservedCapacityArn=reserved_capacity_arn)

    def update_warm_pool(self, job_name: str, keep_alive_seconds: int) -> dict:
        """Set a finished job's warm-pool keep-alive (UpdateTrainingJob)."""
        return self.sagemaker_client.update_training_job(
            TrainingJobName=job_name, ResourceConfig={"KeepAlivePeriodInSeconds": keep_alive_seconds})

    def terminate_warm_pool(self, job_name: str) -> dict:
        """End a finished job's warm pool now (keep-alive 0)."""
        return self.update_warm_pool(job_name, 0)
