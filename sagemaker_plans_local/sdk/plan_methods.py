"""What the SDKs' sessions lack for training plans and warm pools (both majors, both modes)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Sequence


class PlanMethods:
    """Mixed into our ``Session`` classes: needs ``sagemaker_client`` and ``backend`` (None on AWS)."""

    sagemaker_client: Any
    backend: Any

    def search_training_plan_offerings(
        self,
        instance_type: str,
        instance_count: int,
        duration_hours: int,
        target_resources: Sequence[str] = ("training-job",),
        start_time_after: datetime | None = None,
        end_time_before: datetime | None = None,
    ) -> list[dict]:
        """SearchTrainingPlanOfferings: up to three offerings, best first."""
        request: dict[str, Any] = {
            "InstanceType": instance_type,
            "InstanceCount": instance_count,
            "DurationHours": duration_hours,
            "TargetResources": list(target_resources),
        }
        if start_time_after is not None:
            request["StartTimeAfter"] = start_time_after
        if end_time_before is not None:
            request["EndTimeBefore"] = end_time_before
        return self.sagemaker_client.search_training_plan_offerings(**request)["TrainingPlanOfferings"]

    def create_training_plan(
        self, training_plan_name: str, training_plan_offering_id: str, tags: list[dict] | None = None
    ) -> str:
        """CreateTrainingPlan; returns the plan's ARN."""
        request: dict[str, Any] = {
            "TrainingPlanName": training_plan_name,
            "TrainingPlanOfferingId": training_plan_offering_id,
        }
        if tags:
            request["Tags"] = tags
        return self.sagemaker_client.create_training_plan(**request)["TrainingPlanArn"]

    def describe_training_plan(self, training_plan_name: str) -> dict:
        return self.sagemaker_client.describe_training_plan(TrainingPlanName=training_plan_name)

    def wait_for_training_plan(
        self, training_plan_name: str, poll: float = 30, fast_forward: bool | None = None
    ) -> dict:
        """Wait until the plan's payment is settled (no longer ``Pending``); its description.

        Locally: a manual clock (or ``fast_forward``, default the backend's
        ``settings.fast_forward_waits``) moves to each next change at once, a
        wall clock sleeps until it. On AWS this polls every ``poll`` seconds.
        """
        while True:
            plan = self.describe_training_plan(training_plan_name)
            if plan["Status"] != "Pending":
                return plan
            if self.backend is None:
                time.sleep(poll)
            elif not self.backend.wait_for_next_change(fast_forward):
                return plan  # nothing scheduled: the status cannot change any more

    def search_training_plan_extensions(self, training_plan_arn: str, duration_hours: int) -> list[dict]:
        """Extension offerings for a plan (SearchTrainingPlanOfferings with TrainingPlanArn)."""
        return self.sagemaker_client.search_training_plan_offerings(
            TrainingPlanArn=training_plan_arn, DurationHours=duration_hours
        )["TrainingPlanExtensionOfferings"]

    def extend_training_plan(self, training_plan_extension_offering_id: str) -> list[dict]:
        """ExtendTrainingPlan; returns the extensions bought."""
        return self.sagemaker_client.extend_training_plan(
            TrainingPlanExtensionOfferingId=training_plan_extension_offering_id
        )["TrainingPlanExtensions"]

    def describe_reserved_capacity(self, reserved_capacity_arn: str) -> dict:
        return self.sagemaker_client.describe_reserved_capacity(ReservedCapacityArn=reserved_capacity_arn)

    def update_warm_pool(self, job_name: str, keep_alive_seconds: int) -> dict:
        """Set a finished job's warm-pool keep-alive (UpdateTrainingJob)."""
        return self.sagemaker_client.update_training_job(
            TrainingJobName=job_name, ResourceConfig={"KeepAlivePeriodInSeconds": keep_alive_seconds}
        )

    def terminate_warm_pool(self, job_name: str) -> dict:
        """End a finished job's warm pool now (keep-alive 0)."""
        return self.update_warm_pool(job_name, 0)
