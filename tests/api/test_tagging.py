"""The Resource Groups Tagging API over SageMaker's resources and S3 buckets, through boto3 and raw JSON."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.tagging import api
from tests.api.test_tags import cluster_request, job, tags
from tests.conformance import assert_conforms
from tests.plan_helpers import buy, own_inventory

P5 = "ml.p5.48xlarge"
BUCKET_ARN = "arn:aws:s3:::tagged-bucket"


@pytest.fixture
def rt(backend):
    return backend.client("resourcegroupstaggingapi")


@pytest.fixture
def s3(backend):
    client = backend.client("s3")
    client.create_bucket(Bucket="tagged-bucket")
    return client


def resources(rt, **request) -> dict[str, dict[str, str]]:
    listed = rt.get_resources(**request)
    assert_conforms("GetResources", listed, service="resourcegroupstaggingapi")
    return {
        m["ResourceARN"]: {t["Key"]: t["Value"] for t in m["Tags"]} for m in listed["ResourceTagMappingList"]
    }


def error_of(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def raw(backend, operation, body):
    """The tagging service's answer to a raw JSON body: (status, wire document)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, _, answer = backend.service("resourcegroupstaggingapi").handle(
        "us-east-1", operation, {"body": data}
    )
    return status, answer.document


def test_get_resources_lists_every_tagged_resource_the_backend_holds(backend, sm, rt, s3):
    own_inventory(backend, (P5, 2, "us-east-1a", 1, 4))
    job_arn = job(sm, "tagged", Tags=tags(("team", "ml")))
    job(sm, "untagged")
    plan_arn, _ = buy(sm, backend, "plan-1", count=2, hours=48)
    sm.add_tags(ResourceArn=plan_arn, Tags=tags(("team", "plans")))
    capacity = sm.describe_training_plan(TrainingPlanName="plan-1")["ReservedCapacitySummaries"][0]
    sm.add_tags(ResourceArn=capacity["ReservedCapacityArn"], Tags=tags(("rc", "1")))
    cluster_arn = sm.create_cluster(**cluster_request("c-1", Tags=tags(("env", "dev"))))["ClusterArn"]
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": tags(("team", "data"))})
    s3.create_bucket(Bucket="never-tagged")

    assert resources(rt) == {
        job_arn: {"team": "ml"},
        plan_arn: {"team": "plans"},
        capacity["ReservedCapacityArn"]: {"rc": "1"},
        cluster_arn: {"env": "dev"},
        BUCKET_ARN: {"team": "data"},
    }
    listed = [m["ResourceARN"] for m in rt.get_resources()["ResourceTagMappingList"]]
    assert listed == sorted(listed)  # by ARN


def test_a_cluster_is_found_by_its_resource_type(sm, rt):
    """moto's cluster test: get_resources(ResourceTypeFilters=["sagemaker:cluster"])."""
    arn = sm.create_cluster(**cluster_request("moto-style", Tags=tags(("k", "v"))))["ClusterArn"]
    job(sm, "not-a-cluster", Tags=tags(("k", "v")))
    listed = rt.get_resources(ResourceTypeFilters=["sagemaker:cluster"])["ResourceTagMappingList"]
    assert listed == [{"ResourceARN": arn, "Tags": [{"Key": "k", "Value": "v"}]}]


def test_tag_filters_and_resource_type_filters(sm, rt, s3):
    a = job(sm, "a", Tags=tags(("team", "ml"), ("env", "dev")))
    b = job(sm, "b", Tags=tags(("team", "data"), ("env", "prod")))
    c = job(sm, "c", Tags=tags(("owner", "me")))
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": tags(("team", "ml"))})
    assert set(resources(rt, TagFilters=[{"Key": "team"}])) == {a, b, BUCKET_ARN}  # the key, any value
    assert set(resources(rt, TagFilters=[{"Key": "team", "Values": ["data", "x"]}])) == {b}  # any value
    both = [{"Key": "team", "Values": ["ml"]}, {"Key": "env"}]
    assert set(resources(rt, TagFilters=both)) == {a}  # the filters AND-ed
    assert set(resources(rt, TagFilters=[{"Key": "Team"}])) == set()  # keys are case sensitive
    assert set(resources(rt, ResourceTypeFilters=["s3"])) == {BUCKET_ARN}
    assert set(resources(rt, ResourceTypeFilters=["s3:bucket", "sagemaker:training-job"])) == {
        a,
        b,
        c,
        BUCKET_ARN,
    }
    assert set(resources(rt, ResourceTypeFilters=["sagemaker"], TagFilters=[{"Key": "team"}])) == {a, b}
    assert resources(rt, ResourceTypeFilters=["sagemaker:model", "ec2"]) == {}  # types not held


def test_a_resource_once_tagged_is_listed_with_no_tags_but_not_by_a_tag_filter(backend, sm, rt):
    arn = job(sm, "once", Tags=tags(("k", "v")))
    sm.delete_tags(ResourceArn=arn, TagKeys=["k"])
    assert resources(rt) == {arn: {}}
    assert resources(rt, TagFilters=[{"Key": "k"}]) == {}
    sm.stop_training_job(TrainingJobName="once")
    backend.clock.advance(60)
    sm.delete_training_job(TrainingJobName="once")
    assert resources(rt) == {}  # gone with its resource


def test_tag_and_untag_resources_are_addtags_and_listtags_both_ways(sm, rt):
    arn = job(sm, "both-ways", Tags=tags(("a", "1")))
    answer = rt.tag_resources(ResourceARNList=[arn], Tags={"b": "2", "a": "one"})
    assert_conforms("TagResources", answer, service="resourcegroupstaggingapi")
    assert answer["FailedResourcesMap"] == {}
    assert sm.list_tags(ResourceArn=arn)["Tags"] == tags(("a", "one"), ("b", "2"))
    sm.add_tags(ResourceArn=arn, Tags=tags(("c", "3")))
    assert resources(rt) == {arn: {"a": "one", "b": "2", "c": "3"}}
    assert rt.untag_resources(ResourceARNList=[arn], TagKeys=["a", "absent"])["FailedResourcesMap"] == {}
    assert sm.list_tags(ResourceArn=arn)["Tags"] == tags(("b", "2"), ("c", "3"))


def test_bucket_tags_are_one_set_for_s3_and_the_tagging_api(rt, s3):
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": tags(("a", "1"))})
    assert resources(rt) == {BUCKET_ARN: {"a": "1"}}
    assert rt.tag_resources(ResourceARNList=[BUCKET_ARN], Tags={"b": "2"})["FailedResourcesMap"] == {}
    assert s3.get_bucket_tagging(Bucket="tagged-bucket")["TagSet"] == tags(("a", "1"), ("b", "2"))
    assert rt.untag_resources(ResourceARNList=[BUCKET_ARN], TagKeys=["a", "b"])["FailedResourcesMap"] == {}
    with pytest.raises(ClientError) as none_left:
        s3.get_bucket_tagging(Bucket="tagged-bucket")
    assert error_of(none_left) == ("NoSuchTagSet", "The TagSet does not exist")
    assert resources(rt) == {BUCKET_ARN: {}}
    s3.delete_bucket(Bucket="tagged-bucket")
    assert resources(rt) == {}


def test_a_bucket_is_listed_in_its_own_region(backend, rt):
    backend.client("s3", region_name="eu-west-1").create_bucket(
        Bucket="in-ireland", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
    )
    arn = "arn:aws:s3:::in-ireland"
    failed = rt.tag_resources(ResourceARNList=[arn], Tags={"k": "v"})["FailedResourcesMap"]
    assert failed[arn]["ErrorMessage"] == "The specified bucket does not exist"
    ireland = backend.client("resourcegroupstaggingapi", region_name="eu-west-1")
    assert ireland.tag_resources(ResourceARNList=[arn], Tags={"k": "v"})["FailedResourcesMap"] == {}
    assert resources(ireland) == {arn: {"k": "v"}}
    assert resources(rt) == {}


def test_failed_resources_map_names_each_resource_refused_and_the_others_are_tagged(sm, rt, s3):
    good = job(sm, "good")
    full = job(sm, "full", Tags=tags(*[(f"k{i}", "") for i in range(50)]))
    unknown = good.replace("/good", "/unknown")
    ec2 = "arn:aws:ec2:us-east-1:123456789012:instance/i-0123456789abcdef0"
    missing_bucket = "arn:aws:s3:::no-such-bucket"
    arns = [good, full, unknown, ec2, missing_bucket, BUCKET_ARN]
    answer = rt.tag_resources(ResourceARNList=arns, Tags={"new": "1"})
    assert_conforms("TagResources", answer, service="resourcegroupstaggingapi")
    failed = answer["FailedResourcesMap"]
    assert set(failed) == {full, unknown, ec2, missing_bucket}
    assert failed[unknown] == {
        "StatusCode": 400,
        "ErrorCode": "InvalidParameterException",
        "ErrorMessage": f"Could not find resource {unknown}.",
    }
    assert failed[full]["ErrorMessage"].startswith(f"Tag limit exceeded: resource {full} would have 51 tags")
    assert failed[ec2]["ErrorCode"] == "InternalServiceException" and failed[ec2]["StatusCode"] == 500
    assert failed[missing_bucket]["ErrorMessage"] == "The specified bucket does not exist"
    assert sm.list_tags(ResourceArn=good)["Tags"] == tags(("new", "1"))
    assert len(sm.list_tags(ResourceArn=full)["Tags"]) == 50
    assert s3.get_bucket_tagging(Bucket="tagged-bucket")["TagSet"] == tags(("new", "1"))


def test_each_service_judges_the_tags_by_its_own_rules(sm, rt, s3):
    arn = job(sm, "patterned")
    failed = rt.tag_resources(ResourceARNList=[arn, BUCKET_ARN], Tags={"a#b": "v"})["FailedResourcesMap"]
    assert "Member must satisfy regular expression pattern" in failed[arn]["ErrorMessage"]
    assert failed[BUCKET_ARN]["ErrorMessage"] == "The TagKey you have provided is invalid"
    assert sm.list_tags(ResourceArn=arn)["Tags"] == []


@pytest.mark.parametrize(
    ("operation", "request_", "message"),
    [
        (
            "tag_resources",
            {"ResourceARNList": ["not-an-arn"], "Tags": {"k": "v"}},
            "not a valid AmazonResourceName",
        ),
        ("tag_resources", {"ResourceARNList": [BUCKET_ARN], "Tags": {"AWS:k": "v"}}, "System prefix 'aws:'"),
        ("untag_resources", {"ResourceARNList": [BUCKET_ARN], "TagKeys": ["aws:k"]}, "System prefix 'aws:'"),
        ("get_resources", {"ResourceARNList": [BUCKET_ARN], "TagFilters": [{"Key": "k"}]}, "ResourceARNList"),
        ("get_resources", {"ResourceARNList": [BUCKET_ARN], "ResourcesPerPage": 5}, "ResourceARNList"),
        ("get_resources", {"ResourcesPerPage": 101}, "ResourcesPerPage must be between 1 and 100"),
        ("get_resources", {"TagsPerPage": 99}, "TagsPerPage must be between 100 and 500"),
        ("get_resources", {"ResourceTypeFilters": ["s3"] * 101}, "at most 100"),
        ("get_resources", {"TagFilters": [{"Values": ["v"]}]}, "must contain a Key"),
        ("get_resources", {"ExcludeCompliantResources": True}, "IncludeComplianceDetails"),
        ("get_resources", {"PaginationToken": "bogus"}, "Invalid pagination token"),
        ("get_tag_keys", {"PaginationToken": "bogus"}, "Invalid pagination token"),
    ],
)
def test_a_request_refused_whole_is_an_invalid_parameter_exception_and_changes_nothing(
    rt, s3, operation, request_, message
):
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": tags(("k", "v"))})
    with pytest.raises(ClientError) as refused:
        getattr(rt, operation)(**request_)
    code, text = error_of(refused)
    assert code == "InvalidParameterException" and message in text
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert resources(rt) == {BUCKET_ARN: {"k": "v"}}


@pytest.mark.parametrize(
    ("operation", "body"),
    [
        ("TagResources", b"{not json"),
        ("TagResources", {"ResourceARNList": [], "Tags": {"k": "v"}}),
        ("TagResources", {"ResourceARNList": [BUCKET_ARN] * 21, "Tags": {"k": "v"}}),
        ("TagResources", {"ResourceARNList": [BUCKET_ARN], "Tags": {}}),
        ("TagResources", {"ResourceARNList": [BUCKET_ARN], "Tags": {"k": 5}}),
        ("TagResources", {"ResourceARNList": [BUCKET_ARN], "Tags": {"k" * 129: "v"}}),
        ("UntagResources", {"ResourceARNList": [BUCKET_ARN], "TagKeys": []}),
        ("UntagResources", {"ResourceARNList": BUCKET_ARN, "TagKeys": ["k"]}),
        ("GetResources", {"ResourcesPerPage": "5"}),
        ("GetResources", {"TagFilters": [{"Key": "k", "Values": ["v"] * 21}]}),
        ("GetTagValues", {}),
        ("GetResources", {"TagFilters": [{"Key": ""}]}),
    ],
)
def test_raw_bad_input_is_a_4xx_that_changes_nothing(backend, rt, s3, operation, body):
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": tags(("k", "v"))})
    status, document = raw(backend, operation, body)
    assert 400 <= status < 500, document
    assert document["__type"] in ("InvalidParameterException", "SerializationException")
    assert resources(rt) == {BUCKET_ARN: {"k": "v"}}


def test_resource_arn_list_gives_the_tags_of_those_resources(sm, rt, s3):
    a = job(sm, "a", Tags=tags(("k", "1")))
    job(sm, "b", Tags=tags(("k", "2")))
    untagged = job(sm, "c")
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": tags(("k", "3"))})
    arns = [BUCKET_ARN, a, untagged, "arn:aws:s3:::no-such-bucket"]
    assert resources(rt, ResourceARNList=arns) == {a: {"k": "1"}, BUCKET_ARN: {"k": "3"}}


def test_compliance_details_report_every_resource_compliant(sm, rt):
    arn = job(sm, "complies", Tags=tags(("k", "v")))
    [mapping] = rt.get_resources(IncludeComplianceDetails=True)["ResourceTagMappingList"]
    assert mapping["ResourceARN"] == arn and mapping["ComplianceDetails"]["ComplianceStatus"] is True
    both = {"IncludeComplianceDetails": True, "ExcludeCompliantResources": True}
    assert rt.get_resources(**both)["ResourceTagMappingList"] == []


def test_the_paginators_walk_every_page(sm, rt, s3):
    arns = [
        job(sm, f"job-{n}", Tags=tags(*[(f"k{n}-{i}", f"v{i % 3}") for i in range(50)])) for n in range(3)
    ]
    s3.put_bucket_tagging(Bucket="tagged-bucket", Tagging={"TagSet": tags(("k0-0", "bucket"))})
    by_resources = list(rt.get_paginator("get_resources").paginate(ResourcesPerPage=3))
    assert [len(page["ResourceTagMappingList"]) for page in by_resources] == [3, 1]
    # 50 tags each: two resources fill 100 tags, and no resource is split across pages
    by_tags = list(rt.get_paginator("get_resources").paginate(TagsPerPage=100))
    assert [len(page["ResourceTagMappingList"]) for page in by_tags] == [2, 2]
    walked = [m["ResourceARN"] for page in by_tags for m in page["ResourceTagMappingList"]]
    assert walked == sorted([*arns, BUCKET_ARN])
    keys = list(rt.get_paginator("get_tag_keys").paginate())
    assert [len(page["TagKeys"]) for page in keys] == [api.TAG_PAGE, 150 - api.TAG_PAGE]
    assert [key for page in keys for key in page["TagKeys"]] == sorted(
        f"k{n}-{i}" for n in range(3) for i in range(50)
    )
    values = rt.get_paginator("get_tag_values").paginate(Key="k0-0").build_full_result()
    assert values["TagValues"] == ["bucket", "v0"]


def test_a_pagination_token_is_bound_to_its_query(sm, rt):
    for n in range(3):
        job(sm, f"bound-{n}", Tags=tags(("k", "v")))
    token = rt.get_resources(ResourcesPerPage=1)["PaginationToken"]
    assert len(rt.get_resources(PaginationToken=token, ResourcesPerPage=5)["ResourceTagMappingList"]) == 2
    with pytest.raises(ClientError) as other_query:
        rt.get_resources(PaginationToken=token, TagFilters=[{"Key": "k"}])
    assert error_of(other_query)[0] == "InvalidParameterException"


def test_the_limits_are_the_api_references_and_the_models():
    model = service_model("resourcegroupstaggingapi")
    assert model.shape_for("ResourceARNListForTagUntag").metadata["max"] == 20
    doc = model.operation_model("GetResources").input_shape.members
    assert "minimum of 1 and a maximum value of 100" in doc["ResourcesPerPage"].documentation
    assert "minimum of 100 items up to a maximum of 500" in doc["TagsPerPage"].documentation
    assert "up to 100 items" in doc["ResourceTypeFilters"].documentation
    assert (api.RESOURCES_PER_PAGE, api.TAGS_PER_PAGE, api.MAX_TYPE_FILTERS) == ((1, 100), (100, 500), 100)
