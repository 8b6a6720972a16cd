"""Who may call the server: the ``Host`` and ``Origin`` checks, and the control API's signatures.

Every request's ``Host`` must name the server as it was started (loopback
names and addresses, the ``--host`` bound, each ``--allowed-host``), so a web
page cannot reach it through DNS rebinding; a browser's cross-origin request
(an ``Origin`` other than the server's own, or ``Sec-Fetch-Site`` cross-site or
same-site) is refused everywhere. With ``--access-key`` a control request must
carry a SigV4 signature (signing name :data:`CONTROL_SIGNING_NAME`) by one of
the keys; :func:`control_request` makes such a request from the environment's
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``. docs/server.md, "Security".
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import os
import re
import urllib.request
from datetime import datetime, timezone
from typing import Iterable, Mapping

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sagemaker_plans_local.server.payload import whole_body_digest_holds

#: The SigV4 signing name of control API requests (any region).
CONTROL_SIGNING_NAME = "sagemaker-plans-local"
#: How far a control signature's ``X-Amz-Date`` may be from the wall clock (AWS's own skew limit).
MAX_SKEW_SECONDS = 15 * 60
#: The error code of a request refused here, by protocol family.
FORBIDDEN = {"json": "AccessDeniedException", "query": "AccessDenied", "rest-xml": "AccessDenied"}
#: The content types a control API POST may have (a browser cannot send them cross-origin unasked).
JSON_TYPES = ("application/json",)
#: How many ``Host`` values a guard remembers its verdict on (then it forgets them all).
HOSTS_KEPT = 1024

# ASCII digits only (``\d`` takes any script's), matched whole (``$`` passes a trailing newline)
_PORT = re.compile(r"[0-9]{1,5}")
_AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256\s+Credential=(?P<key>[^/\s,]+)/(?P<date>[0-9]{8})/(?P<region>[a-z0-9-]+)/"
    r"(?P<service>[a-z0-9-]+)/aws4_request,\s*SignedHeaders=(?P<signed>[a-z0-9;-]+),\s*"
    r"Signature=(?P<signature>[0-9a-f]{64})",
    re.ASCII,
)


def host_name(host: str) -> str | None:
    """The name in a ``Host`` value (lower case, no port, no trailing dot); None if malformed."""
    host = host.strip().lower()
    if host.startswith("["):
        name, bracket, port = host[1:].partition("]")
        if not bracket or (port and not (port[0] == ":" and _PORT.fullmatch(port[1:]))):
            return None
        return name
    name, colon, port = host.rpartition(":") if ":" in host else (host, "", "")
    if colon and not _PORT.fullmatch(port):
        return None
    name = name.rstrip(".")
    return name if name and ":" not in name else None


@functools.lru_cache(maxsize=1024)
def is_loopback(name: str) -> bool:
    """``localhost``, a name under ``.localhost`` (RFC 6761), or a loopback address (127/8, ``::1``)."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


class Guard:
    """The ``Host`` names the server answers: loopback, ``bound`` and ``allowed`` (``*.x``: under x; ``*``: any)."""

    def __init__(self, bound: str, allowed: Iterable[str] = ()) -> None:
        names = {name.strip().lower().rstrip(".") for name in (bound, *allowed)}
        names = {name[1:-1] if name.startswith("[") and name.endswith("]") else name for name in names}
        self.any_host = "*" in names
        self._names = frozenset(names)
        self._suffixes = tuple(name[1:] for name in names if name.startswith("*."))
        self._hosts: dict[str, bool] = {}  # Host value -> allowed (the last HOSTS_KEPT seen)

    def allows(self, name: str) -> bool:
        """Whether ``name`` (from :func:`host_name`) is one of the server's names."""
        return self.any_host or name in self._names or is_loopback(name) or name.endswith(self._suffixes)

    def refusal(self, headers: Mapping[str, str]) -> str | None:
        """Why a request with these headers is refused (None: it is not)."""
        host = headers.get("Host")
        if host is not None and not self._allows_host(host):
            return (
                f"The Host header {host!r} is not a name this server was started on "
                "(start it with --allowed-host NAME to add one)."
            )
        origin = headers.get("Origin")
        if origin is not None and (host is None or origin.lower() not in _own_origins(host)):
            return f"Cross-origin requests are not served (Origin {origin!r})."
        if (headers.get("Sec-Fetch-Site") or "").lower() in ("cross-site", "same-site"):
            return "Cross-site requests from a browser are not served."
        return None

    def _allows_host(self, host: str) -> bool:
        """Whether a ``Host`` value names the server (remembered: a client sends the same one)."""
        allowed = self._hosts.get(host)
        if allowed is None:
            name = host_name(host)
            allowed = name is not None and self.allows(name)
            if len(self._hosts) >= HOSTS_KEPT:
                self._hosts.clear()
            self._hosts[host] = allowed
        return allowed


def _own_origins(host: str) -> tuple[str, str]:
    host = host.strip().lower()
    return f"http://{host}", f"https://{host}"


def control_type_refusal(content_type: str | None) -> str | None:
    """Why a control POST with this ``Content-Type`` is refused (None: it is JSON)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in JSON_TYPES:
        return None
    return f"A control request's body must be sent as application/json, not {content_type or 'no type'!r}."


def control_signature_refusal(
    method: str, url: str, headers: Mapping[str, str], body: bytes, secrets: Mapping[str, str]
) -> str | None:
    """Why a control request is not signed by one of ``secrets`` (None: its SigV4 signature holds).

    ``url`` is as the client sent it (``http://<Host><raw path>[?<raw query>]``).
    """
    match = _AUTHORIZATION.fullmatch(headers.get("Authorization") or "")
    if match is None:
        return (
            "The control API needs a SigV4 signature (signing name "
            f"{CONTROL_SIGNING_NAME!r}) by one of the server's --access-key keys."
        )
    secret = secrets.get(match["key"])
    signed = match["signed"].split(";")
    if secret is None:
        return f"The access key id {match['key']} is not configured."
    if "host" not in signed or "x-amz-date" not in signed or match["service"] != CONTROL_SIGNING_NAME:
        return f"A control signature covers host and x-amz-date, with signing name {CONTROL_SIGNING_NAME!r}."
    stamp = headers.get("X-Amz-Date") or ""
    if not _recent(stamp, match["date"]):
        return "The signature's X-Amz-Date is more than 15 minutes from the server's time."
    if not whole_body_digest_holds(headers, body):  # as the services check it (server/payload.py)
        return "The X-Amz-Content-SHA256 header is not the SHA-256 of the body (UNSIGNED-PAYLOAD is not)."
    signable = AWSRequest(method=method, url=url, headers={n: headers.get(n, "") for n in signed}, data=body)
    signable.context["timestamp"] = stamp
    auth = SigV4Auth(Credentials(match["key"], secret), CONTROL_SIGNING_NAME, match["region"])
    expected = auth.signature(auth.string_to_sign(signable, auth.canonical_request(signable)), signable)
    if not hmac.compare_digest(expected, match["signature"]):
        return "The request signature we calculated does not match the signature you provided."
    return None


def control_key_id(headers: Mapping[str, str]) -> str | None:
    """The access key id of a control request's ``Authorization`` (verified by
    :func:`control_signature_refusal` first); None if it has none."""
    match = _AUTHORIZATION.fullmatch(headers.get("Authorization") or "")
    return None if match is None else match["key"]


def _recent(stamp: str, scope_date: str) -> bool:
    try:
        moment = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return False
    skew = abs((datetime.now(timezone.utc) - moment).total_seconds())
    return stamp.startswith(scope_date) and skew <= MAX_SKEW_SECONDS


def control_request(
    url: str, body: bytes | None = None, method: str | None = None, credentials: Credentials | None = None
) -> urllib.request.Request:
    """A control API request to ``url`` (JSON ``body``: a POST), SigV4-signed with ``credentials``,
    by default the environment's ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` when both are
    set (what a server with ``--access-key`` needs); unsigned without any."""
    method = method or ("GET" if body is None else "POST")
    headers = {"Content-Type": "application/json"}
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if credentials is None and key and secret:
        credentials = Credentials(key, secret, os.environ.get("AWS_SESSION_TOKEN") or None)
    if credentials is not None:
        signable = AWSRequest(method=method, url=url, headers=headers, data=body or b"")
        SigV4Auth(credentials, CONTROL_SIGNING_NAME, "us-east-1").add_auth(signable)
        headers = dict(signable.headers.items())
    return urllib.request.Request(url, body, headers, method=method)
