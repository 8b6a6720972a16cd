"""S3 routing in isolation: requests as botocore sends them, routed to the operation and answered.

A boto3 client's ``before-send`` hook takes the prepared HTTP request, reads it
back as a WSGI server would (the path percent-decoded, the query parsed, the
host from the URL), routes it with ``s3_routes.route`` and answers it from the
S3 service of a :class:`LocalBackend`; botocore parses the answer as it would
AWS's. So each test checks the operation found and that S3 answers it.
"""

from __future__ import annotations

import base64
import zlib
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local import LocalBackend
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.server.s3_routes import S3RouteError, host_bucket, route
from sagemaker_plans_local.transport.service_hook import RawBody

REGION = "us-east-1"
MB = 1024 * 1024


class Wire:
    """A backend's S3 service behind ``route``: what each request was routed to."""

    def __init__(self) -> None:
        self.backend = LocalBackend()
        self.service = self.backend.service("s3")
        self.routed: list[tuple[str, str, dict]] = []

    def client(self, addressing: str = "path"):
        endpoint = "http://127.0.0.1:9" if addressing == "path" else "http://localhost:9"
        client = boto3.client(
            "s3",
            region_name=REGION,
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=Config(s3={"addressing_style": addressing}, retries={"max_attempts": 1}),
        )
        client.meta.events.register("before-send.s3", self.send)
        return client

    def send(self, request, event_name: str, **_: Any) -> AWSResponse:
        url = urlsplit(request.url)
        body = request.body
        name, request_dict = route(
            request.method,
            unquote(url.path),
            parse_qs(url.query, keep_blank_values=True),
            {k: v.decode("utf-8") if isinstance(v, bytes) else v for k, v in request.headers.items()},
            url.netloc,
            body if body is not None else b"",
        )
        self.routed.append((event_name.rsplit(".", 1)[-1], name, request_dict))
        status, headers, answer = self.service.handle(REGION, name, request_dict)
        data = answer.read() if hasattr(answer, "read") else bytes(answer)
        return AWSResponse(request.url, status, headers, RawBody(data))

    def operations(self) -> list[str]:
        assert all(called == routed for called, routed, _ in self.routed)
        return [routed for _, routed, _ in self.routed]


@pytest.fixture
def wire():
    found = Wire()
    yield found
    found.backend.close()


@pytest.mark.parametrize("addressing", ["path", "virtual"])
def test_every_common_operation_is_routed_and_answered(wire, addressing):
    s3 = wire.client(addressing)
    s3.create_bucket(Bucket="bucket")
    s3.head_bucket(Bucket="bucket")
    assert s3.get_bucket_location(Bucket="bucket")["LocationConstraint"] is None
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["bucket"]
    s3.put_object(Bucket="bucket", Key="dir/a.txt", Body=b"hello", Metadata={"k": "v"})
    got = s3.get_object(Bucket="bucket", Key="dir/a.txt")
    assert got["Body"].read() == b"hello" and got["Metadata"] == {"k": "v"}
    assert s3.get_object(Bucket="bucket", Key="dir/a.txt", Range="bytes=1-3")["Body"].read() == b"ell"
    assert s3.head_object(Bucket="bucket", Key="dir/a.txt")["ContentLength"] == 5
    s3.copy_object(Bucket="bucket", Key="b.txt", CopySource={"Bucket": "bucket", "Key": "dir/a.txt"})
    listed = s3.list_objects_v2(Bucket="bucket", Prefix="dir/")
    assert [o["Key"] for o in listed["Contents"]] == ["dir/a.txt"]
    assert [o["Key"] for o in s3.list_objects(Bucket="bucket")["Contents"]] == ["b.txt", "dir/a.txt"]
    s3.delete_object(Bucket="bucket", Key="b.txt")
    deleted = s3.delete_objects(Bucket="bucket", Delete={"Objects": [{"Key": "dir/a.txt"}]})
    assert [d["Key"] for d in deleted["Deleted"]] == ["dir/a.txt"]
    assert s3.list_objects_v2(Bucket="bucket")["KeyCount"] == 0
    assert wire.operations() == [
        "CreateBucket",
        "HeadBucket",
        "GetBucketLocation",
        "ListBuckets",
        "PutObject",
        "GetObject",
        "GetObject",
        "HeadObject",
        "CopyObject",
        "ListObjectsV2",
        "ListObjects",
        "DeleteObject",
        "DeleteObjects",
        "ListObjectsV2",
    ]


@pytest.mark.parametrize("addressing", ["path", "virtual"])
def test_multipart_upload_is_routed_part_by_part(wire, addressing):
    s3 = wire.client(addressing)
    s3.create_bucket(Bucket="bucket")
    upload = s3.create_multipart_upload(Bucket="bucket", Key="big")["UploadId"]
    parts = []
    for number, data in enumerate([b"a" * (5 * MB), b"b" * 10], start=1):
        etag = s3.upload_part(Bucket="bucket", Key="big", UploadId=upload, PartNumber=number, Body=data)
        parts.append({"PartNumber": number, "ETag": etag["ETag"]})
    s3.complete_multipart_upload(
        Bucket="bucket", Key="big", UploadId=upload, MultipartUpload={"Parts": parts}
    )
    assert s3.head_object(Bucket="bucket", Key="big")["ContentLength"] == 5 * MB + 10
    other = s3.create_multipart_upload(Bucket="bucket", Key="gone")["UploadId"]
    s3.abort_multipart_upload(Bucket="bucket", Key="gone", UploadId=other)
    assert wire.operations() == [
        "CreateBucket",
        "CreateMultipartUpload",
        "UploadPart",
        "UploadPart",
        "CompleteMultipartUpload",
        "HeadObject",
        "CreateMultipartUpload",
        "AbortMultipartUpload",
    ]


def test_errors_of_routed_requests_are_s3_errors(wire):
    s3 = wire.client()
    with pytest.raises(ClientError) as caught:
        s3.get_object(Bucket="nowhere", Key="k")
    assert caught.value.response["Error"]["Code"] == "NoSuchBucket"
    assert wire.operations() == ["GetObject"]


ODD_KEYS = st.text(
    st.one_of(
        st.sampled_from(list(" +%/?#&=;:@$,!'()*[]{}~\\^`|<>\"")),
        st.characters(blacklist_categories=("Cs", "Cc")),
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(key=ODD_KEYS, addressing=st.sampled_from(["path", "virtual"]))
def test_keys_with_odd_characters_reach_the_same_object(wire, key, addressing):
    s3 = wire.client(addressing)
    s3.create_bucket(Bucket="odd")
    s3.put_object(Bucket="odd", Key=key, Body=key.encode("utf-8"))
    assert s3.get_object(Bucket="odd", Key=key)["Body"].read() == key.encode("utf-8")
    assert key in [o["Key"] for o in s3.list_objects_v2(Bucket="odd")["Contents"]]
    s3.delete_object(Bucket="odd", Key=key)
    assert wire.operations()[-4:] == ["PutObject", "GetObject", "ListObjectsV2", "DeleteObject"]


def _minimal_request(name: str) -> tuple[str, str, dict, dict]:
    """The method, path, query and headers of the smallest request of ``name`` its model allows."""
    operation = service_model("s3").operation_model(name)
    template, _, literal = operation.http["requestUri"].partition("?")
    path = template.replace("{Bucket}", "bucket").replace("{Key+}", "some/key")
    query = {key: [value] for key, _, value in (p.partition("=") for p in literal.split("&") if p)}
    headers = {}
    shape = operation.input_shape
    for member in shape.required_members if shape is not None else ():
        serialization = shape.members[member].serialization
        wire_name = serialization.get("name", member)
        if serialization.get("location") == "querystring":
            query[wire_name] = ["1"]
        elif serialization.get("location") == "header":
            headers[wire_name] = "x"
    return operation.http["method"], path, query, headers


#: Operations with the same HTTP shape as another, and the one each request goes to.
SAME_SHAPE = {
    "GetBucketLifecycle": "GetBucketLifecycleConfiguration",
    "PutBucketLifecycle": "PutBucketLifecycleConfiguration",
    "GetBucketNotification": "GetBucketNotificationConfiguration",
    "PutBucketNotification": "PutBucketNotificationConfiguration",
    "ListDirectoryBuckets": "ListBuckets",
}


@pytest.mark.parametrize("name", service_model("s3").operation_names)
def test_every_model_operation_routes_back_to_itself(name):
    method, path, query, headers = _minimal_request(name)
    found, request = route(method, path, query, headers, "127.0.0.1:4566")
    assert found == SAME_SHAPE.get(name, name)
    assert request["method"] == method and request["url_path"].startswith(path.split("{")[0])


@pytest.mark.parametrize(
    ("host", "bucket"),
    [
        ("127.0.0.1:4566", None),
        ("[::1]:4566", None),
        ("localhost:4566", None),
        ("s3.localhost:4566", None),
        ("my-bucket.localhost:4566", "my-bucket"),
        ("my.dotted.bucket.s3.localhost:4566", "my.dotted.bucket"),
        ("b.s3.amazonaws.com", "b"),
        ("b.s3.eu-west-1.amazonaws.com", "b"),
        ("b.s3-eu-west-1.amazonaws.com", "b"),
        ("s3.eu-west-1.amazonaws.com", None),
        ("server.example:8080", None),
    ],
)
def test_the_bucket_comes_from_a_virtual_host(host, bucket):
    assert host_bucket(host) == bucket


def test_a_virtual_host_puts_the_bucket_in_front_of_the_path():
    name, request = route("GET", "/a b/c", {}, {}, "bkt.s3.localhost:1")
    assert name == "GetObject"
    assert request["url_path"] == request["auth_path"] == "/bkt/a%20b/c"


def test_query_from_a_multidict_and_lists_takes_the_first_value():
    werkzeug = pytest.importorskip("werkzeug.datastructures")
    query = werkzeug.MultiDict([("list-type", "2"), ("prefix", "a"), ("prefix", "b")])
    assert route("GET", "/bucket", query, {}, "127.0.0.1")[1]["query_string"] == {
        "list-type": "2",
        "prefix": "a",
    }


@pytest.mark.parametrize(("method", "path"), [("PATCH", "/bucket"), ("POST", "/"), ("DELETE", "/")])
def test_no_operation_is_an_s3_route_error(method, path):
    with pytest.raises(S3RouteError) as caught:
        route(method, path, {}, {}, "127.0.0.1")
    assert (caught.value.code, caught.value.status) == ("MethodNotAllowed", 405)


QUERY_KEYS = st.sampled_from(
    [
        "uploads",
        "uploadId",
        "partNumber",
        "list-type",
        "delete",
        "location",
        "tagging",
        "versionId",
        "prefix",
        "x",
    ]
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(["GET", "PUT", "POST", "DELETE", "HEAD", "PATCH", "OPTIONS"]),
    path=st.text(min_size=0, max_size=30).map(lambda text: "/" + text),
    query=st.dictionaries(QUERY_KEYS, st.lists(st.text(max_size=8), max_size=2), max_size=4),
    body=st.binary(max_size=64),
)
def test_any_request_is_a_route_error_an_s3_answer_or_not_implemented(wire, method, path, query, body):
    try:
        name, request = route(method, path, query, {}, "127.0.0.1:1", body)
    except S3RouteError as error:
        assert 400 <= error.status < 500
        return
    answer = wire.service.handle(REGION, name, request)
    assert answer.status < 500 or (answer.status, name in wire.service.operations) == (501, False)


def aws_chunked(data: bytes, sizes: list[int], trailer: bytes | None = None) -> bytes:
    """``data`` framed as SDKs send it with ``Content-Encoding: aws-chunked`` (chunks of ``sizes``).

    The trailer is ``data``'s CRC32 unless given.
    """
    if trailer is None:
        trailer = b"x-amz-checksum-crc32:%s\r\n" % crc32_base64(data)
    out, start = [], 0
    for size in sizes:
        chunk = data[start : start + size]
        start += len(chunk)
        if chunk:
            out.append(b"%x;chunk-signature=%s\r\n%s\r\n" % (len(chunk), b"0" * 64, chunk))
    out.append(b"0\r\n" + trailer + b"\r\n")
    return b"".join(out)


def crc32_base64(data: bytes) -> bytes:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big"))


def chunked_headers(data: bytes) -> dict[str, str]:
    return {
        "Content-Encoding": "aws-chunked",
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "x-amz-decoded-content-length": str(len(data)),
        "x-amz-trailer": "x-amz-checksum-crc32",
    }


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.binary(max_size=3000), sizes=st.lists(st.integers(1, 1200), min_size=1, max_size=8))
def test_an_aws_chunked_body_is_stored_decoded(wire, data, sizes):
    sizes.append(len(data))  # whatever is left goes in a last chunk
    s3 = wire.client()
    s3.create_bucket(Bucket="chunked")
    name, request = route(
        "PUT", "/chunked/k", {}, chunked_headers(data), "127.0.0.1:1", aws_chunked(data, sizes)
    )
    assert name == "PutObject" and request["headers"]["Content-Length"] == str(len(data))
    assert "Content-Encoding" not in request["headers"]
    assert wire.service.handle(REGION, name, request).status == 200
    assert s3.get_object(Bucket="chunked", Key="k")["Body"].read() == data


@pytest.mark.parametrize(
    "body",
    [b"zz\r\nabc\r\n0\r\n\r\n", b"5\r\nabc", b"3\r\nabcXY0\r\n\r\n", b""],
    ids=["size", "short", "crlf", "empty"],
)
def test_a_malformed_aws_chunked_body_is_a_400(wire, body):
    wire.client().create_bucket(Bucket="chunked")
    name, request = route("PUT", "/chunked/k", {}, chunked_headers(b"abc"), "127.0.0.1:1", body)
    answer = wire.service.handle(REGION, name, request)
    assert answer.status == 400 and b"<Code>IncompleteBody</Code>" in answer.body
