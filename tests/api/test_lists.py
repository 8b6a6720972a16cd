"""MaxResults readings of the other List operations: ListClusters evaluates MaxResults clusters
then filters (its documentation); ListTrainingPlans and ListClusterNodes return up to MaxResults
matching items. Through boto3 and through raw JSON."""

import pytest
from botocore.exceptions import ClientError
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from tests.api.test_clusters_api import group
from tests.conformance import assert_conforms
from tests.plan_helpers import START, buy
from tests.raw_requests import sagemaker_json

M5 = "ml.m5.xlarge"


def cluster_names(response):
    return [s["ClusterName"] for s in response["ClusterSummaries"]]


@pytest.fixture
def clusters(backend, sm):
    for name in ("alpha", "beta", "gamma", "delta"):
        sm.create_cluster(ClusterName=name, InstanceGroups=[group("g", 1, M5)])
        backend.clock.advance(10)
    return sm


def test_list_clusters_evaluates_max_results_clusters_then_filters(clusters):
    first = clusters.list_clusters(NameContains="mm", MaxResults=2)  # alpha, beta: no match
    assert_conforms("ListClusters", first)
    assert cluster_names(first) == [] and first["NextToken"]
    second = clusters.list_clusters(NameContains="mm", MaxResults=2, NextToken=first["NextToken"])
    assert cluster_names(second) == ["gamma"] and "NextToken" not in second
    by_name = clusters.list_clusters(NameContains="a", MaxResults=3, SortBy="NAME", SortOrder="Descending")
    assert cluster_names(by_name) == ["gamma", "delta", "beta"] and by_name["NextToken"]


def test_raw_json_list_clusters_pages_and_rejects_foreign_tokens(clusters, backend):
    def call(body):
        return sagemaker_json(backend, "ListClusters", body)

    status, document = call({"NameContains": "delta", "MaxResults": 3})
    assert status == 200 and document["ClusterSummaries"] == [] and document["NextToken"]
    token = document["NextToken"]
    status, document = call({"NameContains": "delta", "MaxResults": 3, "NextToken": token})
    assert status == 200 and [s["ClusterName"] for s in document["ClusterSummaries"]] == ["delta"]
    status, document = call({"NameContains": "beta", "MaxResults": 3, "NextToken": token})
    assert (status, document["__type"]) == (400, "ValidationException")


def test_a_deleted_cluster_does_not_break_the_next_page(clusters, backend):
    first = clusters.list_clusters(MaxResults=2)
    clusters.delete_cluster(ClusterName="beta")  # the last one evaluated
    backend.clock.advance(3600)
    rest = clusters.list_clusters(MaxResults=2, NextToken=first["NextToken"])
    assert cluster_names(rest) == ["gamma", "delta"]


def test_list_cluster_nodes_returns_up_to_max_results_matching_nodes(sm, backend):
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("a", 3, M5), group("b", 2, M5)])
    backend.clock.advance(3600)
    first = sm.list_cluster_nodes(ClusterName="c", InstanceGroupNameContains="b", MaxResults=1)
    assert [n["InstanceGroupName"] for n in first["ClusterNodeSummaries"]] == ["b"] and first["NextToken"]
    second = sm.list_cluster_nodes(
        ClusterName="c", InstanceGroupNameContains="b", MaxResults=1, NextToken=first["NextToken"]
    )
    assert [n["InstanceGroupName"] for n in second["ClusterNodeSummaries"]] == ["b"]
    assert "NextToken" not in second
    everything = sm.list_cluster_nodes(ClusterName="c", InstanceGroupNameContains="b", MaxResults=2)
    assert len(everything["ClusterNodeSummaries"]) == 2 and "NextToken" not in everything


def test_list_training_plans_returns_up_to_max_results_matching_plans(sm, backend):
    for name, pays in (("p-1", False), ("p-2", True), ("p-3", False), ("p-4", True)):
        if not pays:
            backend.script_plan(name)
        buy(sm, backend, name, count=1, hours=24, pay=False)
    backend.clock.advance(backend.settings.plan_payment_seconds)
    failed = [{"Name": "Status", "Value": "Failed"}]
    first = sm.list_training_plans(Filters=failed, MaxResults=1, SortBy="TrainingPlanName")
    assert_conforms("ListTrainingPlans", first)
    assert [p["TrainingPlanName"] for p in first["TrainingPlanSummaries"]] == ["p-1"] and first["NextToken"]
    second = sm.list_training_plans(
        Filters=failed, MaxResults=1, SortBy="TrainingPlanName", NextToken=first["NextToken"]
    )
    assert [p["TrainingPlanName"] for p in second["TrainingPlanSummaries"]] == ["p-3"]
    assert "NextToken" not in second  # no further Failed plan: no token, no empty last page
    by_status = sm.list_training_plans(SortBy="Status", MaxResults=100)["TrainingPlanSummaries"]
    statuses = [p["Status"] for p in by_status]
    assert statuses == sorted(statuses) and statuses.count("Failed") == 2 and len(set(statuses)) == 2


def test_bad_tokens_are_validation_errors_on_every_list(clusters):
    for call in (
        lambda: clusters.list_clusters(NextToken="x"),
        lambda: clusters.list_training_plans(NextToken="x"),
        lambda: clusters.list_cluster_nodes(ClusterName="alpha", NextToken="x"),
    ):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert excinfo.value.response["Error"]["Code"] == "ValidationException"


@settings(max_examples=15, deadline=None)
@given(
    names=st.lists(st.from_regex(r"[a-c]{1,3}", fullmatch=True), unique=True, max_size=8),
    contains=st.sampled_from([None, "a", "bc"]),
    sort=st.sampled_from(["CREATION_TIME", "NAME"]),
    descending=st.booleans(),
    limit=st.integers(1, 4),
)
def test_walking_list_clusters_yields_the_filtered_clusters_once(names, contains, sort, descending, limit):
    with LocalBackend(start_time=START) as backend:
        sm = backend.client()
        for name in names:
            sm.create_cluster(ClusterName=name, InstanceGroups=[group("g", 1, M5)])
        order = sorted(
            range(len(names)), key=lambda i: (names[i] if sort == "NAME" else 0, i), reverse=descending
        )
        expected = [names[i] for i in order if contains is None or contains in names[i]]
        query = {
            "SortBy": sort,
            "SortOrder": "Descending" if descending else "Ascending",
            "MaxResults": limit,
            **({"NameContains": contains} if contains else {}),
        }
        seen, pages, token = [], 0, None
        while True:
            response = sm.list_clusters(**query, **({"NextToken": token} if token else {}))
            seen, pages, token = seen + cluster_names(response), pages + 1, response.get("NextToken")
            if not token:
                break
        assert seen == expected and pages == max(1, -(-len(names) // limit))


@pytest.mark.parametrize("order", ["Ascending", "Descending"])
def test_walking_cluster_node_pages_yields_every_node_once_in_order(sm, backend, order):
    sm.create_cluster(ClusterName="c", InstanceGroups=[group("a", 3, M5), group("b", 2, M5)])
    backend.clock.advance(3600)
    whole = sm.list_cluster_nodes(ClusterName="c", SortOrder=order, MaxResults=10)["ClusterNodeSummaries"]
    walked, token = [], None
    while True:
        page = sm.list_cluster_nodes(
            ClusterName="c", SortOrder=order, MaxResults=2, **({"NextToken": token} if token else {})
        )
        walked += page["ClusterNodeSummaries"]
        token = page.get("NextToken")
        if not token:
            break
    assert len(whole) == 5
    assert [n["InstanceId"] for n in walked] == [n["InstanceId"] for n in whole]
