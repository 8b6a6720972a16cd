"""PutBucketTagging, GetBucketTagging and DeleteBucketTagging: S3's rules and answers."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


def tag_set(*pairs):
    return {"TagSet": [{"Key": key, "Value": value} for key, value in pairs]}


@pytest.fixture
def s3(backend):
    client = backend.client("s3")
    client.create_bucket(Bucket="bucket-tags")
    return client


def test_a_bucket_tag_set_is_put_read_replaced_and_deleted(s3):
    put = s3.put_bucket_tagging(
        Bucket="bucket-tags", Tagging=tag_set(("b", "2"), ("a", ""), ("é 1", "x+y=z"))
    )
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert (
        s3.get_bucket_tagging(Bucket="bucket-tags")["TagSet"]
        == tag_set(("b", "2"), ("a", ""), ("é 1", "x+y=z"))["TagSet"]
    )
    s3.put_bucket_tagging(Bucket="bucket-tags", Tagging=tag_set(("c", "3")))  # replaces the whole set
    assert s3.get_bucket_tagging(Bucket="bucket-tags")["TagSet"] == tag_set(("c", "3"))["TagSet"]
    assert s3.delete_bucket_tagging(Bucket="bucket-tags")["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as none:
        s3.get_bucket_tagging(Bucket="bucket-tags")
    assert none.value.response["Error"] == {
        "Code": "NoSuchTagSet",
        "Message": "The TagSet does not exist",
        "BucketName": "bucket-tags",
    }
    assert none.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


@pytest.mark.parametrize(
    ("pairs", "message", "fields"),
    [
        ([("a", "1"), ("a", "2")], "Cannot provide multiple Tags with the same key", {"TagKey": "a"}),
        ([("AWS:cost", "1")], "System tags cannot be added/updated by requester", {"TagKey": "AWS:cost"}),
        ([("a#b", "1")], "The TagKey you have provided is invalid", {"TagKey": "a#b"}),
        ([("k" * 129, "1")], "The TagKey you have provided is invalid", {"TagKey": "k" * 129}),
        (
            [("k", "😀" * 129)],
            "The TagValue you have provided is invalid",
            {"TagKey": "k", "TagValue": "😀" * 129},
        ),
        ([("k", "a\tb")], "The TagValue you have provided is invalid", {"TagKey": "k", "TagValue": "a\tb"}),
        ([(f"k{i}", "") for i in range(51)], "Bucket tag count cannot be greater than 50", {}),
    ],
)
def test_tags_s3_refuses_leave_the_bucket_as_it_was(s3, pairs, message, fields):
    s3.put_bucket_tagging(Bucket="bucket-tags", Tagging=tag_set(("kept", "1")))
    with pytest.raises(ClientError) as refused:
        s3.put_bucket_tagging(Bucket="bucket-tags", Tagging=tag_set(*pairs))
    assert refused.value.response["Error"] == {"Code": "InvalidTag", "Message": message, **fields}
    assert s3.get_bucket_tagging(Bucket="bucket-tags")["TagSet"] == tag_set(("kept", "1"))["TagSet"]


@pytest.mark.parametrize(
    "body",
    [
        b"<Tagging><TagSet>",
        b"<Tagging></Tagging>",
        b"<Tagging><TagSet><Tag><Key>a</Key></Tag></TagSet></Tagging>",
    ],
)
def test_a_malformed_tagging_document_is_malformed_xml(backend, s3, body):
    request = {"url_path": "/bucket-tags", "query_string": {"tagging": ""}, "headers": {}, "body": body}
    status, _, answer = backend.service("s3").handle("us-east-1", "PutBucketTagging", request)
    assert status == 400 and b"<Code>MalformedXML</Code>" in bytes(answer)


def test_tagging_a_bucket_that_does_not_exist_is_no_such_bucket(s3):
    for call in (
        lambda: s3.put_bucket_tagging(Bucket="no-such-bucket", Tagging=tag_set(("k", "v"))),
        lambda: s3.get_bucket_tagging(Bucket="no-such-bucket"),
        lambda: s3.delete_bucket_tagging(Bucket="no-such-bucket"),
    ):
        with pytest.raises(ClientError) as missing:
            call()
        assert missing.value.response["Error"]["Code"] == "NoSuchBucket"
