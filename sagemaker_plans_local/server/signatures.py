"""Optional SigV4 checking: with credentials configured, a request's signature must verify.

The credential is the one ``server/credentials.py`` parsed for routing, so the
account a request reaches is the account whose secret signed it. The request
is rebuilt as the client signed it: its method, raw path and query (less
``X-Amz-Signature``), exactly the headers its ``SignedHeaders`` name, and its
payload hash (S3's ``x-amz-content-sha256`` header; the body's SHA-256
otherwise). botocore's own signers then compute the canonical request, the
string to sign and the signature with the configured secret. Before that, the
headers that choose what a request does must be signed: ``host`` always,
``x-amz-target`` for the awsJson services, and for S3 with an ``Authorization``
header ``x-amz-content-sha256`` and every other ``x-amz-*`` header sent (S3's
own rule). SigV2 is refused while checking is on. The request's time is not
compared with the clock (a manual clock is not real time), but its
``X-Amz-Date`` must be a SigV4 time on the credential's day.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Mapping

from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sagemaker_plans_local.server.aws_chunked import ChunkSigner
from sagemaker_plans_local.server.credentials import Credential, malformed, query_pairs
from sagemaker_plans_local.server.errors import RouteError
from sagemaker_plans_local.server.payload import whole_body_digest_holds

#: The code of a signature that does not verify and of an unknown key, by protocol family.
MISMATCH = {
    "json": "InvalidSignatureException",
    "query": "SignatureDoesNotMatch",
    "rest-xml": "SignatureDoesNotMatch",
}
UNKNOWN_KEY = {
    "json": "UnrecognizedClientException",
    "query": "InvalidClientTokenId",
    "rest-xml": "InvalidAccessKeyId",
}
MISMATCH_MESSAGE = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method."
)
_DATE = re.compile(r"[0-9]{8}T[0-9]{6}Z")  # fullmatch: ASCII digits, no trailing newline
_SIGNATURE = re.compile(r"[0-9a-f]{64}")


class SignedRequest:
    """What a signature covers, as the server received it (``raw_query``: still percent-encoded)."""

    def __init__(
        self, method: str, host: str, raw_path: str, raw_query: str, headers: Mapping[str, str], body: bytes
    ) -> None:
        self.method = method
        self.host = host
        self.raw_path = raw_path
        self.raw_query = raw_query
        self.headers = headers
        self.body = body


@dataclass(frozen=True)
class Signing:
    """What a verified request's chunk and trailer signatures chain from (``server/aws_chunked.py``)."""

    key: bytes
    date: str
    scope: str
    seed: str

    def sign(self, string_to_sign: str) -> str:
        return hmac.new(self.key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()

    def chunk_signer(self) -> ChunkSigner:
        """The chain of this request's ``aws-chunked`` body, seeded by its signature."""
        return ChunkSigner(self.sign, self.date, self.scope, self.seed)


def verify(
    request: SignedRequest, credential: Credential, secrets: Mapping[str, str], service: str, family: str
) -> Signing:
    """The request's :class:`Signing` if its SigV4 signature holds; else a :class:`RouteError` (4xx)."""
    if credential.kind == "sigv2":
        raise RouteError(
            MISMATCH[family], "Only SigV4 signatures are accepted while signatures are checked.", 403
        )
    query_auth = credential.kind == "query"
    if not _DATE.fullmatch(credential.date) or credential.date[:8] != credential.scope_date:
        raise malformed(
            family,
            "Invalid credential date: X-Amz-Date must be a SigV4 time on the credential's date.",
            query_auth,
        )
    if not _SIGNATURE.fullmatch(credential.signature) or not credential.signed_headers:
        raise malformed(family, "The signature must give SignedHeaders and a SigV4 Signature.", query_auth)
    _check_signed_headers(request, credential, service, family)
    secret = secrets.get(credential.access_key_id)
    if secret is None:
        raise RouteError(
            UNKNOWN_KEY[family], f"The access key id {credential.access_key_id} is not configured.", 403
        )
    auth = _auth(Credentials(credential.access_key_id, secret), service, credential.region, query_auth)
    signable = _signable(request, credential, service)
    expected = auth.signature(auth.string_to_sign(signable, auth.canonical_request(signable)), signable)
    if not hmac.compare_digest(expected, credential.signature):
        raise RouteError(MISMATCH[family], MISMATCH_MESSAGE, 403)
    return Signing(_signing_key(secret, credential, service), credential.date, credential.scope, expected)


def _check_signed_headers(request: SignedRequest, credential: Credential, service: str, family: str) -> None:
    """Refuse a signature that leaves out a header choosing what the request does."""
    signed = set(credential.signed_headers)
    required = {"host"}
    if family == "json":
        required.add("x-amz-target")
    if service == "s3" and credential.kind == "header":
        required.add("x-amz-content-sha256")
        required.update(name.lower() for name in request.headers.keys() if name.lower().startswith("x-amz-"))
    missing = sorted(required - signed)
    if missing:
        code = "AccessDenied" if family == "rest-xml" else MISMATCH[family]
        raise RouteError(
            code,
            f"There were headers present in the request which were not signed: {', '.join(missing)}",
            403,
        )
    if service != "s3" and not whole_body_digest_holds(request.headers, request.body):
        raise RouteError(MISMATCH[family], MISMATCH_MESSAGE, 403)


def _auth(credentials: Credentials, service: str, region: str, query_auth: bool) -> SigV4Auth:
    if query_auth:
        return (S3SigV4QueryAuth if service == "s3" else SigV4QueryAuth)(credentials, service, region)
    return (S3SigV4Auth if service == "s3" else SigV4Auth)(credentials, service, region)


def _signable(request: SignedRequest, credential: Credential, service: str) -> AWSRequest:
    """The request as botocore's signer sees it: signed headers only, the query less its signature."""
    headers = {name: request.headers.get(name, "") for name in credential.signed_headers}
    headers.setdefault("host", request.host)
    query = request.raw_query
    if credential.kind == "query":
        query = "&".join(
            pair
            for pair, (key, _) in zip(_raw_pairs(query), query_pairs(query), strict=True)
            if key != "X-Amz-Signature"
        )
    url = f"http://{request.host}{request.raw_path}" + (f"?{query}" if query else "")
    signable = AWSRequest(method=request.method, url=url, headers=headers, data=request.body)
    signable.context["timestamp"] = credential.date
    return signable


def _raw_pairs(raw_query: str) -> list[str]:
    return [pair for pair in raw_query.split("&") if pair]


def _signing_key(secret: str, credential: Credential, service: str) -> bytes:
    key = f"AWS4{secret}".encode()
    for part in (credential.scope_date, credential.region, service, "aws4_request"):
        key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
    return key
