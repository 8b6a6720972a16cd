"""A request's credential, parsed once: what routing picks the account from and the checker verifies.

Three forms: SigV4 in the ``Authorization`` header (``AWS4-HMAC-SHA256
Credential=..., SignedHeaders=..., Signature=...``), SigV4 in the query (a
presigned URL's ``X-Amz-Credential``, ``X-Amz-SignedHeaders``, ``X-Amz-Date``,
``X-Amz-Signature``) and S3's SigV2 (``Authorization: AWS <key>:<signature>`` or
the query's ``AWSAccessKeyId``/``Signature``). A request that names its
credential twice is refused (400) before anything else reads it: an
``Authorization`` header and query authentication together, a query key of the
authentication set given twice (also percent-encoded: keys are compared
decoded), or a header component (``Credential=``...) given twice. Repeated
headers reach the application joined by commas, so a second ``Authorization``
header makes the first one malformed (400). S3's wording and codes where S3 has
them (``InvalidArgument``, ``AuthorizationHeaderMalformed``,
``AuthorizationQueryParametersError``); the other services' malformed-signature
code (``IncompleteSignatureException`` / ``IncompleteSignature``) otherwise.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Protocol
from urllib.parse import unquote_plus

from sagemaker_plans_local.server.errors import RouteError, refusal

ALGORITHM = "AWS4-HMAC-SHA256"
#: The query keys of query authentication (SigV4 and SigV2): each may appear once.
AUTH_QUERY_KEYS = (
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
    "AWSAccessKeyId",
    "Signature",
    "Expires",
)
#: The query keys whose presence means the request authenticates in its query.
_QUERY_MARKERS = ("X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "AWSAccessKeyId", "Signature")
_SCOPE = re.compile(r"([^/\s,]+)/([0-9]{8})/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request")  # fullmatch: ASCII
_SIGV2 = re.compile(r"^AWS\s+([^:\s]+):(\S*)$")
_COMPONENTS = ("Credential", "SignedHeaders", "Signature")
_MALFORMED = {"json": "IncompleteSignatureException", "query": "IncompleteSignature"}
TWO_MECHANISMS = (
    "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query "
    "string parameter or the Authorization header should be specified"
)


class Lookup(Protocol):
    """Headers: what the parser reads of them."""

    def get(self, key: str, /) -> str | None: ...


class Credential(NamedTuple):
    """One request's credential. ``kind``: ``header`` or ``query`` (SigV4), ``sigv2``.

    ``scope`` is SigV4's ``DATE/REGION/SERVICE/aws4_request`` (empty for SigV2);
    ``signed_headers`` and ``signature`` are empty when the request left them out
    (routing does not need them; the checker refuses such a request).
    """

    kind: str
    access_key_id: str
    region: str
    signing_name: str
    scope: str
    signed_headers: tuple[str, ...] = ()
    signature: str = ""
    date: str = ""

    @property
    def scope_date(self) -> str:
        return self.scope.split("/", 1)[0]


def query_pairs(raw_query: str) -> list[tuple[str, str]]:
    """The raw query's ``(key, value)`` pairs, both percent-decoded, in order."""
    pairs = []
    for pair in raw_query.split("&"):
        if pair:
            key, _, value = pair.partition("=")
            pairs.append((unquote_plus(key), unquote_plus(value)))
    return pairs


def malformed(family: str, message: str, query: bool = False) -> RouteError:
    """The 400 of a credential that cannot be read, in ``family``'s code."""
    s3_code = "AuthorizationQueryParametersError" if query else "AuthorizationHeaderMalformed"
    return RouteError(_MALFORMED.get(family, s3_code), message, 400)


def parse(headers: Lookup, raw_query: str, family: str) -> Credential | None:
    """The request's one credential; None if it names none; a 400 :class:`RouteError` if it names two."""
    pairs = query_pairs(raw_query)
    query: dict[str, str] = {}
    for key, value in pairs:
        if key in AUTH_QUERY_KEYS:
            if key in query:
                raise malformed(family, f"The query parameter {key} is given more than once.", query=True)
            query[key] = value
    authorization = headers.get("Authorization")
    if authorization is not None and any(key in query for key in _QUERY_MARKERS):
        code = "InvalidArgument" if family == "rest-xml" else _MALFORMED[family]
        raise RouteError(code, TWO_MECHANISMS, 400)
    if authorization is not None:
        return _header(authorization, headers, family)
    if "X-Amz-Credential" in query:
        return _query(query, family)
    if "AWSAccessKeyId" in query:  # SigV2 names no region: S3's default
        return Credential(
            "sigv2", query["AWSAccessKeyId"], "us-east-1", "s3", "", (), query.get("Signature", "")
        )
    return None


def _header(value: str, headers: Lookup, family: str) -> Credential | None:
    sigv2 = _SIGV2.match(value)
    if sigv2 is not None:
        return Credential("sigv2", sigv2.group(1), "us-east-1", "s3", "", (), sigv2.group(2))
    algorithm, _, rest = value.strip().partition(" ")
    if algorithm != ALGORITHM:
        return None  # not a credential we read (routing answers the missing credential)
    components: dict[str, str] = {}
    for part in rest.split(","):
        name, equals, content = part.strip().partition("=")
        if name not in _COMPONENTS or not equals or name in components:
            raise malformed(family, f"The authorization header is malformed; {part.strip()!r} is not valid.")
        components[name] = content
    if "Credential" not in components:
        raise malformed(family, "The authorization header is malformed; it has no Credential.")
    signed = tuple(components.get("SignedHeaders", "").split(";")) if "SignedHeaders" in components else ()
    return _credential(
        "header",
        components["Credential"],
        signed,
        components.get("Signature", ""),
        headers.get("X-Amz-Date"),
        family,
    )


def _query(query: dict[str, str], family: str) -> Credential:
    signed = query.get("X-Amz-SignedHeaders")
    return _credential(
        "query",
        query["X-Amz-Credential"],
        tuple(signed.split(";")) if signed else (),
        query.get("X-Amz-Signature", ""),
        query.get("X-Amz-Date"),
        family,
    )


def _credential(
    kind: str, credential: str, signed: tuple[str, ...], signature: str, date: str | None, family: str
) -> Credential:
    found = _SCOPE.fullmatch(credential)
    if found is None:
        raise refusal(
            "missing-credential", family, "Missing Authentication Token: sign the request with SigV4.", 403
        )
    access_key_id, _, region, signing_name = found.groups()
    return Credential(
        kind, access_key_id, region, signing_name, credential.split("/", 1)[1], signed, signature, date or ""
    )
