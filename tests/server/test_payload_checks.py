"""What a request announces about its S3 body is checked against the body (issue 17, item 5).

``x-amz-content-sha256``, ``x-amz-checksum-*`` headers and trailers, and the chunk and
trailer signatures of ``aws-chunked`` bodies; a body that does not match leaves no object and
no temporary file. Raw HTTP (http.client), signed with botocore's signers.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import re
import zlib
from urllib.parse import urlsplit

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.server import aws_chunked
from sagemaker_plans_local.server.runner import LocalServer

KEY, SECRET = "111122223333", "payload-secret"
EMPTY = hashlib.sha256(b"").hexdigest()
SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    with LocalServer(root=tmp_path_factory.mktemp("checked"), credentials={KEY: SECRET}) as running:
        send(running, "PUT", "/bucket", _sign(running, "PUT", "/bucket", b"")[1])
        yield running


@pytest.fixture(scope="module")
def unchecked(tmp_path_factory):
    with LocalServer(root=tmp_path_factory.mktemp("unchecked")) as running:
        send(running, "PUT", "/bucket", _open_headers())
        yield running


def send(server, method, path, headers, body=b""):
    parts = urlsplit(server.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def code(body):
    return body.split(b"<Code>", 1)[1].split(b"</Code>", 1)[0].decode() if b"<Code>" in body else ""


class _Streaming(S3SigV4Auth):
    """botocore's S3 signer with ``x-amz-content-sha256`` set to a streaming value (the seed signature)."""

    def __init__(self, credentials, value):
        super().__init__(credentials, "s3", "us-east-1")
        self.value = value

    def payload(self, request):
        return self.value


def _sign(server, method, path, body, extra=None, streaming=None):
    """Headers for ``method path`` signed with KEY: (the request's timestamp, headers)."""
    credentials = Credentials(KEY, SECRET)
    auth = _Streaming(credentials, streaming) if streaming else S3SigV4Auth(credentials, "s3", "us-east-1")
    request = AWSRequest(method=method, url=server.url + path, headers=dict(extra or {}), data=body)
    auth.add_auth(request)
    return request.context["timestamp"], dict(request.headers.items())


def _open_headers(**extra):
    scope = f"{KEY}/20260101/us-east-1/s3/aws4_request"
    return {"Authorization": f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders=host, Signature=0", **extra}


def tmp_files(server):
    return [path for path in server.accounts.root.rglob("*") if ".tmp" in path.parts and path.is_file()]


def stored(server, key):
    headers = _sign(server, "GET", f"/bucket/{key}", b"")[1] if server.app.credentials else _open_headers()
    status, body = send(server, "GET", f"/bucket/{key}", headers)
    return body if status == 200 else None


def test_a_signed_put_replayed_with_another_body_is_refused(checked):
    _, headers = _sign(checked, "PUT", "/bucket/replayed", b"the signed body")
    assert send(checked, "PUT", "/bucket/replayed", headers, b"the signed body")[0] == 200
    _, headers = _sign(checked, "PUT", "/bucket/other", b"the signed body")
    status, body = send(checked, "PUT", "/bucket/other", headers, b"another body, longer")
    assert (status, code(body)) == (400, "XAmzContentSHA256Mismatch")
    assert stored(checked, "other") is None and stored(checked, "replayed") == b"the signed body"
    assert tmp_files(checked) == []


def test_a_signed_upload_part_replayed_with_another_body_is_refused(checked):
    _, headers = _sign(checked, "POST", "/bucket/parts?uploads", b"")
    _, answer = send(checked, "POST", "/bucket/parts?uploads", headers)
    upload = answer.split(b"<UploadId>", 1)[1].split(b"</UploadId>", 1)[0].decode()
    part = f"/bucket/parts?partNumber=1&uploadId={upload}"
    _, headers = _sign(checked, "PUT", part, b"the signed part")
    status, body = send(checked, "PUT", part, headers, b"another part")
    assert (status, code(body)) == (400, "XAmzContentSHA256Mismatch")
    etag = hashlib.md5(b"another part").hexdigest()
    complete = (
        b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part>" % etag.encode()
    )
    complete += b"</CompleteMultipartUpload>"
    _, headers = _sign(checked, "POST", f"/bucket/parts?uploadId={upload}", complete)
    status, body = send(checked, "POST", f"/bucket/parts?uploadId={upload}", headers, complete)
    assert (status, code(body)) == (400, "InvalidPart")  # the refused part was never stored
    assert tmp_files(checked) == []


def test_the_content_sha256_is_checked_without_signatures_too(unchecked):
    headers = _open_headers(**{"x-amz-content-sha256": hashlib.sha256(b"announced").hexdigest()})
    status, body = send(unchecked, "PUT", "/bucket/sha", headers, b"sent instead")
    assert (status, code(body)) == (400, "XAmzContentSHA256Mismatch")
    assert stored(unchecked, "sha") is None and tmp_files(unchecked) == []
    status, body = send(
        unchecked, "PUT", "/bucket/sha", _open_headers(**{"x-amz-content-sha256": "nonsense"})
    )
    assert (status, code(body)) == (400, "InvalidArgument")


DIGESTS = {
    "crc32": lambda data: zlib.crc32(data).to_bytes(4, "big"),
    "sha1": lambda data: hashlib.sha1(data).digest(),
    "sha256": lambda data: hashlib.sha256(data).digest(),
}


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(algorithm=st.sampled_from(sorted(DIGESTS)), data=st.binary(max_size=2000), wrong=st.booleans())
def test_a_checksum_header_must_match_the_body(unchecked, algorithm, data, wrong):
    digest = DIGESTS[algorithm](data + b"!" if wrong else data)
    headers = _open_headers(**{f"x-amz-checksum-{algorithm}": base64.b64encode(digest).decode()})
    status, body = send(unchecked, "PUT", f"/bucket/sum-{algorithm}", headers, data)
    if wrong:
        assert (status, code(body)) == (400, "BadDigest")
        assert tmp_files(unchecked) == []
    else:
        assert status == 200 and stored(unchecked, f"sum-{algorithm}") == data


def frames(data, size, signer=None, trailer=None):
    """``data`` in ``aws-chunked`` frames of ``size`` bytes; ``signer`` (a :class:`Chain`) signs them."""
    out = []
    chunks = [data[start : start + size] for start in range(0, len(data), size)] + [b""]
    for chunk in chunks:
        extension = ""
        if signer is not None:
            extension = ";chunk-signature=" + signer.chunk(chunk)
        out.append(b"%x%s\r\n%s" % (len(chunk), extension.encode(), chunk + b"\r\n" if chunk else b""))
    if trailer is not None:
        out.append(b"%s:%s\r\n" % trailer)
        if signer is not None:
            line = signer.trailer(b"%s:%s\n" % trailer)
            out.append(b"x-amz-trailer-signature:%s\r\n" % line.encode())
    out.append(b"\r\n")
    return b"".join(out)


class Chain:
    """The test's own SigV4 chunk chain (AWS's chunked-upload pages), to sign bodies with."""

    def __init__(self, secret, timestamp, scope, seed):
        key = f"AWS4{secret}".encode()
        for part in scope.split("/"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        self.key, self.timestamp, self.scope, self.previous = key, timestamp, scope, seed

    def _sign(self, *lines):
        self.previous = hmac.new(self.key, "\n".join(lines).encode(), hashlib.sha256).hexdigest()
        return self.previous

    def chunk(self, data):
        head = ("AWS4-HMAC-SHA256-PAYLOAD", self.timestamp, self.scope, self.previous, EMPTY)
        return self._sign(*head, hashlib.sha256(data).hexdigest())

    def trailer(self, canonical):
        head = ("AWS4-HMAC-SHA256-TRAILER", self.timestamp, self.scope, self.previous)
        return self._sign(*head, hashlib.sha256(canonical).hexdigest())


def test_the_chain_gives_aws_published_chunk_signatures():
    """AWS's example (66,560 bytes of 'a' in chunks of 65,536 and 1,024) through the server's own chain."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    scope = "20130524/us-east-1/s3/aws4_request"
    key = Chain(secret, "", scope, "").key
    seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
    chain = aws_chunked.ChunkSigner(
        lambda text: hmac.new(key, text.encode(), hashlib.sha256).hexdigest(), "20130524T000000Z", scope, seed
    )
    for size, signature in (
        (65536, "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"),
        (1024, "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"),
        (0, "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"),
    ):
        chain.check_chunk(hashlib.sha256(b"a" * size).hexdigest(), signature.encode())


def _chunked_put(server, key, data, mode, tamper=None):
    """PUT ``data`` as ``aws-chunked`` in ``mode`` (an x-amz-content-sha256 value): (status, body)."""
    crc = base64.b64encode(zlib.crc32(data).to_bytes(4, "big"))
    extra = {"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data))}
    trailer = (b"x-amz-checksum-crc32", crc) if mode != SIGNED else None
    if trailer:
        extra["x-amz-trailer"] = "x-amz-checksum-crc32"
    timestamp, headers = _sign(server, "PUT", f"/bucket/{key}", b"", extra, streaming=mode)
    seed = headers["Authorization"].rsplit("Signature=", 1)[1]
    chain = Chain(SECRET, timestamp, f"{timestamp[:8]}/us-east-1/s3/aws4_request", seed)
    body = frames(data, 8192, chain if mode != UNSIGNED_TRAILER else None, trailer)
    body = tamper(body) if tamper else body
    headers["Content-Length"] = str(len(body))
    return send(server, "PUT", f"/bucket/{key}", headers, body)


def _flip_payload_byte(body):
    at = body.index(b"\r\n") + 100
    return body[:at] + bytes([body[at] ^ 1]) + body[at + 1 :]


def _wrong_trailer_signature(body):
    head, _, tail = body.rpartition(b"x-amz-trailer-signature:")
    return head + b"x-amz-trailer-signature:" + b"0" * 64 + tail[64:]


def _wrong_checksum(body):
    return re.sub(rb"x-amz-checksum-crc32:[^\r]*", b"x-amz-checksum-crc32:AAAAAA==", body)


@pytest.mark.parametrize(
    ("mode", "tamper", "expected"),
    [
        (SIGNED, _flip_payload_byte, (403, "SignatureDoesNotMatch")),
        (SIGNED_TRAILER, _flip_payload_byte, (403, "SignatureDoesNotMatch")),
        (SIGNED_TRAILER, _wrong_trailer_signature, (403, "SignatureDoesNotMatch")),
        (UNSIGNED_TRAILER, _flip_payload_byte, (400, "BadDigest")),
        (UNSIGNED_TRAILER, _wrong_checksum, (400, "BadDigest")),
    ],
    ids=["signed-data", "signed-trailer-data", "trailer-signature", "unsigned-data", "unsigned-checksum"],
)
def test_a_chunked_put_is_stored_as_signed_and_a_tampered_one_not_at_all(checked, mode, tamper, expected):
    data = bytes(range(256)) * 90
    assert _chunked_put(checked, "chunked", data, mode)[0] == 200
    assert stored(checked, "chunked") == data
    status, body = _chunked_put(checked, "tampered", data, mode, tamper)
    assert (status, code(body)) == expected
    assert stored(checked, "tampered") is None and tmp_files(checked) == []


def test_a_malformed_or_oversized_chunk_size_is_incomplete_body(unchecked):
    headers = _open_headers(**{"Content-Encoding": "aws-chunked", "x-amz-content-sha256": UNSIGNED_TRAILER})
    for size in (b"0x3", b"zz", b"+3", b"3_0", b"f" * 16, b"1" + b"0" * 16):
        status, answer = send(
            unchecked, "PUT", "/bucket/malformed", headers, b"%s\r\nabc\r\n0\r\n\r\n" % size
        )
        assert (status, code(answer)) == (400, "IncompleteBody"), size
        assert stored(unchecked, "malformed") is None


def test_a_chunked_body_must_hold_its_decoded_content_length(unchecked):
    for announced in ("2", "4"):
        headers = _open_headers(
            **{"x-amz-content-sha256": UNSIGNED_TRAILER, "x-amz-decoded-content-length": announced}
        )
        status, answer = send(unchecked, "PUT", "/bucket/length", headers, b"3\r\nabc\r\n0\r\n\r\n")
        assert (status, code(answer)) == (400, "IncompleteBody"), announced
        assert stored(unchecked, "length") is None
