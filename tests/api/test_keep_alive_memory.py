"""Memory does not grow with dead state: re-timed warm pools leave no cancelled events behind."""

from tests.conftest import create_request
from tests.raw_requests import sagemaker_json


def ended_job_with_pool(backend, sm, name):
    sm.create_training_job(**create_request(name))
    backend.clock.advance(780)  # cold start 180 + runtime 600: the pool is Available
    assert sm.describe_training_job(TrainingJobName=name)["WarmPoolStatus"]["Status"] == "Available"


def test_keep_alive_updates_through_boto3_leave_a_handful_of_queued_events(backend, sm):
    ended_job_with_pool(backend, sm, "u")
    before = backend.clock.queued()
    for i in range(10_000):
        sm.update_training_job(TrainingJobName="u", ResourceConfig={"KeepAlivePeriodInSeconds": 60 + i % 600})
    assert backend.clock.queued() <= 2 * before + 1
    backend.clock.advance(60 + 9_999 % 600)  # the last update's keep-alive, and only it, counts
    status = sm.describe_training_job(TrainingJobName="u")["WarmPoolStatus"]
    assert status == {"Status": "Terminated", "ResourceRetainedBillableTimeInSeconds": 60 + 9_999 % 600}


def test_50_000_raw_keep_alive_updates_leave_a_handful_of_queued_events(backend, sm):
    ended_job_with_pool(backend, sm, "raw")
    before = backend.clock.queued()
    for i in range(50_000):
        body = {"TrainingJobName": "raw", "ResourceConfig": {"KeepAlivePeriodInSeconds": 60 + i % 600}}
        status, _ = sagemaker_json(backend, "UpdateTrainingJob", body)
        assert status == 200
    assert backend.clock.queued() <= 2 * before + 1
