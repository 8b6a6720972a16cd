"""S3 request bodies bounded by AWS's limits per operation, and client errors that were 500s.

Most requests go through the WSGI app in process (werkzeug's test client, no socket); a body
with no ``Content-Length`` is a stream read as a chunked upload would be.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ElementTree
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client, EnvironBuilder, run_wsgi_app

from sagemaker_plans_local.protocol import xml_wire
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.server.accounts import Accounts
from sagemaker_plans_local.server.app import ServerApp
from sagemaker_plans_local.services.s3 import rules

AUTH = {
    "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
    "SignedHeaders=host, Signature=0"
}
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
MIB = 1024 * 1024


class Counting(io.RawIOBase):
    """An endless (or ``size``-byte) body: ``head``, then ``unit`` over and over; counts what is read."""

    def __init__(self, head: bytes, unit: bytes, size: int | None = None) -> None:
        self.data, self.unit, self.size, self.sent = head, unit, size, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        want = len(buffer) if self.size is None else min(len(buffer), self.size - self.sent)
        while len(self.data) < want:
            self.data += self.unit * (want // len(self.unit) + 1)
        chunk, self.data = self.data[:want], self.data[want:]
        buffer[: len(chunk)] = chunk
        self.sent += len(chunk)
        return len(chunk)


@pytest.fixture(scope="module")
def app():
    accounts = Accounts(START, None)
    found = ServerApp(accounts)
    client = Client(found)
    assert client.put("/bucket", headers=AUTH).status_code == 200
    yield found
    accounts.close()


def send(app, method, path, data=b"", headers=None, query=None, stream=None, length=None):
    """(status, error code or None, body) of one request.

    ``stream``: a body of unknown length (as a chunked upload arrives); ``length``: the
    ``Content-Length`` claimed, whatever the body holds.
    """
    builder = EnvironBuilder(path=path, method=method, data=data, headers={**AUTH, **(headers or {})})
    builder.query_string = query if isinstance(query, str) else builder.query_string
    if isinstance(query, dict):
        builder.args = query
    environ = builder.get_environ()
    if stream is not None:
        environ.update({"wsgi.input": stream, "wsgi.input_terminated": length is None})
        environ.pop("CONTENT_LENGTH", None)
    if length is not None:
        environ["CONTENT_LENGTH"] = str(length)
    chunks, status, _ = run_wsgi_app(app, environ, buffered=True)
    body = b"".join(chunks)
    code = ElementTree.fromstring(body).findtext("Code") if body.startswith(b"<?xml") else None
    return int(status.split()[0]), code, body


def delete_body(keys: int) -> bytes:
    objects = "".join(f"<Object><Key>k{i}</Key></Object>" for i in range(keys))
    return f"<Delete>{objects}</Delete>".encode()


def complete_body(parts: int) -> bytes:
    items = "".join(
        f'<Part><ETag>"{i:032x}"</ETag><PartNumber>{i + 1}</PartNumber></Part>' for i in range(parts)
    )
    return f"<CompleteMultipartUpload>{items}</CompleteMultipartUpload>".encode()


def upload(app, key: str) -> str:
    status, _, body = send(app, "POST", f"/bucket/{key}", query="uploads")
    assert status == 200
    return ElementTree.fromstring(body).findtext("{*}UploadId")


def test_delete_objects_takes_1000_keys_and_refuses_1001(app):
    assert send(app, "POST", "/bucket", delete_body(1000), query="delete")[0] == 200
    assert send(app, "POST", "/bucket", delete_body(1001), query="delete")[:2] == (400, "MalformedXML")


def test_complete_multipart_upload_reads_10000_parts_and_refuses_10001(app):
    upload_id = upload(app, "parts")
    status, code, _ = send(app, "POST", "/bucket/parts", complete_body(10_000), query={"uploadId": upload_id})
    assert (status, code) == (400, "InvalidPart")  # read whole; the parts were never uploaded
    status, code, _ = send(app, "POST", "/bucket/parts", complete_body(10_001), query={"uploadId": upload_id})
    assert (status, code) == (400, "MalformedXML")


def test_an_endless_xml_body_is_refused_while_it_is_read(app):
    flood = Counting(b"<Delete><Object><Key>", b"k" * 4096)  # one key that never ends
    status, code, _ = send(app, "POST", "/bucket", query="delete", stream=flood)
    assert (status, code) == (400, "MaxMessageLengthExceeded")
    assert flood.sent <= rules.BODY_LIMITS["DeleteObjects"].max_bytes + 2 * MIB
    elements = Counting(b"<Delete>", b"<Object><Key>k</Key></Object>")  # keys without end
    status, code, _ = send(app, "POST", "/bucket", query="delete", stream=elements)
    assert (status, code) == (400, "MalformedXML")
    assert elements.sent <= 2 * MIB


def test_a_content_length_over_the_cap_is_refused_before_the_body_is_read(app):
    body = Counting(b"", b" ", size=rules.BODY_LIMITS["PutBucketPolicy"].max_bytes + 1)
    status, code, _ = send(app, "PUT", "/bucket", query="policy", stream=body, length=body.size)
    assert (status, code) == (400, "MaxMessageLengthExceeded")
    assert body.sent == 0


def test_a_chunked_upload_over_the_object_limit_is_refused_and_stores_nothing(app, monkeypatch):
    small = rules.BodyLimit(1024, too_large=rules.STREAMED_LIMIT.too_large)
    monkeypatch.setattr(rules, "STREAMED_LIMIT", small)
    status, code, _ = send(app, "PUT", "/bucket/big", stream=Counting(b"", b"x", size=4096))
    assert (status, code) == (400, "EntityTooLarge")
    assert send(app, "HEAD", "/bucket/big")[0] == 404
    assert send(app, "PUT", "/bucket/big", stream=Counting(b"", b"x", size=1024))[0] == 200


def test_a_body_shorter_than_its_content_length_is_incomplete(app):
    assert send(app, "PUT", "/bucket/short", b"x" * 10, length=100)[:2] == (400, "IncompleteBody")
    assert send(app, "HEAD", "/bucket/short")[0] == 404


@pytest.mark.parametrize(
    "document",
    [
        b'<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]><Delete><Object>'
        b"<Key>&b;</Key></Object></Delete>",
        b'<!DOCTYPE d SYSTEM "file:///etc/passwd"><Delete><Object><Key>k</Key></Object></Delete>',
        b"<Delete>" + b"<Object>" * 100 + b"</Object>" * 100 + b"</Delete>",
        b"<Delete><Object><Key>k</Key></Object>",
        b"<Delete><Object><Key>&undefined;</Key></Object></Delete>",
    ],
    ids=["entities", "external", "deep", "unclosed", "undefined-entity"],
)
def test_dtds_entities_and_deep_nesting_are_malformed_xml(app, document):
    assert send(app, "POST", "/bucket", document, query="delete")[:2] == (400, "MalformedXML")


def test_tag_counts_follow_s3s_limits():
    model = service_model("s3").operation_model("PutObjectTagging")
    limit = rules.body_limit(model)

    def tagging(count: int) -> dict:
        tags = "".join(f"<Tag><Key>k{i}</Key><Value>v</Value></Tag>" for i in range(count))
        body = f"<Tagging><TagSet>{tags}</TagSet></Tagging>".encode()
        request = {"url_path": "/bucket/key", "headers": {}, "query_string": {"tagging": ""}, "body": body}
        return xml_wire.read_rest_request(model, request, limit.xml)

    limit.check_items(tagging(10))
    with pytest.raises(Exception) as refused:
        limit.check_items(tagging(11))
    assert getattr(refused.value, "code", None) == "BadRequest"
    bucket = rules.body_limit(service_model("s3").operation_model("PutBucketTagging"))
    assert (bucket.max_items, bucket.too_many[0]) == (50, "InvalidTag")


@pytest.mark.parametrize("value", ["text/plain\r\nX-Injected: 1", "a\nb", "a\x00b", "caf\u20ac"])
def test_a_response_override_no_header_can_carry_is_invalid_argument(app, value):
    assert send(app, "PUT", "/bucket/shown", b"hello")[0] == 200
    for key in ("response-content-type", "response-content-disposition", "response-cache-control"):
        status, code, _ = send(app, "GET", "/bucket/shown", query={key: value})
        assert (status, code) == (400, "InvalidArgument")
    assert send(app, "HEAD", "/bucket/shown", query={"response-content-type": value})[0] == 400


def test_post_on_a_key_without_upload_id_is_method_not_allowed(app):
    assert send(app, "POST", "/bucket/key")[:2] == (405, "MethodNotAllowed")
    assert send(app, "POST", "/bucket/key", query={"partNumber": "1"})[:2] == (405, "MethodNotAllowed")


DATES = st.sampled_from(
    [
        "1e20",
        "-1e20",
        "inf",
        "nan",
        "99999999999999999999",
        "Thu, 01 Jan 99999 00:00:00 GMT",
        "99999-01-01T00:00:00Z",
        "Thu, 01 Jan 0001 00:00:00 GMT",
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-14:00",
        "0000-01-01T00:00:00Z",
        "garbage",
    ]
) | st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(value=DATES)
def test_no_date_a_client_sends_is_a_500(app, value):
    send(app, "PUT", "/bucket/dated", b"hello")
    for header in ("If-Modified-Since", "If-Unmodified-Since"):
        assert send(app, "GET", "/bucket/dated", headers={header: value})[0] in (200, 304, 412)
    for header in ("Expires", "x-amz-object-lock-retain-until-date"):
        assert send(app, "PUT", "/bucket/dated2", b"x", headers={header: value})[0] in (200, 400)
    assert send(app, "GET", "/bucket/dated", query={"response-expires": value})[0] in (200, 400)
    copy = {"x-amz-copy-source": "bucket/dated", "x-amz-copy-source-if-modified-since": value}
    assert send(app, "PUT", "/bucket/copied", headers=copy)[0] in (200, 400, 412)


def test_an_unreadable_if_modified_since_is_ignored(app):
    send(app, "PUT", "/bucket/cond", b"hello")
    for value in ("garbage", "1e20", "Thu, 01 Jan 99999 00:00:00 GMT"):
        status, _, body = send(app, "GET", "/bucket/cond", headers={"If-Modified-Since": value})
        assert (status, body) == (200, b"hello")
        assert send(app, "GET", "/bucket/cond", headers={"If-Unmodified-Since": value})[0] == 200
