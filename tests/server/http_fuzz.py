"""A raw HTTP fuzzer of the server: S3's REST routes, the control API, the other services, bad HTTP.

Everything comes from one seeded ``random.Random``, so a seed always gives the same requests
(the suite and the bench never flake). :func:`requests` yields :class:`FuzzRequest`s, sent
through the WSGI app in process by :func:`send_wsgi` (werkzeug's ``run_wsgi_app``, no socket);
:func:`raw_requests` yields whole HTTP requests as bytes, malformed on purpose, sent over a real
socket by :func:`send_raw`. A request's ``kind`` says which generator made it (the failures are
reported by kind).

An answer fails when its status is 5xx, except 501 (an operation or a service not emulated,
``docs/server.md``) and 505 (an HTTP version the HTTP layer does not speak).
"""

from __future__ import annotations

import json
import random
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator
from urllib.parse import quote, urlencode

from werkzeug.test import EnvironBuilder, run_wsgi_app

ACCEPTED_5XX = (501, 505)
BUCKETS = ("fuzz-bucket", "fuzz-other", "a", "UPPER", "x" * 70, "bkt..dots", "fuzz-bucket.dotted", "")
KEYS = (
    "key",
    "dir/key",
    "a/b/c.txt",
    "..",
    "../../etc/passwd",
    "%00",
    "%zz",
    "\u00e9t\u00e9",
    "k" * 1100,
    " ",
)
S3_QUERY = {
    "uploads": ("",),
    "uploadId": ("", "nope", "x" * 200),
    "partNumber": ("1", "0", "-1", "10001", "abc", "99999999999999999999", "1e3"),
    "versioning": ("",),
    "tagging": ("",),
    "delete": ("",),
    "acl": ("",),
    "policy": ("",),
    "cors": ("",),
    "lifecycle": ("",),
    "location": ("",),
    "versionId": ("null", "v1", ""),
    "list-type": ("2", "1", "3", "x"),
    "prefix": ("", "dir/", "\u00e9", "%"),
    "delimiter": ("/", "", "ab"),
    "max-keys": ("0", "-1", "1001", "abc", "99999999999999999999", "1.5", " 5"),
    "max-buckets": ("0", "1", "10001", "x"),
    "marker": ("", "key", "\uffff"),
    "start-after": ("", "key"),
    "continuation-token": ("", "bTprZXk=", "!!!", "bTo="),
    "encoding-type": ("url", "bogus"),
    "fetch-owner": ("true", "maybe"),
    "response-content-type": ("text/plain", "a\r\nb: c", "\u20ac"),
    "response-content-disposition": ("attachment", "a\nb"),
    "response-cache-control": ("no-cache", "\x00"),
    "response-expires": ("Thu, 01 Jan 2026 00:00:00 GMT", "1e20", "Thu, 01 Jan 99999 00:00:00 GMT"),
    "x-id": ("GetObject", "ListObjects", "Nope"),
    "analytics": ("",),
    "id": ("", "x"),
    "select": ("",),
    "select-type": ("2",),
    "restore": ("",),
    "attributes": ("",),
    "bucket-region": ("us-east-1", "mars-1"),
    "X-Amz-Credential": ("testing/20260101/us-east-1/s3/aws4_request", "garbage", "a/b"),
    "X-Amz-Algorithm": ("AWS4-HMAC-SHA256",),
    "AWSAccessKeyId": ("testing",),
}
DATES = ("Thu, 01 Jan 2026 00:00:00 GMT", "1e20", "inf", "-1e20", "Thu, 01 Jan 99999 00:00:00 GMT",
         "Thu, 01 Jan 0001 00:00:00 +1400", "0001-01-01T00:00:00+14:00", "garbage", "")  # fmt: skip
S3_HEADERS: dict[str, tuple[str, ...]] = {
    "Range": ("bytes=0-0", "bytes=5-2", "bytes=-0", "bytes=-99999999999999999999", "bytes=a-b", "items=0-1"),
    "If-Match": ('"x"', "*", ""),
    "If-None-Match": ('"x"', "*"),
    "If-Modified-Since": DATES,
    "If-Unmodified-Since": DATES,
    "Expires": DATES,
    "x-amz-object-lock-retain-until-date": DATES,
    "x-amz-copy-source-if-modified-since": DATES,
    "Content-MD5": ("", "!!", "1B2M2Y8AsgTpgAmY7PhCfg==", "AAAA"),
    "x-amz-copy-source": (
        "fuzz-bucket/key",
        "/fuzz-bucket/dir%2Fkey?versionId=x",
        "nobucket",
        "%zz/%zz",
        "/",
    ),
    "x-amz-meta-name": ("value", "\u00e9", ""),
    "x-amz-metadata-directive": ("REPLACE", "COPY", "BOGUS"),
    "Content-Type": ("text/plain", "application/xml", ""),
    "x-amz-content-sha256": ("UNSIGNED-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "0" * 64, "zz"),
    "Content-Encoding": ("aws-chunked", "gzip,aws-chunked", "gzip"),
    "x-amz-decoded-content-length": ("0", "5", "-1", "abc", "99999999999"),
    "x-amz-expected-bucket-owner": ("123456789012", "111122223333", "x"),
    "x-amz-tagging": ("a=b", "&&&"),
    "x-amz-checksum-crc32": ("AAAAAA==", "!"),
    "x-amz-object-attributes": ("ETag", ""),
    "x-amz-request-route": ("r",),
    "x-amz-request-token": ("t",),
}
CONTROL_PATHS = ("health", "clock", "reset", "capacity", "capacity/clear", "scripts/jobs", "scripts/plans",
                 "settings", "nope", "", "clock/", "../health")  # fmt: skip
SCOPE = "AWS4-HMAC-SHA256 Credential={key}/20260101/{region}/{service}/aws4_request, SignedHeaders=host, Signature=0"


@dataclass
class FuzzRequest:
    """One request for the WSGI app: ``query`` as sent (already encoded), ``kind`` its generator."""

    kind: str
    method: str
    path: str
    query: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    length: int | None = None  # a Content-Length that lies (None: the body's own)


def _auth(rng: random.Random, service: str) -> dict[str, str]:
    roll = rng.random()
    key = rng.choice(("testing",) * 6 + ("111122223333", "AKIAIOSFODNN7EXAMPLE"))
    if roll < 0.8:
        return {
            "Authorization": SCOPE.format(
                key=key, region=rng.choice(("us-east-1", "eu-west-1")), service=service
            )
        }
    return rng.choice(
        (
            {},
            {"Authorization": f"AWS {key}:sig"},
            {"Authorization": "AWS4-HMAC-SHA256 Credential="},
            {"Authorization": "AWS4-HMAC-SHA256 Credential=a/b/c/d/e/f/g"},
            {"Authorization": SCOPE.format(key=key, region="us-east-1", service="ec2")},
        )
    )


def _xml(rng: random.Random) -> bytes:
    """An S3-looking XML body: valid, truncated, deep, with entities, or many elements (kept small)."""
    items = rng.randint(0, 40)
    shape = rng.random()
    if shape < 0.3:
        inner = "".join(f"<Object><Key>{rng.choice(KEYS[:4])}{i}</Key></Object>" for i in range(items))
        return f"<Delete>{inner}<Quiet>{rng.choice(('true', 'maybe'))}</Quiet></Delete>".encode()
    if shape < 0.55:
        parts = "".join(
            f"<Part><ETag>{rng.choice(('x', ''))}</ETag><PartNumber>{rng.choice(('1', '-5', 'z', '10001'))}"
            "</PartNumber></Part>"
            for _ in range(items)
        )
        return f"<CompleteMultipartUpload>{parts}</CompleteMultipartUpload>".encode()
    return rng.choice(
        (
            b"<Delete>" + b"<a>" * rng.randint(10, 200),
            b"<X>" * 50 + b"</X>" * 50,
            b'<!DOCTYPE a [<!ENTITY e "xxxxxxxx">]><Delete><Object><Key>&e;&e;</Key></Object></Delete>',
            b"<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>",
            b"<Delete><Object><Key>\xff\xfe</Key></Object></Delete>",
            b"<Tagging><TagSet>"
            + b"<Tag><Key>k</Key><Value>v</Value></Tag>" * items
            + b"</TagSet></Tagging>",
            b"not xml at all",
            b"<Delete/>",
            b"",
        )
    )


def _chunked(rng: random.Random) -> bytes:
    """An aws-chunked body, well-framed or not."""
    return rng.choice(
        (
            b"5;chunk-signature=00\r\nhello\r\n0;chunk-signature=00\r\n\r\n",
            b"5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAA\r\n\r\n",
            b"-5\r\nhello\r\n",
            b"10\r\nshort",
            b"5\r\nhelloXX0\r\n\r\n",
            b"\r\n\r\n",
            b"",
        )
    )


def _s3_body(rng: random.Random, method: str) -> bytes:
    if method not in ("PUT", "POST") or rng.random() < 0.3:
        return b""
    return rng.choice((_xml, _chunked, lambda r: r.randbytes(r.randint(0, 300))))(rng)


def s3_request(rng: random.Random) -> FuzzRequest:
    """A request shaped like S3's REST API, with garbage where S3 has its parameters."""
    method = rng.choice(("GET", "PUT", "POST", "DELETE", "HEAD", "GET", "PUT", "OPTIONS", "PATCH"))
    bucket = rng.choice(BUCKETS[:2] * 4 + BUCKETS)
    key = rng.choice((None, None) + KEYS)
    headers = _auth(rng, "s3")
    if rng.random() < 0.15:
        headers["Host"] = rng.choice(
            (f"{bucket}.localhost", f"{bucket}.s3.amazonaws.com", "[::1]", "s3.localhost", "")
        )
        path = "/" + (quote(key, safe="/%") if key else "")
    else:
        path = "/" + bucket + ("/" + quote(key, safe="/%") if key is not None else "")
    query = [(name, rng.choice(S3_QUERY[name])) for name in rng.sample(sorted(S3_QUERY), rng.randint(0, 3))]
    for name in rng.sample(sorted(S3_HEADERS), rng.randint(0, 4)):
        headers[name] = rng.choice(S3_HEADERS[name])
    body = _s3_body(rng, method)
    length = rng.choice((None,) * 9 + (len(body) + rng.randint(1, 50),))
    return FuzzRequest("s3", method, path, urlencode(query, quote_via=quote), headers, body, length)


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice(
            (0, -1, 1e308, 10**30, "", "x" * rng.randint(0, 50), None, True, "2026-01-01T00:00:00Z")
        )
    if roll < 0.75:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    names = ("job_name", "outcome", "runtime_seconds", "advance_seconds", "next_change", "instance_type",
             "count", "start", "end", "training_plan_name", "payment_succeeds", "x", "")  # fmt: skip
    return {rng.choice(names): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def control_request(rng: random.Random) -> FuzzRequest:
    """A control API request: known and unknown paths, methods, accounts and JSON (or not) bodies."""
    path = "/_sagemaker_plans_local/" + rng.choice(CONTROL_PATHS)
    if path.endswith("reset") and rng.random() < 0.9:  # a reset remakes every backend: kept rare
        path = "/_sagemaker_plans_local/health"
    method = rng.choice(("GET", "POST", "POST", "PUT", "DELETE"))
    query = rng.choice(("", "account=111122223333", "account=12", "account=x", "account="))
    body = rng.choice(
        (
            lambda: json.dumps(_json_value(rng)).encode(),
            lambda: json.dumps({"advance_seconds": rng.choice((0, 1, -1, 1e300, "x", None))}).encode(),
            lambda: rng.choice((b"", b"{", b"null", b"\xff\xfe", b'{"a":NaN}', b"[" * 50 + b"]" * 50)),
        )
    )()
    headers = {"Content-Type": rng.choice(("application/json", "text/plain", ""))}
    if method == "POST" and rng.random() < 0.03:  # a body shorter than its Content-Length
        return FuzzRequest("control-short", method, path, query, headers, body, len(body) + 7)
    return FuzzRequest("control", method, path, query, headers, body)


def service_request(rng: random.Random) -> FuzzRequest:
    """SageMaker / Logs (awsJson) and STS / IAM (query) requests with random targets and bodies."""
    if rng.random() < 0.5:
        service, target = rng.choice(
            (
                ("sagemaker", "SageMaker.ListTrainingJobs"),
                ("sagemaker", "SageMaker.DescribeTrainingJob"),
                ("sagemaker", "SageMaker.CreateTrainingJob"),
                ("logs", "Logs_20140328.GetLogEvents"),
                ("sagemaker", "SageMaker.Nope"),
                ("sagemaker", ""),
            )  # fmt: skip
        )
        headers = {
            **_auth(rng, service),
            "X-Amz-Target": target,
            "Content-Type": "application/x-amz-json-1.1",
        }
        body = rng.choice((b"{}", b"", b"[]", b"{", json.dumps(_json_value(rng)).encode()))
        if rng.random() < 0.03:  # a body shorter than its Content-Length
            return FuzzRequest("service-short", "POST", "/", "", headers, body, len(body) + 7)
        return FuzzRequest("json", rng.choice(("POST", "POST", "GET")), "/", "", headers, body)
    service = rng.choice(("sts", "iam"))
    action = rng.choice(("GetCallerIdentity", "AssumeRole", "GetRole", "CreateRole", "Nope", ""))
    fields = {"Action": action, "Version": "2011-06-15", rng.choice(("RoleArn", "RoleName", "X.1")): "x"}
    headers = {**_auth(rng, service), "Content-Type": "application/x-www-form-urlencoded"}
    return FuzzRequest(
        "query", rng.choice(("POST", "GET", "DELETE")), "/", "", headers, urlencode(fields).encode()
    )


#: The generators and their weights (S3 first: it has the most routes).
GENERATORS: tuple[tuple[Callable[[random.Random], FuzzRequest], int], ...] = (
    (s3_request, 75),
    (control_request, 12),
    (service_request, 13),
)


def requests(seed: int, count: int) -> Iterator[FuzzRequest]:
    """``count`` requests from ``seed``, always the same ones."""
    rng = random.Random(seed)
    makers = [maker for maker, weight in GENERATORS for _ in range(weight)]
    for _ in range(count):
        yield rng.choice(makers)(rng)


def fixed_requests() -> list[FuzzRequest]:
    """Inputs issue 17 names: a deep JSON and a body over 16 MiB to the control API, an
    aws-chunked chunk size that is not hex."""
    s3 = {"Authorization": SCOPE.format(key="testing", region="us-east-1", service="s3")}
    chunked = {**s3, "Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": "5"}
    return [
        FuzzRequest("guard", "POST", "/_sagemaker_plans_local/clock", body=b"[" * 10_000),
        FuzzRequest("guard", "POST", "/_sagemaker_plans_local/settings", body=b" " * (16 * 1024 * 1024 + 1)),
        FuzzRequest("auth", "PUT", "/fuzz-bucket/chunked", headers=chunked, body=b"zz\r\nhello\r\n0\r\n\r\n"),
    ]


def send_wsgi(app: Any, request: FuzzRequest) -> int:
    """The status the WSGI ``app`` answers ``request`` with (its body read to the end)."""
    builder = EnvironBuilder(
        path=request.path, method=request.method, headers=request.headers, data=request.body
    )
    environ = builder.get_environ()
    environ["QUERY_STRING"] = request.query
    if request.length is not None:
        environ["CONTENT_LENGTH"] = str(request.length)
    chunks, status, _ = run_wsgi_app(app, environ, buffered=True)
    for _ in chunks:
        pass
    close = getattr(chunks, "close", None)
    if close is not None:
        close()
    return int(status.split()[0])


def raw_requests(seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """``count`` whole HTTP requests (kind, bytes), most of them malformed.

    Kinds ``raw-control`` and ``raw-service``: to the control API and SageMaker, whose bodies the
    app reads itself (``app._read``); ``raw``: every other one (S3's routes, which read their
    bodies through ``s3_routes``).
    """
    rng = random.Random(seed)
    auth = SCOPE.format(key="testing", region="us-east-1", service="s3").encode()
    lines = (
        b"GET / HTTP/1.1", b"GET /fuzz-bucket HTTP/1.0", b"GET", b"GET /", b"GET / HTTP/9.9", b"\x00\x01\x02",
        b"GET /" + b"a" * 70_000 + b" HTTP/1.1", b"GET http://127.0.0.1/fuzz-bucket HTTP/1.1", b"CONNECT x:1 HTTP/1.1",
        b"BREW /pot HTTP/1.1", b"GET /fuzz-bucket/%ff%fe HTTP/1.1", b"GET /\xff\xfe HTTP/1.1", b"",
        b"PUT /fuzz-bucket/raw HTTP/1.1", b"POST /_sagemaker_plans_local/clock HTTP/1.1", b"GET /?a=%zz HTTP/1.1",
        b"POST / HTTP/1.1\r\nX-Amz-Target: SageMaker.ListTrainingJobs\r\nAuthorization: "
        + auth.replace(b"/s3/", b"/sagemaker/"),
    )  # fmt: skip
    headers = (
        b"Host: 127.0.0.1", b"Authorization: " + auth, b"Content-Length: 5", b"Content-Length: -1",
        b"Content-Length: abc", b"Content-Length: 5\r\nContent-Length: 6", b"Transfer-Encoding: chunked",
        b"Transfer-Encoding: gzip, chunked", b"no colon here", b" folded: continuation", b"X: " + b"y" * 70_000,
        b"Expect: 100-continue", b"Connection: keep-alive", b"Content-Type: application/json", b"\xff: \xfe",
    )  # fmt: skip
    bodies = (b"", b"hello", b"5\r\nhello\r\n0\r\n\r\n", b"zz\r\nhello\r\n0\r\n\r\n", b"{}", b"x" * 1000)
    for _ in range(count):
        parts = [rng.choice(lines)] + rng.sample(headers, rng.randint(0, 5))
        kind = "raw"
        if parts[0].startswith(b"POST /_sagemaker_plans_local/"):
            kind = "raw-control"
        elif parts[0].startswith(b"POST / "):
            kind = "raw-service"
        yield kind, b"\r\n".join(parts) + b"\r\n\r\n" + rng.choice(bodies)


def send_raw(host: str, port: int, data: bytes, timeout: float = 30.0) -> int | None:
    """The status of the first answer to ``data`` sent on a fresh connection (None: closed unanswered)."""
    with socket.create_connection((host, port), timeout=timeout) as connection:
        try:
            connection.sendall(data)
            connection.shutdown(socket.SHUT_WR)
        except OSError:  # the server closed on us mid-request: fine, if it answered
            pass
        answer = b""
        try:
            while b"\r\n" not in answer:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                answer += chunk
        except OSError:
            return None
    status_line = answer.split(b"\r\n", 1)[0].split()
    return int(status_line[1]) if len(status_line) >= 2 and status_line[1].isdigit() else None


def failed(status: int | None) -> bool:
    """Whether ``status`` is a failure of the server (module docstring)."""
    return status is not None and status >= 500 and status not in ACCEPTED_5XX
