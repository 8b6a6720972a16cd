"""Optional SigV4 checking: with credentials configured, a request's signature must verify.

The request is rebuilt as the client signed it: its method, raw path and
query, exactly the headers its ``SignedHeaders`` name, and its payload hash
(S3's ``x-amz-content-sha256`` header; the body's SHA-256 otherwise). botocore's
own signers then compute the canonical request, the string to sign and the
signature with the configured secret. Header and presigned-URL (query)
signatures are checked; SigV2 is refused while checking is on. The request's
time is not compared with the clock (a manual clock is not real time).
"""

from __future__ import annotations

import hmac
import re
from typing import Mapping
from urllib.parse import unquote

from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sagemaker_plans_local.server.errors import RouteError

_HEADER = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<credential>[^,\s]+),\s*"
    r"SignedHeaders=(?P<signed>[^,\s]+),\s*Signature=(?P<signature>[0-9a-f]+)$"
)
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


def verify(
    request: SignedRequest, secrets: Mapping[str, str], service: str, region: str, family: str
) -> None:
    """Raise a :class:`RouteError` (403, in ``family``'s codes) unless the request's SigV4 signature holds."""
    header = _HEADER.match(request.headers.get("Authorization") or "")
    query = _arguments(request.raw_query)
    if header is not None:
        credential, signed, signature = header["credential"], header["signed"], header["signature"]
        query_auth = False
    elif "X-Amz-Signature" in query:
        credential = unquote(query.get("X-Amz-Credential", ""))
        signed, signature = unquote(query.get("X-Amz-SignedHeaders", "")), query["X-Amz-Signature"]
        query_auth = True
    else:
        raise RouteError(
            MISMATCH[family], "Only SigV4 signatures are accepted while signatures are checked.", 403
        )
    access_key_id = credential.split("/")[0]
    date = request.headers.get("X-Amz-Date") or query.get("X-Amz-Date")
    secret = secrets.get(access_key_id)
    if secret is None:
        raise RouteError(UNKNOWN_KEY[family], f"The access key id {access_key_id} is not configured.", 403)
    expected = _signature(
        request, Credentials(access_key_id, secret), service, region, signed, date, query_auth
    )
    if not hmac.compare_digest(expected, signature):
        raise RouteError(
            MISMATCH[family],
            "The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method.",
            403,
        )


def _signature(
    request: SignedRequest,
    credentials: Credentials,
    service: str,
    region: str,
    signed: str,
    date: str | None,
    query_auth: bool,
) -> str:
    names = signed.split(";")
    headers = {name: request.headers.get(name, "") for name in names}
    headers.setdefault("host", request.host)
    query = request.raw_query
    if query_auth:
        query = "&".join(pair for pair in query.split("&") if not pair.startswith("X-Amz-Signature="))
    url = f"http://{request.host}{request.raw_path}" + (f"?{query}" if query else "")
    signable = AWSRequest(method=request.method, url=url, headers=headers, data=request.body)
    signable.context["timestamp"] = date or ""
    if query_auth:
        auth: SigV4Auth = (S3SigV4QueryAuth if service == "s3" else SigV4QueryAuth)(
            credentials, service, region
        )
    else:
        auth = (S3SigV4Auth if service == "s3" else SigV4Auth)(credentials, service, region)
    canonical = auth.canonical_request(signable)
    return auth.signature(auth.string_to_sign(signable, canonical), signable)


def _arguments(raw_query: str) -> dict[str, str]:
    """The raw query's arguments (values still percent-encoded)."""
    return {key: value for key, _, value in (pair.partition("=") for pair in raw_query.split("&") if pair)}
