"""The Resource Groups Tagging API and S3 bucket tagging through the HTTP server."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from tests.conftest import create_request
from tests.server.clients import client, raw


def test_tags_given_over_http_are_found_over_http(sagemaker_server):
    sm, s3 = client(sagemaker_server), client(sagemaker_server, "s3")
    rt = client(sagemaker_server, "resourcegroupstaggingapi")
    arn = sm.create_training_job(**create_request("tagged-over-http"))["TrainingJobArn"]
    s3.create_bucket(Bucket="http-bucket")
    s3.put_bucket_tagging(Bucket="http-bucket", Tagging={"TagSet": [{"Key": "team", "Value": "data"}]})
    answer = rt.tag_resources(ResourceARNList=[arn, "arn:aws:s3:::http-bucket"], Tags={"env": "dev"})
    assert answer["FailedResourcesMap"] == {}
    assert sm.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "env", "Value": "dev"}]
    assert s3.get_bucket_tagging(Bucket="http-bucket")["TagSet"] == [
        {"Key": "team", "Value": "data"},
        {"Key": "env", "Value": "dev"},
    ]
    found = rt.get_resources(TagFilters=[{"Key": "env", "Values": ["dev"]}], ResourcesPerPage=1)
    assert [m["ResourceARN"] for m in found["ResourceTagMappingList"]] == ["arn:aws:s3:::http-bucket"]
    pages = rt.get_paginator("get_resources").paginate(TagFilters=[{"Key": "env"}], ResourcesPerPage=1)
    assert [m["ResourceARN"] for page in pages for m in page["ResourceTagMappingList"]] == [
        "arn:aws:s3:::http-bucket",
        arn,
    ]
    assert rt.get_tag_keys()["TagKeys"] == ["env", "team"]
    assert rt.get_tag_values(Key="env")["TagValues"] == ["dev"]
    s3.delete_bucket_tagging(Bucket="http-bucket")
    with pytest.raises(ClientError) as gone:
        s3.get_bucket_tagging(Bucket="http-bucket")
    assert gone.value.response["Error"]["Code"] == "NoSuchTagSet"


def test_a_refused_request_over_http_is_an_invalid_parameter_exception(sagemaker_server):
    rt = client(sagemaker_server, "resourcegroupstaggingapi")
    with pytest.raises(ClientError) as refused:
        rt.get_resources(ResourcesPerPage=500)
    assert refused.value.response["Error"]["Code"] == "InvalidParameterException"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_an_unsigned_raw_request_is_refused_before_the_service(sagemaker_server):
    headers = {"X-Amz-Target": "ResourceGroupsTaggingAPI_20170126.GetResources"}
    status, _, body = raw(sagemaker_server, "/", b"{}", "POST", headers)
    assert status == 403 and "__type" in json.loads(body)
