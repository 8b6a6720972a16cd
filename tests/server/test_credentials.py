"""One credential per request, the one verified: its account is the account reached (issue 17, 2 and 9)."""

from __future__ import annotations

import http.client
import json
from urllib.parse import quote, urlsplit

import pytest
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.server.credentials import AUTH_QUERY_KEYS
from sagemaker_plans_local.server.runner import LocalServer
from tests.server.test_signatures import client as signed_client

KEY1, SECRET1 = "111122223333", "secret-one"
KEY2, SECRET2 = "444455556666", "secret-two"
TARGET = "SageMaker.ListTrainingJobs"
JSON = "application/x-amz-json-1.1"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with LocalServer(
        root=tmp_path_factory.mktemp("two"), credentials={KEY1: SECRET1, KEY2: SECRET2}
    ) as running:
        for key, secret, bucket in ((KEY1, SECRET1, "bucket-one"), (KEY2, SECRET2, "bucket-two")):
            s3 = client(running, "s3", key, secret)
            s3.create_bucket(Bucket=bucket)
            s3.put_object(Bucket=bucket, Key="secret.txt", Body=f"{key}'s secret".encode())
        yield running


def client(server, service, key=KEY1, secret=SECRET1):
    return signed_client(server, service, key, secret, signature_version="s3v4" if service == "s3" else None)


def send(server, method, target, headers=None, body=b""):
    """``method`` ``target`` (path and query, sent as is) with ``headers``: (status, body)."""
    parts = urlsplit(server.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        headers = dict(headers or {})
        headers.setdefault("Host", parts.netloc)
        for name, value in headers.items():
            for one in value if isinstance(value, list) else [value]:
                connection.putheader(name, one)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def signed(server, auth, method, path, headers=None, body=b""):
    """A request signed by ``auth`` (a botocore signer): (path with query, headers, body)."""
    request = AWSRequest(method=method, url=server.url + path, headers=dict(headers or {}), data=body)
    auth.add_auth(request)
    url = urlsplit(request.url)
    data = request.data.encode() if isinstance(request.data, str) else request.data
    return url.path + (f"?{url.query}" if url.query else ""), dict(request.headers.items()), data


def presigned_get(server, key, secret, path):
    auth = S3SigV4QueryAuth(Credentials(key, secret), "s3", "us-east-1", expires=3600)
    return signed(server, auth, "GET", path)[0]


def code(body):
    if body.startswith(b"{"):
        return json.loads(body)["__type"]
    if b"<Code>" not in body:
        return body.decode(errors="replace")  # an answer, not an error
    return body.split(b"<Code>", 1)[1].split(b"</Code>", 1)[0].decode()


def test_a_presigned_url_with_a_header_naming_another_account_is_refused(server):
    url = presigned_get(server, KEY1, SECRET1, "/bucket-two/secret.txt")
    header = f"AWS4-HMAC-SHA256 Credential={KEY2}/20260101/us-east-1/s3/aws4_request"
    status, body = send(server, "GET", url, {"Authorization": header})
    assert (status, code(body)) == (400, "InvalidArgument")
    assert b"Only one auth mechanism allowed" in body and b"secret" not in body
    status, body = send(server, "GET", url)  # key 1 alone: account 1, which has no bucket-two
    assert (status, code(body)) == (404, "NoSuchBucket")
    own = presigned_get(server, KEY2, SECRET2, "/bucket-two/secret.txt")
    assert send(server, "GET", own) == (200, f"{KEY2}'s secret".encode())


def test_a_first_credential_naming_another_account_is_refused(server):
    forged = quote(f"{KEY2}/20260101/us-east-1/s3/aws4_request", safe="")
    url = presigned_get(server, KEY1, SECRET1, f"/bucket-two/secret.txt?X-Amz-Credential={forged}")
    assert url.count("X-Amz-Credential=") == 2 and url.index(forged) < url.index(KEY1)
    status, body = send(server, "GET", url)
    assert (status, code(body)) == (400, "AuthorizationQueryParametersError")
    assert b"secret" not in body


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(key=st.sampled_from(AUTH_QUERY_KEYS), encoded=st.booleans(), first=st.booleans())
def test_an_auth_query_key_given_twice_is_refused(server, key, encoded, first):
    url = presigned_get(server, KEY1, SECRET1, "/bucket-one/secret.txt")
    name = quote(key, safe="").replace("-", "%2D") if encoded else key
    path, query = url.split("?", 1)
    extra = f"{name}=x&{key}=y"
    status, body = send(server, "GET", f"{path}?{extra}&{query}" if first else f"{path}?{query}&{extra}")
    assert (status, code(body)) == (400, "AuthorizationQueryParametersError")


def test_two_authorization_headers_are_refused(server):
    path, headers, _ = signed(
        server, S3SigV4Auth(Credentials(KEY1, SECRET1), "s3", "us-east-1"), "GET", "/bucket-one"
    )
    other = signed(server, S3SigV4Auth(Credentials(KEY2, SECRET2), "s3", "us-east-1"), "GET", "/bucket-two")[
        1
    ]
    headers["Authorization"] = [other["Authorization"], headers["Authorization"]]
    status, body = send(server, "GET", path, headers)
    assert (status, code(body)) == (400, "AuthorizationHeaderMalformed")


def _sagemaker(server, auth, target_signed=True, sent_target=TARGET):
    headers = {"Content-Type": JSON} | ({"X-Amz-Target": TARGET} if target_signed else {})
    path, headers, body = signed(server, auth, "POST", "/", headers, b'{"MaxResults": 5}')
    headers["X-Amz-Target"] = sent_target
    return send(server, "POST", path, headers, body)


def test_x_amz_target_must_be_signed(server):
    header = SigV4Auth(Credentials(KEY1, SECRET1), "sagemaker", "us-east-1")
    assert _sagemaker(server, header)[0] == 200
    status, body = _sagemaker(server, header, target_signed=False, sent_target="SageMaker.ListTrainingPlans")
    assert (status, code(body)) == (403, "InvalidSignatureException")
    assert b"x-amz-target" in body


class _BodyKept(SigV4QueryAuth):
    """Query authentication over the JSON body, as the JavaScript SDK presigns (botocore moves it)."""

    def _modify_request_before_signing(self, request):
        data, request.data = request.data, b""
        super()._modify_request_before_signing(request)
        request.data = data


@pytest.mark.parametrize("signer", [SigV4QueryAuth, _BodyKept], ids=["body-in-query", "body-kept"])
def test_a_presigned_sagemaker_request_verifies_and_must_sign_its_target(server, signer):
    query = signer(Credentials(KEY1, SECRET1), "sagemaker", "us-east-1")
    status, body = _sagemaker(server, query)
    assert (status, json.loads(body)) == (200, {"TrainingJobSummaries": []})
    assert _sagemaker(server, query, sent_target="SageMaker.ListTrainingPlans")[0] == 403
    status, body = _sagemaker(server, query, target_signed=False)
    assert (status, code(body)) == (403, "InvalidSignatureException")


def test_an_unsigned_x_amz_header_is_refused_for_s3(server):
    auth = S3SigV4Auth(Credentials(KEY1, SECRET1), "s3", "us-east-1")
    path, headers, _ = signed(server, auth, "PUT", "/bucket-one/acl.txt", body=b"x")
    headers["x-amz-acl"] = "public-read"
    status, body = send(server, "PUT", path, headers, b"x")
    assert (status, code(body)) == (403, "AccessDenied")
    assert b"x-amz-acl" in body


def test_a_date_other_than_the_credentials_is_refused(server):
    auth = S3SigV4Auth(Credentials(KEY1, SECRET1), "s3", "us-east-1")
    path, headers, _ = signed(server, auth, "GET", "/bucket-one")
    headers["Authorization"] = headers["Authorization"].replace(headers["X-Amz-Date"][:8], "20000101", 1)
    status, body = send(server, "GET", path, headers)
    assert (status, code(body)) == (400, "AuthorizationHeaderMalformed")


_FORGED_SCOPE = f"{KEY2}/20260101/us-east-1/s3/aws4_request"
_HEADERS = {
    "sigv4": f"AWS4-HMAC-SHA256 Credential={_FORGED_SCOPE}",
    "sigv4-full": f"AWS4-HMAC-SHA256 Credential={_FORGED_SCOPE}, SignedHeaders=host, Signature={'0' * 64}",
    "sigv2": f"AWS {KEY2}:c2lnbmF0dXJl",
}
_QUERY = {
    "credential": f"X-Amz-Credential={quote(_FORGED_SCOPE, safe='')}",
    "encoded": f"X-Amz-%43redential={quote(_FORGED_SCOPE, safe='')}",
    "sigv2-key": f"AWSAccessKeyId={KEY2}",
    "signature": f"X-Amz-Signature={'0' * 64}",
}


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    header=st.sampled_from([None, *_HEADERS]),
    extras=st.lists(st.tuples(st.sampled_from(sorted(_QUERY)), st.booleans()), max_size=3),
    signed_extras=st.booleans(),
)
def test_no_mix_of_credentials_reaches_an_account_it_was_not_signed_for(
    server, header, extras, signed_extras
):
    """Key 1's presigned URL for account 2's object, with another credential added anywhere: never 200."""
    path = "/bucket-two/secret.txt"
    added = [_QUERY[name] for name, _ in extras]
    if signed_extras and added:  # the extras inside what key 1 signs (botocore keeps the URL's query)
        url = presigned_get(server, KEY1, SECRET1, path + "?" + "&".join(added))
    else:
        url = presigned_get(server, KEY1, SECRET1, path)
        for text, (_, first) in zip(added, extras, strict=True):
            url = url.replace("?", f"?{text}&", 1) if first else f"{url}&{text}"
    status, body = send(server, "GET", url, {"Authorization": _HEADERS[header]} if header else {})
    assert b"secret" not in body
    assert 400 <= status < 500
