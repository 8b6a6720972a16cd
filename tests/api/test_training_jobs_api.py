"""Training jobs through a real boto3 client answered in-process."""

from datetime import datetime, timedelta, timezone

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ParamValidationError

from tests.conformance import assert_conforms
from tests.conftest import START, create_request


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def test_create_and_describe_conform_to_the_model(backend, sm):
    response = sm.create_training_job(**create_request("job-1"))
    assert response["TrainingJobArn"] == "arn:aws:sagemaker:us-east-1:123456789012:training-job/job-1"
    assert_conforms("CreateTrainingJob", response)
    described = sm.describe_training_job(TrainingJobName="job-1")
    assert_conforms("DescribeTrainingJob", described)
    assert described["TrainingJobStatus"] == "InProgress"
    assert described["HyperParameters"] == {"epochs": "1"}
    assert isinstance(described["CreationTime"], datetime)
    assert described["CreationTime"] == START
    backend.clock.advance(900)
    described = sm.describe_training_job(TrainingJobName="job-1")
    assert_conforms("DescribeTrainingJob", described)
    assert described["TrainingJobStatus"] == "Completed"
    assert described["TrainingTimeInSeconds"] == described["BillableTimeInSeconds"] == 600
    assert described["WarmPoolStatus"] == {"Status": "Available"}
    assert described["ModelArtifacts"]["S3ModelArtifacts"] == "s3://bucket/output/job-1/output/model.tar.gz"


def test_missing_job(sm):
    with pytest.raises(ClientError) as excinfo:
        sm.describe_training_job(TrainingJobName="missing")
    assert error_of(excinfo) == ("ValidationException", "Requested resource not found.")


def test_duplicate_name_is_resource_in_use(sm):
    sm.create_training_job(**create_request("dup"))
    with pytest.raises(sm.exceptions.ResourceInUse) as excinfo:
        sm.create_training_job(**create_request("dup"))
    assert "(arn:aws:sagemaker:us-east-1:123456789012:training-job/dup)" in error_of(excinfo)[1]


def test_shape_violations_use_aws_wording_and_change_nothing(sm):
    request = create_request("bad", keep_alive=30000)
    request["ResourceConfig"]["InstanceType"] = "ml.nope"
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**request)
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert message.startswith("2 validation errors detected: ")
    assert (
        "Value '30000' at 'resourceConfig.keepAlivePeriodInSeconds' failed to satisfy constraint: "
        "Member must have value less than or equal to 21600" in message
    )
    assert (
        "Value 'ml.nope' at 'resourceConfig.instanceType' failed to satisfy constraint: "
        "Member must satisfy enum value set: [ml.m4.xlarge," in message
    )
    assert sm.list_training_jobs()["TrainingJobSummaries"] == []


def test_backend_checks_what_botocore_does_not_even_without_client_validation(backend):
    sm = backend.client(config=Config(parameter_validation=False))
    with pytest.raises(ClientError) as excinfo:
        sm.describe_training_job(TrainingJobName="-bad-")
    assert error_of(excinfo)[1] == (
        "1 validation error detected: Value '-bad-' at 'trainingJobName' failed to satisfy "
        "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"
    )
    with pytest.raises(ClientError) as excinfo:
        sm.describe_training_job()
    assert "Member must not be null" in error_of(excinfo)[1]


def test_botocore_still_validates_client_side(sm):
    with pytest.raises(ParamValidationError):
        sm.create_training_job(TrainingJobName="x")


def test_keep_alive_limit_is_a_backend_setting(backend, sm):
    with pytest.raises(ClientError) as excinfo:
        sm.create_training_job(**create_request("long", keep_alive=7200))
    assert error_of(excinfo) == (
        "ValidationException",
        "KeepAlivePeriodInSeconds 7200 exceeds the maximum allowed value of 3600 seconds.",
    )
    backend.settings.max_keep_alive_seconds = 21600
    sm.create_training_job(**create_request("long", keep_alive=7200))


def test_instance_quota_is_resource_limit_exceeded(backend, sm):
    backend.settings.instance_quota = {"ml.g4dn.xlarge": 1}
    sm.create_training_job(**create_request("a"))
    with pytest.raises(sm.exceptions.ResourceLimitExceeded) as excinfo:
        sm.create_training_job(**create_request("b", RoleArn="arn:aws:iam::123456789012:role/b"))
    assert "'ml.g4dn.xlarge for training job usage' is 1 Instances" in error_of(excinfo)[1]


def test_stop_and_stop_again(backend, sm):
    sm.create_training_job(**create_request("s"))
    backend.clock.advance(300)
    sm.stop_training_job(TrainingJobName="s")
    assert sm.describe_training_job(TrainingJobName="s")["TrainingJobStatus"] == "Stopping"
    with pytest.raises(ClientError) as excinfo:
        sm.stop_training_job(TrainingJobName="s")
    assert error_of(excinfo) == (
        "ValidationException",
        "The request was rejected because the training job is in status Stopping.",
    )
    backend.clock.advance(60)
    described = sm.describe_training_job(TrainingJobName="s")
    assert (described["TrainingJobStatus"], described["SecondaryStatus"]) == ("Stopped", "Stopped")
    assert described["WarmPoolStatus"]["Status"] == "Available"


def test_script_job_failures(backend, sm):
    backend.script_job("f", outcome="AlgorithmError", runtime_seconds=5, failure_reason="exit 1")
    sm.create_training_job(**create_request("f"))
    backend.clock.advance(200)
    described = sm.describe_training_job(TrainingJobName="f")
    assert described["TrainingJobStatus"] == "Failed"
    assert described["FailureReason"] == "AlgorithmError: exit 1"
    with pytest.raises(ValueError):
        backend.script_job("g", outcome="Exploded")


def test_update_keep_alive_and_end_it(backend, sm):
    sm.create_training_job(**create_request("u"))
    backend.clock.advance(780)  # cold start 180 + runtime 600: the job ends now
    arn = sm.update_training_job(TrainingJobName="u", ResourceConfig={"KeepAlivePeriodInSeconds": 3600})
    assert_conforms("UpdateTrainingJob", arn)
    described = sm.describe_training_job(TrainingJobName="u")
    assert described["ResourceConfig"]["KeepAlivePeriodInSeconds"] == 3600
    backend.clock.advance(100)
    sm.update_training_job(TrainingJobName="u", ResourceConfig={"KeepAlivePeriodInSeconds": 0})
    status = sm.describe_training_job(TrainingJobName="u")["WarmPoolStatus"]
    assert status == {"Status": "Terminated", "ResourceRetainedBillableTimeInSeconds": 100}
    with pytest.raises(ClientError) as excinfo:
        sm.update_training_job(TrainingJobName="u", ResourceConfig={"KeepAlivePeriodInSeconds": 60})
    assert "warm pool status of training job u is Terminated" in error_of(excinfo)[1]


def test_delete_training_job(backend, sm):
    sm.create_training_job(**create_request("d", keep_alive=None))
    with pytest.raises(sm.exceptions.ResourceInUse):
        sm.delete_training_job(TrainingJobName="d")
    backend.clock.advance(900)
    sm.delete_training_job(TrainingJobName="d")
    with pytest.raises(ClientError):
        sm.describe_training_job(TrainingJobName="d")


def test_not_implemented_operation_names_itself(sm):
    with pytest.raises(ClientError) as excinfo:
        sm.describe_endpoint(EndpointName="e")
    code, message = error_of(excinfo)
    assert code == "NotImplemented" and "DescribeEndpoint" in message


def test_regions_are_separate(backend):
    east, west = backend.client(), backend.client(region_name="us-west-2")
    east.create_training_job(**create_request("r"))
    assert [s["TrainingJobName"] for s in east.list_training_jobs()["TrainingJobSummaries"]] == ["r"]
    assert west.list_training_jobs()["TrainingJobSummaries"] == []
    west.create_training_job(**create_request("r"))  # same name, other region
    assert west.describe_training_job(TrainingJobName="r")["TrainingJobArn"].startswith(
        "arn:aws:sagemaker:us-west-2:"
    )


def test_wall_clock_backend_moves_by_itself(tmp_path):
    from sagemaker_plans_local import LocalBackend

    with LocalBackend(root=tmp_path) as backend:
        backend.settings.cold_start_seconds = 0
        backend.settings.job_runtime_seconds = 0
        sm = backend.client()
        sm.create_training_job(**create_request("w"))
        backend.clock.advance(1)
        assert sm.describe_training_job(TrainingJobName="w")["TrainingJobStatus"] == "Completed"
        assert abs(backend.clock.now() - datetime.now(timezone.utc) - timedelta(seconds=1)) < timedelta(
            seconds=5
        )


def test_run_until_idle_applies_everything_scheduled(backend, sm):
    sm.create_training_job(**create_request("idle", keep_alive=600))
    backend.run_until_idle()
    status = sm.describe_training_job(TrainingJobName="idle")["WarmPoolStatus"]
    assert status == {"Status": "Terminated", "ResourceRetainedBillableTimeInSeconds": 600}
    assert backend.clock.next_due() is None


@pytest.mark.parametrize("runtime, reported", [(0.4, 1), (600, 600), (600.2, 601)])
def test_training_and_billable_seconds_are_whole_seconds_rounded_up_and_at_least_one(
    backend, sm, runtime, reported
):
    backend.settings.job_runtime_seconds = runtime  # a local run of under a second reports 1 s, not 0
    sm.create_training_job(**create_request("short", keep_alive=None))
    backend.run_until_idle()
    job = sm.describe_training_job(TrainingJobName="short")
    assert job["TrainingJobStatus"] == "Completed"
    assert job["TrainingTimeInSeconds"] == job["BillableTimeInSeconds"] == reported


@pytest.mark.parametrize("output_path", ["s3://bucket/prefix", "s3://bucket/prefix/", "s3://bucket/prefix//"])
def test_model_artifacts_keep_the_output_paths_segments_but_one_trailing_slash(sm, backend, output_path):
    sm.create_training_job(
        **create_request("job", keep_alive=None, OutputDataConfig={"S3OutputPath": output_path})
    )
    backend.run_until_idle()
    artifacts = sm.describe_training_job(TrainingJobName="job")["ModelArtifacts"]["S3ModelArtifacts"]
    expected = "prefix//job" if output_path.endswith("//") else "prefix/job"
    assert artifacts == f"s3://bucket/{expected}/output/model.tar.gz"
