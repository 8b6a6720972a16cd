from datetime import timedelta

import pytest

from sagemaker_plans_local.core.errors import InUse, InvalidRequest, JobNotFound, LimitExceeded
from sagemaker_plans_local.services.sagemaker.jobs.phases import STOPPING_SECONDS, JobScript

from .conftest import job_spec


def secondary_path(job):
    return [t.status for t in job.transitions]


def test_cold_job_walks_the_secondary_statuses_and_completes(emulation, jobs):
    job = jobs.create(job_spec("j", keep_alive=None))
    assert (job.status, job.secondary_status) == ("InProgress", "Starting")
    emulation.clock.advance(emulation.settings.cold_start_seconds)
    assert job.secondary_status == "Downloading"
    assert job.training_start - job.created_at == timedelta(seconds=180)
    emulation.clock.advance(emulation.settings.job_runtime_seconds)
    assert job.status == "Completed"
    assert secondary_path(job) == ["Starting", "Downloading", "Training", "Uploading", "Completed"]
    assert job.training_seconds == 600
    assert job.warm_pool is None  # no keep-alive asked: no warm pool at all
    assert all(t.end is not None for t in job.transitions)


def test_starting_messages_say_launching_then_preparing(emulation, jobs):
    job = jobs.create(job_spec("j"))
    emulation.clock.advance(30)
    assert job.transitions[-1].message == "Launching requested ML instances"
    emulation.clock.advance(90)
    assert job.transitions[-1].message == "Preparing the instances for training"


def test_duplicate_name_is_in_use(jobs):
    jobs.create(job_spec("dup"))
    with pytest.raises(InUse, match="a training job with this name already exists"):
        jobs.create(job_spec("dup"))


def test_missing_job_is_requested_resource_not_found(jobs):
    with pytest.raises(JobNotFound, match="Requested resource not found."):
        jobs.get("nope")


@pytest.mark.parametrize(
    "outcome,keeps_pool", [("AlgorithmError", True), ("ClientError", True), ("InternalServerError", False)]
)
def test_scripted_failures(emulation, jobs, outcome, keeps_pool):
    emulation.script_job("f", JobScript(outcome, runtime_seconds=42, failure_reason="boom"))
    job = jobs.create(job_spec("f"))
    emulation.clock.advance(180 + 42)
    assert job.status == "Failed" and job.secondary_status == "Failed"
    assert job.failure_reason == f"{outcome}: boom"
    assert job.training_seconds == 42
    assert job.warm_pool.status == ("Available" if keeps_pool else "Terminated")


def test_script_after_creation_replans_the_running_job(emulation, jobs):
    job = jobs.create(job_spec("late"))
    emulation.clock.advance(200)
    emulation.script_job("late", JobScript(runtime_seconds=60))
    emulation.clock.advance(40)
    assert job.status == "Completed" and job.training_seconds == 60


def test_max_runtime_exceeded_stops_the_job(emulation, jobs):
    job = jobs.create(job_spec("slow", StoppingCondition={"MaxRuntimeInSeconds": 100}))
    emulation.clock.advance(180 + 100)
    assert (job.status, job.secondary_status) == ("Stopping", "Stopping")
    emulation.clock.advance(STOPPING_SECONDS)
    assert (job.status, job.secondary_status) == ("Stopped", "MaxRuntimeExceeded")
    assert job.training_seconds == 100 + STOPPING_SECONDS
    assert job.warm_pool.status == "Available"


def test_stop_before_instances_start_keeps_no_pool(emulation, jobs):
    job = jobs.create(job_spec("early"))
    emulation.clock.advance(5)
    jobs.stop("early")
    assert job.status == "Stopping"
    emulation.clock.advance(STOPPING_SECONDS)
    assert job.status == "Stopped" and job.training_start is None
    assert job.warm_pool.status == "Terminated"


def test_stop_after_instances_start_keeps_the_pool(emulation, jobs):
    job = jobs.create(job_spec("mid"))
    emulation.clock.advance(300)
    jobs.stop("mid")
    emulation.clock.advance(STOPPING_SECONDS)
    assert job.status == "Stopped" and job.warm_pool.status == "Available"


def test_stop_of_a_finished_job_is_rejected(emulation, jobs):
    jobs.create(job_spec("done", keep_alive=None))
    emulation.clock.advance(1000)
    with pytest.raises(InvalidRequest, match="training job is in status Completed"):
        jobs.stop("done")


def test_delete_rules(emulation, jobs):
    jobs.create(job_spec("d"))
    with pytest.raises(InUse, match="terminal state"):
        jobs.delete("d")
    emulation.clock.advance(1000)
    with pytest.raises(InUse, match="Available warm pool"):
        jobs.delete("d")
    jobs.update_keep_alive("d", 0)
    jobs.delete("d")
    with pytest.raises(JobNotFound):
        jobs.get("d")
    jobs.create(job_spec("d"))  # the name can be used again


def test_instance_quota_counts_running_jobs_and_idle_pools(emulation, jobs):
    emulation.settings.instance_quota = {"ml.g4dn.xlarge": 2}
    jobs.create(job_spec("a", keep_alive=600))
    jobs.create(job_spec("b", keep_alive=None, RoleArn="arn:aws:iam::123456789012:role/other"))
    with pytest.raises(LimitExceeded) as error:
        jobs.create(job_spec("c", keep_alive=None, RoleArn="arn:aws:iam::123456789012:role/x"))
    assert error.value.message == (
        "The account-level service limit 'ml.g4dn.xlarge for training job usage' is 2 Instances, "
        "with current utilization of 2 Instances and a request delta of 1 Instances. Please use "
        "AWS Service Quotas to request an increase for this quota."
    )
    emulation.clock.advance(1000)  # b is done; a's pool is idle but still holds its instance
    emulation.settings.instance_quota = 1
    with pytest.raises(LimitExceeded, match="current utilization of 1 Instances"):
        jobs.create(job_spec("c", keep_alive=None, RoleArn="arn:aws:iam::123456789012:role/x"))
    jobs.create(job_spec("warm"))  # reusing a's pool needs no new instance


def test_keep_alive_above_the_setting_is_rejected(emulation, jobs):
    with pytest.raises(InvalidRequest, match="exceeds the maximum allowed value of 3600"):
        jobs.create(job_spec("long", keep_alive=7200))
    emulation.settings.max_keep_alive_seconds = 21600
    jobs.create(job_spec("long", keep_alive=7200))


def test_warm_pools_are_rejected_with_spot_and_heterogeneous_clusters(jobs):
    with pytest.raises(InvalidRequest, match="managed spot training"):
        jobs.create(job_spec("spot", EnableManagedSpotTraining=True))
    hetero = job_spec("hetero")
    hetero["ResourceConfig"] = {
        "VolumeSizeInGB": 30,
        "KeepAlivePeriodInSeconds": 60,
        "InstanceGroups": [{"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "InstanceGroupName": "a"}],
    }
    with pytest.raises(InvalidRequest, match="heterogeneous clusters"):
        jobs.create(hetero)
    assert list(jobs.all()) == []
