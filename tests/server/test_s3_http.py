"""S3 over real HTTP: a boto3 client with ``endpoint_url`` against the ``sagemaker_server`` fixture."""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import urllib.error
import urllib.request
import zlib
from urllib.parse import urlsplit

import boto3
import pytest
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

MB = 1024 * 1024


def client(url: str, addressing: str = "path", signature: str | None = None):
    return boto3.client(
        "s3",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(
            s3={"addressing_style": addressing}, retries={"max_attempts": 1}, signature_version=signature
        ),
    )


@pytest.fixture
def s3(sagemaker_server):
    found = client(sagemaker_server.url)
    found.create_bucket(Bucket="bucket")
    return found


def virtual_client(url: str):
    """A virtual-hosted style client: ``Host: <bucket>.localhost:PORT``, sent to the server's address.

    (``*.localhost`` names need not resolve on every machine, so the request goes
    to the server's own address with the virtual host in its ``Host`` header.)
    """
    server = urlsplit(url)
    found = client(f"http://localhost:{server.port}", "virtual")

    def send_to_server(request, **_):
        sent = urlsplit(request.url)
        request.headers["Host"] = sent.netloc
        request.url = sent._replace(netloc=server.netloc).geturl()

    found.meta.events.register_last("before-send.s3", send_to_server)
    return found


def test_put_and_get_stream_a_large_body(s3, tmp_path):
    data = os.urandom(3 * MB + 17)
    source = tmp_path / "data.bin"
    source.write_bytes(data)
    with source.open("rb") as body:
        s3.put_object(Bucket="bucket", Key="data.bin", Body=body)
    got = s3.get_object(Bucket="bucket", Key="data.bin")
    assert got["ContentLength"] == len(data)
    assert b"".join(got["Body"].iter_chunks(64 * 1024)) == data
    ranged = s3.get_object(Bucket="bucket", Key="data.bin", Range="bytes=1000-1999")
    assert ranged["ContentRange"] == f"bytes 1000-1999/{len(data)}"
    assert ranged["Body"].read() == data[1000:2000]


def test_list_with_prefix_delimiter_and_pages(s3):
    for key in ["a/1", "a/2", "a/b/3", "c"]:
        s3.put_object(Bucket="bucket", Key=key, Body=key.encode())
    listed = s3.list_objects_v2(Bucket="bucket", Prefix="a/", Delimiter="/")
    assert [o["Key"] for o in listed["Contents"]] == ["a/1", "a/2"]
    assert listed["CommonPrefixes"] == [{"Prefix": "a/b/"}]
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket="bucket", PaginationConfig={"PageSize": 1})
    assert [o["Key"] for page in pages for o in page.get("Contents", [])] == ["a/1", "a/2", "a/b/3", "c"]


def test_multipart_transfer_up_and_down(s3, tmp_path):
    data = os.urandom(11 * MB)
    (tmp_path / "up.bin").write_bytes(data)
    config = TransferConfig(multipart_threshold=5 * MB, multipart_chunksize=5 * MB)
    s3.upload_file(str(tmp_path / "up.bin"), "bucket", "big.bin", Config=config)
    head = s3.head_object(Bucket="bucket", Key="big.bin")
    assert head["ContentLength"] == len(data) and head["ETag"].endswith('-3"')
    s3.download_file("bucket", "big.bin", str(tmp_path / "down.bin"), Config=config)
    assert hashlib.sha256((tmp_path / "down.bin").read_bytes()).digest() == hashlib.sha256(data).digest()


def test_head_object_reports_the_object_length(s3):
    s3.put_object(Bucket="bucket", Key="k", Body=b"hello")
    assert s3.head_object(Bucket="bucket", Key="k")["ContentLength"] == 5


def test_virtual_hosted_style_reaches_the_same_bucket(sagemaker_server, s3):
    virtual = virtual_client(sagemaker_server.url)
    virtual.put_object(Bucket="bucket", Key="dir/v key+%.txt", Body=b"virtual")
    assert s3.get_object(Bucket="bucket", Key="dir/v key+%.txt")["Body"].read() == b"virtual"
    assert [o["Key"] for o in virtual.list_objects_v2(Bucket="bucket")["Contents"]] == ["dir/v key+%.txt"]
    virtual.delete_object(Bucket="bucket", Key="dir/v key+%.txt")
    assert s3.list_objects_v2(Bucket="bucket")["KeyCount"] == 0


@pytest.mark.parametrize("signature", ["s3v4", None], ids=["sigv4", "boto3-default-sigv2"])
def test_presigned_get_url_works_with_urllib(sagemaker_server, s3, signature):
    s3.put_object(Bucket="bucket", Key="shared/report.txt", Body=b"presigned")
    url = client(sagemaker_server.url, signature=signature).generate_presigned_url(
        "get_object", Params={"Bucket": "bucket", "Key": "shared/report.txt"}, ExpiresIn=300
    )
    with urllib.request.urlopen(url) as answer:
        assert answer.read() == b"presigned"


def test_errors_are_s3_errors_over_http(s3):
    with pytest.raises(ClientError) as caught:
        s3.get_object(Bucket="bucket", Key="missing")
    assert caught.value.response["Error"]["Code"] == "NoSuchKey"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    with pytest.raises(ClientError) as caught:
        s3.head_object(Bucket="nowhere", Key="k")
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_a_method_no_s3_operation_has_is_a_405_error_document(sagemaker_server):
    credential = "testing/20260101/us-east-1/s3/aws4_request"
    request = urllib.request.Request(
        f"{sagemaker_server.url}/bucket",
        method="PATCH",
        headers={
            "Authorization": f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=host, Signature=0"
        },
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request)
    assert caught.value.code == 405
    body = caught.value.read()
    assert b"<Code>MethodNotAllowed</Code>" in body


def test_an_aws_chunked_put_over_http_stores_the_payload(sagemaker_server, s3):
    payload = os.urandom(70_000)
    framed = b"".join(
        b"%x;chunk-signature=%s\r\n%s\r\n" % (len(part), b"0" * 64, part)
        for part in (payload[:65536], payload[65536:])
    )
    crc32 = base64.b64encode(zlib.crc32(payload).to_bytes(4, "big"))
    framed += b"0\r\nx-amz-checksum-crc32:%s\r\n\r\n" % crc32
    credential = "testing/20260101/us-east-1/s3/aws4_request"
    server = urlsplit(sagemaker_server.url)
    connection = http.client.HTTPConnection(server.hostname, server.port, timeout=30)
    connection.request(
        "PUT",
        "/bucket/chunked.bin",
        body=framed,
        headers={
            "Authorization": f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=host, Signature=0",
            "Content-Encoding": "aws-chunked",
            "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
            "x-amz-decoded-content-length": str(len(payload)),
            "x-amz-trailer": "x-amz-checksum-crc32",
        },
    )
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 200
    assert s3.get_object(Bucket="bucket", Key="chunked.bin")["Body"].read() == payload


@pytest.mark.parametrize(
    "key", ["a b+c", "100%/done", "ünïcødé/日本語.txt", "what?#&=", "trailing/", "//leading", "tab\tkey"]
)
def test_keys_with_odd_characters_over_http(s3, key):
    s3.put_object(Bucket="bucket", Key=key, Body=key.encode("utf-8"))
    assert s3.get_object(Bucket="bucket", Key=key)["Body"].read() == key.encode("utf-8")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="bucket")["Contents"]] == [key]
