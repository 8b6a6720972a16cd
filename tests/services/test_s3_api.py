"""S3 answered in-process: real boto3 clients, resources and transfers, as the SageMaker SDK uses them."""

from __future__ import annotations

import base64
import hashlib
import os
from datetime import datetime, timezone

import boto3
import pytest
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.parsers import create_parser
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol import xml_wire
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.services.s3.objects import MIN_PART_SIZE

from ..model_strategies import for_shape
from . import ACCOUNT, Services

MB = 1024 * 1024


@pytest.fixture
def services(tmp_path):
    return Services(tmp_path)


@pytest.fixture
def s3(services):
    client = services.client("s3")
    client.create_bucket(Bucket="bucket")
    return client


def error_of(call, *args, **kwargs) -> dict:
    with pytest.raises(ClientError) as caught:
        call(*args, **kwargs)
    return caught.value.response


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def random_file(path, size):
    path.write_bytes(os.urandom(size))
    return path


# -- buckets ---------------------------------------------------------------------------------------


def test_resource_bucket_creation_date_as_the_sdk_checks_it(services):
    resource = services.session().resource("s3")
    bucket = resource.Bucket("sagemaker-us-east-1-123456789012")
    assert bucket.creation_date is None
    services.clock.advance(30)
    bucket.create()
    assert resource.Bucket("sagemaker-us-east-1-123456789012").creation_date == datetime(
        2026, 1, 1, 0, 0, 30, tzinfo=timezone.utc
    )


def test_head_bucket_and_owner_checks(services, s3):
    answer = s3.head_bucket(Bucket="bucket", ExpectedBucketOwner=ACCOUNT)
    assert answer["BucketRegion"] == "us-east-1"
    missing = error_of(s3.head_bucket, Bucket="missing-bucket")
    assert missing["Error"] == {"Code": "404", "Message": "Not Found"}
    forbidden = error_of(s3.head_bucket, Bucket="bucket", ExpectedBucketOwner="999999999999")
    assert forbidden["Error"] == {"Code": "403", "Message": "Forbidden"}
    denied = error_of(s3.list_objects_v2, Bucket="bucket", ExpectedBucketOwner="999999999999")
    assert denied["Error"]["Code"] == "AccessDenied"
    assert denied["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_create_bucket_rules_by_region(services, s3):
    s3.create_bucket(Bucket="bucket")  # us-east-1: the owner may re-create
    assert (
        error_of(
            s3.create_bucket,
            Bucket="x",
        )["Error"]["Code"]
        == "InvalidBucketName"
    )
    assert (
        error_of(
            s3.create_bucket,
            Bucket="other-bucket",
            CreateBucketConfiguration={"LocationConstraint": "us-east-1"},
        )["Error"]["Code"]
        == "InvalidLocationConstraint"
    )
    eu = services.client("s3", region="eu-west-1")
    illegal = error_of(eu.create_bucket, Bucket="eu-bucket")
    assert illegal["Error"]["Code"] == "IllegalLocationConstraintException"
    eu.create_bucket(Bucket="eu-bucket", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    with pytest.raises(eu.exceptions.BucketAlreadyOwnedByYou):
        eu.create_bucket(Bucket="eu-bucket", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert eu.get_bucket_location(Bucket="eu-bucket")["LocationConstraint"] == "eu-west-1"
    assert s3.get_bucket_location(Bucket="bucket")["LocationConstraint"] is None
    names = [(b["Name"], b["BucketRegion"]) for b in s3.list_buckets()["Buckets"]]
    assert names == [("bucket", "us-east-1"), ("eu-bucket", "eu-west-1")]
    page = s3.list_buckets(MaxBuckets=1)
    assert [b["Name"] for b in page["Buckets"]] == ["bucket"]
    rest = s3.list_buckets(MaxBuckets=1, ContinuationToken=page["ContinuationToken"])
    assert [b["Name"] for b in rest["Buckets"]] == ["eu-bucket"] and "ContinuationToken" not in rest


def test_delete_bucket(s3):
    s3.put_object(Bucket="bucket", Key="k", Body=b"x")
    with pytest.raises(s3.exceptions.ClientError) as caught:
        s3.delete_bucket(Bucket="bucket")
    assert caught.value.response["Error"]["Code"] == "BucketNotEmpty"
    assert caught.value.response["Error"]["BucketName"] == "bucket"
    s3.delete_object(Bucket="bucket", Key="k")
    assert s3.delete_bucket(Bucket="bucket")["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(s3.exceptions.NoSuchBucket):
        s3.list_objects_v2(Bucket="bucket")


@pytest.mark.parametrize(
    "config", [Config(s3={"addressing_style": "path"}), Config(s3={"addressing_style": "virtual"}), None]
)
@pytest.mark.parametrize("endpoint_url", [None, "http://localhost:9000"])
def test_both_addressing_styles(services, config, endpoint_url):
    client = services.client("s3", config=config, endpoint_url=endpoint_url)
    client.create_bucket(Bucket="dotted.bucket.name")
    client.put_object(Bucket="dotted.bucket.name", Key="a/b c/d+e", Body=b"data")
    assert client.get_object(Bucket="dotted.bucket.name", Key="a/b c/d+e")["Body"].read() == b"data"
    client.create_bucket(Bucket="plain-bucket")
    client.put_object(Bucket="plain-bucket", Key="k", Body=b"plain")
    assert client.get_object(Bucket="plain-bucket", Key="k")["Body"].read() == b"plain"


# -- objects ---------------------------------------------------------------------------------------


def test_put_get_head_with_types_aws_gives(services, s3):
    services.clock.advance(5)
    body = b'{"a": 1}'
    put = s3.put_object(
        Bucket="bucket",
        Key="dir/file.json",
        Body=body,
        ContentType="application/json",
        Metadata={"Trained-By": "me"},
    )
    assert put["ETag"] == f'"{md5(body)}"'
    got = s3.get_object(Bucket="bucket", Key="dir/file.json")
    assert got["Body"].read() == b'{"a": 1}'
    assert got["ContentLength"] == 8
    assert got["ContentType"] == "application/json"
    assert got["LastModified"] == datetime(2026, 1, 1, 0, 0, 5, tzinfo=timezone.utc)
    assert got["Metadata"] == {"trained-by": "me"}
    assert got["ETag"] == put["ETag"]
    head = s3.head_object(Bucket="bucket", Key="dir/file.json")
    assert (head["ContentLength"], head["ETag"], head["AcceptRanges"]) == (8, put["ETag"], "bytes")


def test_missing_keys(s3):
    head = error_of(s3.head_object, Bucket="bucket", Key="missing")
    assert head["Error"] == {"Code": "404", "Message": "Not Found"}
    assert head["ResponseMetadata"]["HTTPStatusCode"] == 404
    with pytest.raises(s3.exceptions.NoSuchKey) as caught:
        s3.get_object(Bucket="bucket", Key="missing")
    assert caught.value.response["Error"] == {
        "Code": "NoSuchKey",
        "Message": "The specified key does not exist.",
        "Key": "missing",
    }
    with pytest.raises(s3.exceptions.NoSuchBucket):
        s3.get_object(Bucket="no-such-bucket", Key="k")
    assert s3.delete_object(Bucket="bucket", Key="missing")["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_ranges_and_conditions(s3):
    data = bytes(range(256)) * 4
    etag = s3.put_object(Bucket="bucket", Key="k", Body=data)["ETag"]
    part = s3.get_object(Bucket="bucket", Key="k", Range="bytes=10-19")
    assert part["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert (part["Body"].read(), part["ContentRange"], part["ContentLength"]) == (
        data[10:20],
        "bytes 10-19/1024",
        10,
    )
    assert s3.get_object(Bucket="bucket", Key="k", Range="bytes=1000-")["Body"].read() == data[1000:]
    assert s3.get_object(Bucket="bucket", Key="k", Range="bytes=-4")["Body"].read() == data[-4:]
    assert (
        s3.get_object(Bucket="bucket", Key="k", Range="bytes=1000-5000")["ContentRange"]
        == "bytes 1000-1023/1024"
    )
    unsatisfiable = error_of(s3.get_object, Bucket="bucket", Key="k", Range="bytes=2000-")
    assert (unsatisfiable["Error"]["Code"], unsatisfiable["ResponseMetadata"]["HTTPStatusCode"]) == (
        "InvalidRange",
        416,
    )
    assert s3.get_object(Bucket="bucket", Key="k", IfMatch=etag)["Body"].read() == data
    assert (
        error_of(s3.get_object, Bucket="bucket", Key="k", IfMatch='"other"')["Error"]["Code"]
        == "PreconditionFailed"
    )
    assert error_of(s3.get_object, Bucket="bucket", Key="k", IfNoneMatch=etag)["Error"]["Code"] == "304"
    assert error_of(s3.head_object, Bucket="bucket", Key="k", IfMatch='"other"')["Error"]["Code"] == "412"
    s3.put_object(Bucket="bucket", Key="empty", Body=b"")
    assert (
        error_of(s3.get_object, Bucket="bucket", Key="empty", Range="bytes=0-10")["Error"]["Code"]
        == "InvalidRange"
    )


def test_content_md5_is_checked(s3):
    good = base64.b64encode(hashlib.md5(b"data").digest()).decode()
    s3.put_object(Bucket="bucket", Key="k", Body=b"data", ContentMD5=good)
    bad = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    assert (
        error_of(s3.put_object, Bucket="bucket", Key="k2", Body=b"data", ContentMD5=bad)["Error"]["Code"]
        == "BadDigest"
    )
    assert error_of(s3.head_object, Bucket="bucket", Key="k2")["Error"]["Code"] == "404"


def test_copy_and_delete_objects(s3):
    s3.put_object(Bucket="bucket", Key="src", Body=b"payload", ContentType="text/plain", Metadata={"m": "1"})
    copied = s3.copy_object(Bucket="bucket", Key="dst", CopySource={"Bucket": "bucket", "Key": "src"})
    assert copied["CopyObjectResult"]["ETag"] == f'"{md5(b"payload")}"'
    head = s3.head_object(Bucket="bucket", Key="dst")
    assert (head["ContentType"], head["Metadata"]) == ("text/plain", {"m": "1"})
    s3.copy_object(
        Bucket="bucket",
        Key="dst",
        CopySource="bucket/src",
        MetadataDirective="REPLACE",
        Metadata={"n": "2"},
        ContentType="application/octet-stream",
    )
    assert s3.head_object(Bucket="bucket", Key="dst")["Metadata"] == {"n": "2"}
    assert (
        error_of(s3.copy_object, Bucket="bucket", Key="src", CopySource="bucket/src")["Error"]["Code"]
        == "InvalidRequest"
    )
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.copy_object(Bucket="bucket", Key="x", CopySource="bucket/missing")
    answer = s3.delete_objects(
        Bucket="bucket", Delete={"Objects": [{"Key": "src"}, {"Key": "dst"}, {"Key": "never\r\nexisted"}]}
    )
    assert sorted(d["Key"] for d in answer["Deleted"]) == ["dst", "never\r\nexisted", "src"]
    assert "Deleted" not in s3.delete_objects(
        Bucket="bucket", Delete={"Objects": [{"Key": "a"}], "Quiet": True}
    )
    assert s3.list_objects_v2(Bucket="bucket")["KeyCount"] == 0


@pytest.mark.parametrize(
    "key",
    [
        "../../etc/passwd",
        "/abs",
        "a/../../b",
        ".",
        "..",
        "a\x00b",
        "%2e%2e/x",
        "sp ace+plus&amp<tag>",
        "ünï/cødé",
        "tab\tnew\nline\r",
    ],
)
def test_keys_that_look_like_paths_are_just_keys(services, s3, tmp_path, key):
    s3.put_object(Bucket="bucket", Key=key, Body=b"content")
    assert s3.get_object(Bucket="bucket", Key=key)["Body"].read() == b"content"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="bucket")["Contents"]] == [key]
    assert [o["Key"] for o in s3.list_objects(Bucket="bucket")["Contents"]] == [key]
    root = (tmp_path / "s3").resolve()
    for dirpath, _, names in os.walk(tmp_path):
        for name in names:
            assert (os.path.realpath(os.path.join(dirpath, name))).startswith(str(root))
    assert not os.path.exists("/etc/passwd") or open("/etc/passwd", "rb").read() != b"content"


# -- listings ------------------------------------------------------------------------------------


def test_list_objects_v2_paginator_with_prefix_and_delimiter(s3):
    keys = ["logs/2026/a", "logs/2026/b", "logs/2027/c", "logs/top", "model/model.tar.gz", "x+y z%"]
    for key in keys:
        s3.put_object(Bucket="bucket", Key=key, Body=key.encode())
    paginator = s3.get_paginator("list_objects_v2")
    pages = list(paginator.paginate(Bucket="bucket", PaginationConfig={"PageSize": 2}))
    assert [len(page.get("Contents", [])) for page in pages] == [2, 2, 2]
    assert [o["Key"] for page in pages for o in page["Contents"]] == keys
    assert pages[0]["IsTruncated"] and not pages[-1]["IsTruncated"]
    grouped = list(
        paginator.paginate(Bucket="bucket", Prefix="logs/", Delimiter="/", PaginationConfig={"PageSize": 1})
    )
    assert [p["Prefix"] for page in grouped for p in page.get("CommonPrefixes", [])] == [
        "logs/2026/",
        "logs/2027/",
    ]
    assert [o["Key"] for page in grouped for o in page.get("Contents", [])] == ["logs/top"]
    after = s3.list_objects_v2(Bucket="bucket", StartAfter="logs/top")
    assert [o["Key"] for o in after["Contents"]] == ["model/model.tar.gz", "x+y z%"]
    assert after["StartAfter"] == "logs/top"
    owned = s3.list_objects_v2(Bucket="bucket", Prefix="model/", FetchOwner=True)["Contents"][0]
    assert owned["Owner"]["ID"] and owned["Size"] == len("model/model.tar.gz")
    bad = error_of(s3.list_objects_v2, Bucket="bucket", ContinuationToken="not-a-token")
    assert bad["Error"]["Code"] == "InvalidArgument"


def test_list_objects_v1_markers(s3):
    for key in ["a/1", "a/2", "b/1", "c"]:
        s3.put_object(Bucket="bucket", Key=key, Body=b"")
    first = s3.list_objects(Bucket="bucket", Delimiter="/", MaxKeys=2)
    assert [p["Prefix"] for p in first["CommonPrefixes"]] == ["a/", "b/"]
    assert first["IsTruncated"] and first["NextMarker"] == "b/"
    rest = s3.list_objects(Bucket="bucket", Delimiter="/", Marker=first["NextMarker"])
    assert [o["Key"] for o in rest["Contents"]] == ["c"] and not rest["IsTruncated"]
    pages = list(s3.get_paginator("list_objects").paginate(Bucket="bucket", PaginationConfig={"PageSize": 1}))
    assert [o["Key"] for page in pages for o in page["Contents"]] == ["a/1", "a/2", "b/1", "c"]


def test_resource_collections(services, s3):
    for key in ["p/1", "p/2", "q/3"]:
        s3.put_object(Bucket="bucket", Key=key, Body=b"x")
    bucket = services.session().resource("s3").Bucket("bucket")
    assert [o.key for o in bucket.objects.filter(Prefix="p/")] == ["p/1", "p/2"]
    bucket.objects.filter(Prefix="p/").delete()
    assert [o.key for o in bucket.objects.all()] == ["q/3"]


# -- transfers ------------------------------------------------------------------------------------


def test_upload_file_multipart_and_download_file(services, s3, tmp_path):
    source = random_file(tmp_path / "model.tar.gz", 2 * MIN_PART_SIZE + 123)
    config = TransferConfig(multipart_threshold=MIN_PART_SIZE, multipart_chunksize=MIN_PART_SIZE)
    resource = services.session().resource("s3")
    resource.Object("bucket", "out/model.tar.gz").upload_file(str(source), Config=config)
    head = s3.head_object(Bucket="bucket", Key="out/model.tar.gz")
    assert head["ContentLength"] == source.stat().st_size
    assert head["ETag"].endswith('-3"')
    target = tmp_path / "downloaded"
    resource.Object("bucket", "out/model.tar.gz").download_file(str(target), Config=config)
    assert target.read_bytes() == source.read_bytes()
    assert os.listdir(services.objects.root / ".uploads") == []


def test_upload_file_of_20_mb_with_default_settings(services, tmp_path):
    source = random_file(tmp_path / "big.bin", 20 * MB)
    client = services.client("s3")
    client.create_bucket(Bucket="bucket")
    client.upload_file(str(source), "bucket", "data/big.bin")
    assert client.head_object(Bucket="bucket", Key="data/big.bin")["ContentLength"] == 20 * MB
    target = tmp_path / "copy.bin"
    client.download_file("bucket", "data/big.bin", str(target))
    assert hashlib.md5(target.read_bytes()).digest() == hashlib.md5(source.read_bytes()).digest()


def test_abort_and_unknown_uploads(s3):
    upload = s3.create_multipart_upload(Bucket="bucket", Key="k")
    assert upload["Bucket"] == "bucket" and upload["Key"] == "k"
    s3.upload_part(Bucket="bucket", Key="k", UploadId=upload["UploadId"], PartNumber=1, Body=b"x")
    wrong_key = error_of(
        s3.upload_part, Bucket="bucket", Key="other", UploadId=upload["UploadId"], PartNumber=1, Body=b"x"
    )
    assert wrong_key["Error"]["Code"] == "NoSuchUpload"
    small = error_of(
        s3.complete_multipart_upload,
        Bucket="bucket",
        Key="k",
        UploadId=upload["UploadId"],
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"wrong"'}]},
    )
    assert small["Error"]["Code"] == "InvalidPart"
    s3.abort_multipart_upload(Bucket="bucket", Key="k", UploadId=upload["UploadId"])
    with pytest.raises(s3.exceptions.NoSuchUpload):
        s3.abort_multipart_upload(Bucket="bucket", Key="k", UploadId=upload["UploadId"])


# -- errors ------------------------------------------------------------------------------------------


def test_unimplemented_operations_answer_501_naming_them(s3):
    answer = error_of(s3.get_bucket_policy, Bucket="bucket")
    assert answer["Error"]["Code"] == "NotImplemented"
    assert "GetBucketPolicy" in answer["Error"]["Message"]
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 501


def test_a_bug_answers_500_internal_failure(services, s3, monkeypatch):
    def broken(*_):
        raise RuntimeError("boom")

    monkeypatch.setattr(services.objects, "list_objects", broken)
    answer = error_of(s3.list_objects_v2, Bucket="bucket")
    assert (answer["Error"]["Code"], answer["ResponseMetadata"]["HTTPStatusCode"]) == ("InternalFailure", 500)
    monkeypatch.setattr(services.objects, "head_object", broken)
    head = error_of(s3.head_object, Bucket="bucket", Key="k")
    assert head["Error"]["Code"] == "500"


def test_a_disabled_hook_is_silent(services):
    client = boto3.session.Session(
        aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1"
    ).client("s3", endpoint_url="http://127.0.0.1:9")
    from sagemaker_plans_local.transport.service_hook import ServiceHook

    hook = ServiceHook("s3", services.apis["s3"], enabled=lambda: False)
    hook.attach(client)
    assert hook(client.meta.service_model.operation_model("ListBuckets"), {}, {}) is None
    with pytest.raises(ValueError):
        ServiceHook("sts", services.apis["sts"]).attach(client)


# -- the SageMaker SDK's own S3 calls -------------------------------------------------------------


def test_sagemaker_session_default_bucket_upload_and_download(services, tmp_path):
    from sagemaker_plans_local.sdk.major import session_module

    Session = session_module().Session  # the installed major's session class

    boto_session = services.session()
    session = Session(
        boto_session=boto_session,
        sagemaker_client=object(),
        sagemaker_runtime_client=object(),
        sagemaker_featurestore_runtime_client=object(),
        sagemaker_metrics_client=object(),
    )
    bucket = session.default_bucket()
    assert bucket == "sagemaker-us-east-1-123456789012"
    assert session.account_id() == ACCOUNT
    source_dir = tmp_path / "data"
    (source_dir / "sub").mkdir(parents=True)
    (source_dir / "train.csv").write_text("1,2\n")
    (source_dir / "sub" / "more.csv").write_text("3,4\n")
    uri = session.upload_data(str(source_dir), bucket=bucket, key_prefix="inputs")
    assert uri == f"s3://{bucket}/inputs"
    assert sorted(session.list_s3_files(bucket, "inputs/")) == ["inputs/sub/more.csv", "inputs/train.csv"]
    assert session.read_s3_file(bucket, "inputs/train.csv") == "1,2\n"
    target = tmp_path / "back"
    session.download_data(str(target), bucket, key_prefix="inputs/")
    assert (target / "sub" / "more.csv").read_text() == "3,4\n"
    # a second session finds the bucket instead of creating it
    again = Session(
        boto_session=services.session(),
        sagemaker_client=object(),
        sagemaker_runtime_client=object(),
        sagemaker_featurestore_runtime_client=object(),
        sagemaker_metrics_client=object(),
    )
    assert again.default_bucket() == bucket


# -- the XML codec against botocore's parsers ---------------------------------------------------------

_XML_TEXT = st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\t\n\r")


def _xml_safe(shape, depth=0):
    """for_shape, with strings XML 1.0 can carry and millisecond timestamps."""
    kind = shape.type_name
    if kind == "string":
        return st.sampled_from(shape.enum) if shape.enum else st.text(_XML_TEXT, max_size=12)
    if kind == "timestamp":
        return st.datetimes(
            min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)
        ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
    if kind in ("float", "double"):
        return st.floats(allow_nan=False, allow_infinity=False, width=64)
    if kind == "structure":
        return st.fixed_dictionaries(
            {},
            optional={
                n: st.deferred(lambda m=m: _xml_safe(m, depth + 1))
                for n, m in shape.members.items()
                if depth < 4 and m.serialization.get("location") is None
            },
        )
    if kind == "list":  # an empty flattened list has no XML form: it is absent
        low = 1 if shape.serialization.get("flattened") else 0
        return st.lists(_xml_safe(shape.member, depth + 1), min_size=low, max_size=3)
    if kind == "map":
        return st.dictionaries(
            st.text(_XML_TEXT, min_size=1, max_size=5), _xml_safe(shape.value, depth + 1), max_size=2
        )
    return for_shape(shape, depth)


def _comparable(value):
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k != "ResponseMetadata"}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc)
    if isinstance(value, str):
        return value.replace("\r\n", "\n")
    return value


_BODY_OPERATIONS = [
    ("s3", "ListObjectsV2"),
    ("s3", "ListObjects"),
    ("s3", "ListBuckets"),
    ("s3", "DeleteObjects"),
    ("s3", "CompleteMultipartUpload"),
    ("s3", "CreateMultipartUpload"),
    ("iam", "GetRole"),
    ("sts", "GetCallerIdentity"),
]


@pytest.mark.parametrize("service, operation_name", _BODY_OPERATIONS)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=st.data())
def test_xml_answers_parse_back_to_the_values_written(service, operation_name, data):
    model = service_model(service).operation_model(operation_name)
    shape = model.output_shape
    value = data.draw(_xml_safe(shape))
    if service == "s3":
        headers, body = xml_wire.rest_response(
            shape, value, "Root", "http://s3.amazonaws.com/doc/2006-03-01/"
        )
        response = {"status_code": 200, "headers": headers, "body": body}
    else:
        body = xml_wire.query_response(model, value, "request-id", "https://example.com/doc/")
        response = {"status_code": 200, "headers": {}, "body": body}
    parsed = create_parser(model.service_model.metadata["protocol"]).parse(response, shape)
    assert _comparable(parsed) == _comparable(value)


def test_an_answer_botocore_cannot_parse_becomes_internal_failure(services, s3, monkeypatch):
    api = services.apis["s3"]
    monkeypatch.setattr(
        api, "handle", lambda region, model, request: (200, {"Content-Type": "application/xml"}, b"<not-xml")
    )
    answer = error_of(s3.list_objects_v2, Bucket="bucket")
    assert (answer["Error"]["Code"], answer["ResponseMetadata"]["HTTPStatusCode"]) == ("InternalFailure", 500)


def test_handle_answers_an_unknown_operation_name(services):
    status, headers, body = services.apis["s3"].handle("us-east-1", "NoSuchOperation", {})
    assert status == 501 and b"NoSuchOperation" in body
