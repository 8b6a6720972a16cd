from datetime import timedelta

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from tests.conformance import assert_conforms
from tests.conftest import START, create_request
from tests.raw_requests import sagemaker_json


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
        "echo",
        "delta",
        "charlie",
        "bravo",
        "alpha",
    ]
    backend.clock.advance(1000)
    by_status = five_jobs.list_training_jobs(SortBy="Status")
    statuses = [s["TrainingJobStatus"] for s in by_status["TrainingJobSummaries"]]
    assert statuses == sorted(statuses)


def test_filters(five_jobs, backend):
    sm = five_jobs
    assert names(sm.list_training_jobs(NameContains="ha")) == ["alpha", "charlie"]
    assert names(
        sm.list_training_jobs(
            CreationTimeAfter=START + timedelta(seconds=60), CreationTimeBefore=START + timedelta(seconds=240)
        )
    ) == ["echo", "charlie"]
    backend.clock.advance(1000)
    assert names(sm.list_training_jobs(StatusEquals="Failed")) == ["charlie"]
    assert names(sm.list_training_jobs(WarmPoolStatusEquals="Available")) == ["alpha", "charlie"]
    assert names(sm.list_training_jobs(LastModifiedTimeAfter=START + timedelta(seconds=880))) == [
        "echo",
        "charlie",
        "bravo",
    ]
    assert (
        names(
            sm.list_training_jobs(
                TrainingPlanArnEquals="arn:aws:sagemaker:us-east-1:123456789012:training-plan/p"
            )
        )
        == []
    )


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    page_size=st.integers(min_value=1, max_value=6),
    sort_by=st.sampled_from(["Name", "CreationTime", "Status"]),
    order=st.sampled_from(["Ascending", "Descending"]),
)
def test_pages_cover_the_list_exactly_once(five_jobs, page_size, sort_by, order):
    full = names(five_jobs.list_training_jobs(SortBy=sort_by, SortOrder=order, MaxResults=100))
    seen, token = [], None
    while True:
        kwargs = {"NextToken": token} if token else {}
        response = five_jobs.list_training_jobs(
            SortBy=sort_by, SortOrder=order, MaxResults=page_size, **kwargs
        )
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


def walk(sm, **query):
    """Every page of a ListTrainingJobs query: (names in order, number of pages)."""
    seen, pages, token = [], 0, None
    while True:
        response = sm.list_training_jobs(**query, **({"NextToken": token} if token else {}))
        pages += 1
        seen += names(response)
        token = response.get("NextToken")
        if not token:
            return seen, pages


def test_max_results_jobs_are_taken_in_sort_order_then_filtered(five_jobs):
    first = five_jobs.list_training_jobs(NameContains="ha", MaxResults=2)  # evaluates delta, alpha
    assert names(first) == ["alpha"] and first["NextToken"]
    second = five_jobs.list_training_jobs(NameContains="ha", MaxResults=2, NextToken=first["NextToken"])
    assert names(second) == ["charlie"] and second["NextToken"]  # evaluated echo, charlie
    third = five_jobs.list_training_jobs(NameContains="ha", MaxResults=2, NextToken=second["NextToken"])
    assert names(third) == [] and "NextToken" not in third  # bravo, the last job, does not match


def test_a_page_may_be_empty_and_still_carry_a_token(five_jobs):
    response = five_jobs.list_training_jobs(NameContains="bravo", MaxResults=3)
    assert_conforms("ListTrainingJobs", response)
    assert names(response) == [] and response["NextToken"]
    assert walk(five_jobs, NameContains="bravo", MaxResults=3) == (["bravo"], 2)


def test_status_equals_example_of_the_documentation(five_jobs, backend):
    """MaxResults jobs of any status are selected (newest first here), then the status filter applies."""
    five_jobs.stop_training_job(TrainingJobName="bravo")  # the newest job; the others stay InProgress
    response = five_jobs.list_training_jobs(MaxResults=2, StatusEquals="InProgress", SortOrder="Descending")
    assert names(response) == ["charlie"] and response["NextToken"]


def test_raw_json_take_then_filter_and_forged_positions(five_jobs, backend):
    def call(body):
        return sagemaker_json(backend, "ListTrainingJobs", body)

    status, document = call({"NameContains": "echo", "MaxResults": 2})
    assert status == 200 and document["TrainingJobSummaries"] == [] and document["NextToken"]
    status, document = call({"NameContains": "echo", "MaxResults": 2, "NextToken": document["NextToken"]})
    assert status == 200 and [s["TrainingJobName"] for s in document["TrainingJobSummaries"]] == ["echo"]
    from sagemaker_plans_local.protocol.pagination import _list_query, encode, fingerprint

    bound = fingerprint(_list_query({}, descending=False))
    for forged in (["not-a-time", 1], [1.0, "x"], [1.0], {"a": 1}, [True, 1], None):
        status, document = call({"NextToken": encode(forged, bound)})
        assert (status, document["__type"]) == (400, "ValidationException"), forged


def test_a_job_that_changes_status_between_pages_moves_in_the_status_order(five_jobs, backend):
    first = five_jobs.list_training_jobs(SortBy="Status", MaxResults=2)
    assert {s["TrainingJobStatus"] for s in first["TrainingJobSummaries"]} == {"InProgress"}
    backend.clock.advance(1000)  # all end: Completed, one Failed
    rest, _ = walk(five_jobs, SortBy="Status", MaxResults=2, NextToken=first["NextToken"])
    assert rest == []  # every job now sorts before the InProgress position the token holds
    assert names(five_jobs.list_training_jobs(SortBy="Status", MaxResults=1)) == ["delta"]


OUTCOMES = st.sampled_from(["complete", "fail", "stop", "run"])
SORT_KEYS = {
    "Name": lambda s: s["TrainingJobName"],
    "CreationTime": lambda s: s["CreationTime"],
    "Status": lambda s: s["TrainingJobStatus"],
}


@settings(max_examples=20, deadline=None)
@given(
    jobs=st.lists(
        st.tuples(st.from_regex(r"[a-cA-C]{1,3}", fullmatch=True), OUTCOMES, st.booleans()),
        max_size=12,
        unique_by=lambda job: job[0].lower(),
    ),
    name_contains=st.sampled_from([None, "a", "b", "A", "ab"]),
    status=st.sampled_from([None, "InProgress", "Completed", "Failed", "Stopped", "Stopping"]),
    sort_by=st.sampled_from(["Name", "CreationTime", "Status"]),
    order=st.sampled_from(["Ascending", "Descending"]),
    page_size=st.integers(1, 5),
)
def test_walking_every_page_yields_the_filtered_list_exactly_once(
    jobs, name_contains, status, sort_by, order, page_size
):
    with LocalBackend(start_time=START) as backend:
        sm = backend.client()
        for name, outcome, later in jobs:
            if outcome == "fail":
                backend.script_job(name, outcome="AlgorithmError")
            sm.create_training_job(**create_request(name, keep_alive=None))
            if outcome == "stop":
                sm.stop_training_job(TrainingJobName=name)
            backend.clock.advance(30 if later else 0)
        backend.clock.advance(900 if any(outcome == "complete" for _, outcome, _ in jobs) else 1)
        everything = sm.list_training_jobs(MaxResults=100)["TrainingJobSummaries"]
        key = SORT_KEYS[sort_by]
        ordered = sorted(
            enumerate(everything), key=lambda item: (key(item[1]), item[0]), reverse=order == "Descending"
        )
        expected = [
            s["TrainingJobName"]
            for _, s in ordered
            if (name_contains is None or name_contains in s["TrainingJobName"])
            and (status is None or s["TrainingJobStatus"] == status)
        ]
        query = {"SortBy": sort_by, "SortOrder": order, "MaxResults": page_size}
        query.update({"NameContains": name_contains} if name_contains else {})
        query.update({"StatusEquals": status} if status else {})
        seen, pages = walk(sm, **query)
        assert seen == expected
        assert pages == max(1, -(-len(everything) // page_size))  # each page evaluates page_size jobs
