"""AddTags, ListTags, DeleteTags and creation Tags, through boto3 and raw JSON."""

import itertools
from types import SimpleNamespace

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.sagemaker.api.tags import DEFAULT_MAX_RESULTS, list_tags
from sagemaker_plans_local.services.sagemaker.tags import MAX_TAGS_PER_RESOURCE, Tag
from tests.conformance import assert_conforms
from tests.conftest import ROLE, create_request
from tests.plan_helpers import buy, own_inventory
from tests.raw_requests import sagemaker_json

P5 = "ml.p5.48xlarge"
MODEL = service_model()


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def tags(*pairs):
    return [{"Key": key, "Value": value} for key, value in pairs]


def raw(backend, operation, body):
    status, document = sagemaker_json(backend, operation, body)
    return status, document


def job(sm, name, **extra):
    return sm.create_training_job(**create_request(name, keep_alive=None, **extra))["TrainingJobArn"]


def cluster_request(name, **extra):
    group = {
        "InstanceGroupName": "workers",
        "InstanceType": "ml.m5.large",
        "InstanceCount": 1,
        "ExecutionRole": ROLE,
        "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/lifecycle", "OnCreate": "on_create.sh"},
    }
    return {"ClusterName": name, "InstanceGroups": [group], **extra}


def test_limits_are_the_models():
    assert MAX_TAGS_PER_RESOURCE == MODEL.shape_for("TagList").metadata["max"]
    assert DEFAULT_MAX_RESULTS == MODEL.shape_for("ListTagsMaxResults").metadata["min"]


def test_creation_tags_are_listed_for_jobs_plans_capacities_and_clusters(backend, sm):
    own_inventory(backend, (P5, 2, "us-east-1a", 1, 4))
    job_arn = job(sm, "tagged", Tags=tags(("team", "ml"), ("cost", "42")))
    plan_arn, _ = buy(sm, backend, "plan-1", count=2, hours=48)
    sm.add_tags(ResourceArn=plan_arn, Tags=tags(("owner", "me")))
    cluster_arn = sm.create_cluster(**cluster_request("c-1", Tags=tags(("env", "dev"))))["ClusterArn"]

    listed = sm.list_tags(ResourceArn=job_arn)
    assert_conforms("ListTags", listed)
    assert listed["Tags"] == tags(("team", "ml"), ("cost", "42")) and "NextToken" not in listed
    assert sm.list_tags(ResourceArn=plan_arn)["Tags"] == tags(("owner", "me"))
    assert sm.list_tags(ResourceArn=cluster_arn)["Tags"] == tags(("env", "dev"))
    rc_arn = sm.describe_training_plan(TrainingPlanName="plan-1")["ReservedCapacitySummaries"][0][
        "ReservedCapacityArn"
    ]
    assert sm.list_tags(ResourceArn=rc_arn)["Tags"] == []


def test_plan_creation_tags_also_tag_its_reserved_capacities(backend, sm):
    own_inventory(backend, (P5, 2, "us-east-1a", 1, 4))
    offering = sm.search_training_plan_offerings(
        InstanceType=P5, InstanceCount=2, DurationHours=48, TargetResources=["training-job"]
    )["TrainingPlanOfferings"][0]
    arn = sm.create_training_plan(
        TrainingPlanName="p", TrainingPlanOfferingId=offering["TrainingPlanOfferingId"], Tags=tags(("k", "v"))
    )["TrainingPlanArn"]
    rc_arn = sm.describe_training_plan(TrainingPlanName="p")["ReservedCapacitySummaries"][0][
        "ReservedCapacityArn"
    ]
    assert (
        sm.list_tags(ResourceArn=arn)["Tags"] == sm.list_tags(ResourceArn=rc_arn)["Tags"] == tags(("k", "v"))
    )
    sm.delete_tags(ResourceArn=rc_arn, TagKeys=["k"])
    assert sm.list_tags(ResourceArn=arn)["Tags"] == tags(("k", "v"))


def test_add_overwrites_and_returns_all_tags_delete_ignores_unknown_keys(sm):
    arn = job(sm, "MixedCase", Tags=tags(("a", "1")))
    assert arn.endswith("training-job/mixedcase")
    added = sm.add_tags(ResourceArn=arn, Tags=tags(("b", "2"), ("a", "3")))
    assert_conforms("AddTags", added)
    assert added["Tags"] == tags(("a", "3"), ("b", "2"))
    # The job's name in any case names the same (lowercased) ARN.
    upper = arn.replace("mixedcase", "MixedCase")
    assert sm.list_tags(ResourceArn=upper)["Tags"] == tags(("a", "3"), ("b", "2"))
    assert_conforms("DeleteTags", sm.delete_tags(ResourceArn=upper, TagKeys=["a", "never-added"]))
    assert sm.list_tags(ResourceArn=arn)["Tags"] == tags(("b", "2"))
    assert sm.add_tags(ResourceArn=arn, Tags=[])["Tags"] == tags(("b", "2"))


def test_refused_tag_calls_change_nothing(sm):
    arn = job(sm, "j", Tags=tags(*((f"k{i}", "v") for i in range(48))))
    before = sm.list_tags(ResourceArn=arn)["Tags"]

    def refused(call, **request):
        with pytest.raises(ClientError) as excinfo:
            call(ResourceArn=arn, **request)
        assert sm.list_tags(ResourceArn=arn)["Tags"] == before
        return error_of(excinfo)

    assert refused(sm.add_tags, Tags=tags(("k0", "x"), ("n1", "1"), ("n2", "2"), ("n3", "3"))) == (
        "ValidationException",
        f"Tag limit exceeded: resource {arn} would have 51 tags; a resource can have at most 50 tags.",
    )
    assert refused(sm.add_tags, Tags=tags(("n1", "1"), ("AWS:owner", "x"))) == (
        "ValidationException",
        "System prefix 'aws:' reserved for AWS usage in tag key: AWS:owner",
    )
    assert refused(sm.add_tags, Tags=tags(("n1", "1"), ("n1", "2"))) == (
        "ValidationException",
        "Tag keys must be unique per resource; the key n1 appears more than once in the request.",
    )
    assert refused(sm.delete_tags, TagKeys=["k1", "aws:cloudformation:stack-name"]) == (
        "ValidationException",
        "System prefix 'aws:' reserved for AWS usage in tag key: aws:cloudformation:stack-name",
    )
    # Up to the limit is fine.
    assert len(sm.add_tags(ResourceArn=arn, Tags=tags(("k0", "x"), ("n1", "1"), ("n2", "2")))["Tags"]) == 50


def test_creation_with_bad_tags_creates_nothing(backend, sm):
    for bad in (tags(("aws:x", "1")), tags(("k", "1"), ("k", "2"))):
        with pytest.raises(ClientError) as excinfo:
            job(sm, "refused", Tags=bad)
        assert error_of(excinfo)[0] == "ValidationException"
        with pytest.raises(ClientError):
            sm.create_cluster(**cluster_request("refused", Tags=bad))
    assert sm.list_training_jobs()["TrainingJobSummaries"] == []
    assert sm.list_clusters()["ClusterSummaries"] == []
    # 51 tags: the model's TagList limit, checked before the service (raw JSON skips botocore).
    status, document = raw(
        backend,
        "CreateTrainingJob",
        create_request("refused", Tags=tags(*((f"k{i}", "") for i in range(51)))),
    )
    assert status == 400 and document["__type"] == "ValidationException"
    assert "Member must have length less than or equal to 50" in document["message"]
    assert sm.list_training_jobs()["TrainingJobSummaries"] == []


def test_unknown_resources_are_a_validation_exception(backend, sm):
    arn = job(sm, "known")
    for missing in (
        arn + "x",
        arn.replace("us-east-1", "us-west-2"),
        arn.replace("123456789012", "111122223333"),
        "arn:aws:sagemaker:us-east-1:123456789012:endpoint/known",
        "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdefabcdef",
    ):
        for call, request in (
            (sm.list_tags, {}),
            (sm.add_tags, {"Tags": tags(("k", "v"))}),
            (sm.delete_tags, {"TagKeys": ["k"]}),
        ):
            with pytest.raises(ClientError) as excinfo:
                call(ResourceArn=missing, **request)
            assert error_of(excinfo) == ("ValidationException", f"Could not find resource {missing}.")


def test_deleting_a_resource_removes_its_tags(backend, sm):
    arn = job(sm, "gone", Tags=tags(("old", "1")))
    sm.stop_training_job(TrainingJobName="gone")
    backend.clock.advance(3600)
    sm.delete_training_job(TrainingJobName="gone")
    with pytest.raises(ClientError) as excinfo:
        sm.list_tags(ResourceArn=arn)
    assert error_of(excinfo)[0] == "ValidationException"
    assert job(sm, "gone") == arn  # the same ARN again: a new job, without the old tags
    assert sm.list_tags(ResourceArn=arn)["Tags"] == []

    cluster_arn = sm.create_cluster(**cluster_request("c", Tags=tags(("a", "1"))))["ClusterArn"]
    backend.clock.advance(600)
    sm.delete_cluster(ClusterName="c")
    assert sm.list_tags(ResourceArn=cluster_arn)["Tags"] == tags(("a", "1"))  # still Deleting
    backend.clock.advance(600)
    with pytest.raises(ClientError):
        sm.list_tags(ResourceArn=cluster_arn)


def test_raw_json_requests(backend, sm):
    arn = job(sm, "raw")
    assert raw(backend, "AddTags", {"ResourceArn": arn, "Tags": [{"Key": "a", "Value": "1"}]}) == (
        200,
        {"Tags": [{"Key": "a", "Value": "1"}]},
    )
    for body in (
        {"ResourceArn": arn, "MaxResults": 10},  # below the model's minimum of 50
        {"ResourceArn": arn, "NextToken": "not-a-token"},
        {"ResourceArn": "not-an-arn"},
    ):
        status, document = raw(backend, "ListTags", body)
        assert status == 400 and document["__type"] == "ValidationException", body
    for body in (
        {"ResourceArn": arn, "Tags": [{"Key": "", "Value": "1"}]},
        {"ResourceArn": arn, "Tags": [{"Key": "k"}]},  # Value is required by the model
        {"ResourceArn": arn, "Tags": [{"Key": "k" * 129, "Value": "1"}]},
        {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v" * 257}]},
        {"ResourceArn": arn, "Tags": [{"Key": "k!", "Value": "1"}]},
    ):
        status, document = raw(backend, "AddTags", body)
        assert status == 400 and document["__type"] == "ValidationException", body
    status, document = raw(backend, "DeleteTags", {"ResourceArn": arn, "TagKeys": []})
    assert status == 400 and document["__type"] == "ValidationException"
    assert raw(backend, "ListTags", {"ResourceArn": arn, "MaxResults": 50}) == (
        200,
        {"Tags": [{"Key": "a", "Value": "1"}]},
    )


KEYS = [f"k{i}" for i in range(60)] + ["aws:x", "AWS:Y"]
VALUES = st.text(alphabet="ab 1_.:/=+-@é", max_size=4)
ADD = st.tuples(st.just("AddTags"), st.lists(st.tuples(st.sampled_from(KEYS), VALUES), max_size=20))
DELETE = st.tuples(st.just("DeleteTags"), st.lists(st.sampled_from(KEYS), min_size=1, max_size=6))
_names = itertools.count()


def _expected(model: dict, operation: str, argument: list) -> dict | None:
    """The tags after the call, or None if AWS refuses it."""
    keys = [pair[0] for pair in argument] if operation == "AddTags" else argument
    if any(key.lower().startswith("aws:") for key in keys):
        return None
    if operation == "DeleteTags":
        return {key: value for key, value in model.items() if key not in keys}
    if len(set(keys)) < len(keys) or len(set(model) | set(keys)) > MAX_TAGS_PER_RESOURCE:
        return None
    return {**model, **dict(argument)}


def _listed(backend, arn: str, max_results: int | None) -> list[tuple[str, str]]:
    body: dict = (
        {"ResourceArn": arn} if max_results is None else {"ResourceArn": arn, "MaxResults": max_results}
    )
    pairs = []
    while True:
        status, document = raw(backend, "ListTags", body)
        assert status == 200
        pairs += [(tag["Key"], tag["Value"]) for tag in document["Tags"]]
        if "NextToken" not in document:
            return pairs
        body["NextToken"] = document["NextToken"]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    initial=st.dictionaries(st.sampled_from(KEYS[:60]), VALUES, max_size=48),
    calls=st.lists(st.one_of(ADD, DELETE), max_size=8),
    max_results=st.sampled_from([None, 50, 1000]),
)
def test_listed_tags_always_equal_the_model(backend, sm, initial, calls, max_results):
    arn = job(sm, f"prop-{next(_names)}", Tags=tags(*initial.items()))
    model = dict(initial)
    for operation, argument in calls:
        body = (
            {"ResourceArn": arn, "Tags": tags(*argument)}
            if operation == "AddTags"
            else {"ResourceArn": arn, "TagKeys": argument}
        )
        status, document = raw(backend, operation, body)
        expected = _expected(model, operation, argument)
        event(f"{operation} {'refused' if expected is None else 'accepted'}")
        if expected is None:
            assert (status, document["__type"]) == (400, "ValidationException")
        else:
            assert status == 200
            model = expected
            if operation == "AddTags":
                assert [(tag["Key"], tag["Value"]) for tag in document["Tags"]] == list(model.items())
        assert _listed(backend, arn, max_results) == list(model.items())


@settings(max_examples=25, deadline=None)
@given(
    count=st.integers(0, 180),
    max_results=st.sampled_from([None, 50, 64]),
    dropped=st.sets(st.integers(0, 179), max_size=30),
)
def test_list_tags_pages_resume_after_the_last_tag_returned(count, max_results, dropped):
    """More tags than one page (AWS-made ones could be): pages chain, and keys deleted
    between pages neither repeat nor hide the tags after them."""
    held = [Tag(f"k{i}", "v", i) for i in range(count)]
    region = SimpleNamespace(tags=SimpleNamespace(list=lambda arn: list(held)))
    params = {"ResourceArn": "arn:aws:sagemaker:us-east-1:123456789012:training-job/j"}
    if max_results is not None:
        params["MaxResults"] = max_results
    seen, pages = [], 0
    while True:
        response = list_tags(region, params)
        pages += 1
        assert len(response["Tags"]) <= (max_results or DEFAULT_MAX_RESULTS)
        seen += [tag["Key"] for tag in response["Tags"]]
        if pages == 1:  # keys deleted after the first page
            held[:] = [tag for tag in held if tag.sequence not in dropped or f"k{tag.sequence}" in seen]
        if response["NextToken"] is None:
            break
        params["NextToken"] = response["NextToken"]
    assert seen == [tag.key for tag in held]
