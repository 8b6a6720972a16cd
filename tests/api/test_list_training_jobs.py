from datetime import timedelta

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conformance import assert_conforms
from tests.conftest import START, create_request


def names(response):
    return [s["TrainingJobName"] for s in response["TrainingJobSummaries"]]


@pytest.fixture
def five_jobs(backend, sm):
    for i, name in enumerate(["delta", "alpha", "echo", "charlie", "bravo"]):
        sm.create_training_job(**create_request(name, keep_alive=600 if i % 2 else None))
        backend.clock.advance(60)
    backend.script_job("charlie", outcome="AlgorithmError")
    return sm


def test_default_order_is_creation_time_ascending(five_jobs):
    response = five_jobs.list_training_jobs()
    assert_conforms("ListTrainingJobs", response)
    assert names(response) == ["delta", "alpha", "echo", "charlie", "bravo"]


def test_sort_by_name_and_status(five_jobs, backend):
    assert names(five_jobs.list_training_jobs(SortBy="Name", SortOrder="Descending")) == [
        "echo", "delta", "charlie", "bravo", "alpha"]
    backend.clock.advance(1000)
    by_status = five_jobs.list_training_jobs(SortBy="Status")
    statuses = [s["TrainingJobStatus"] for s in by_status["TrainingJobSummaries"]]
    assert statuses == sorted(statuses)


def test_filters(five_jobs, backend):
    sm = five_jobs
    assert names(sm.list_training_jobs(NameContains="ha")) == ["alpha", "charlie"]
    assert names(sm.list_training_jobs(CreationTimeAfter=START + timedelta(seconds=60),
                                       CreationTimeBefore=START + timedelta(seconds=240))) == ["echo", "charlie"]
    backend.clock.advance(1000)
    assert names(sm.list_training_jobs(StatusEquals="Failed")) == ["charlie"]
    assert names(sm.list_training_jobs(WarmPoolStatusEquals="Available")) == ["alpha", "charlie"]
    assert names(sm.list_training_jobs(LastModifiedTimeAfter=START + timedelta(seconds=880))) == [
        "echo", "charlie", "bravo"]
    assert names(sm.list_training_jobs(
        TrainingPlanArnEquals="arn:aws:sagemaker:us-east-1:123456789012:training-plan/p")) == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page_size=st.integers(min_value=1, max_value=6),
       sort_by=st.sampled_from(["Name", "CreationTime", "Status"]),
       order=st.sampled_from(["Ascending", "Descending"]))
def test_pages_cover_the_list_exactly_once(five_jobs, page_size, sort_by, order):
    full = names(five_jobs.list_training_jobs(SortBy=sort_by, SortOrder=order, MaxResults=100))
    seen, token = [], None
    while True:
        kwargs = {"NextToken": token} if token else {}
        response = five_jobs.list_training_jobs(SortBy=sort_by, SortOrder=order, MaxResults=page_size, **kwargs)
        assert len(response["TrainingJobSummaries"]) <= page_size
        seen += names(response)
        token = response.get("NextToken")
        if not token:
            break
    assert seen == full


def test_bad_or_foreign_token_is_a_validation_error(five_jobs):
    with pytest.raises(ClientError) as excinfo:
        five_jobs.list_training_jobs(NextToken="not-a-token")
    assert excinfo.value.response["Error"]["Code"] == "ValidationException"
    token = five_jobs.list_training_jobs(MaxResults=1)["NextToken"]
    with pytest.raises(ClientError):
        five_jobs.list_training_jobs(NextToken=token, NameContains="a")


def test_paginator_works(five_jobs):
    pages = five_jobs.get_paginator("list_training_jobs").paginate(PaginationConfig={"PageSize": 2})
    assert sum(len(p["TrainingJobSummaries"]) for p in pages) == 5
