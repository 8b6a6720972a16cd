"""Which service, region, account and operation an HTTP request is for.

The service and region come from the request's one credential
(``server/credentials.py``: the ``Authorization`` header, or a presigned URL's
``X-Amz-Credential``; the same credential the signature checker verifies); the
account from its access key id (12 digits: that account; anything else:
:data:`DEFAULT_ACCOUNT`). The operation of an awsJson service comes from
``X-Amz-Target``, of a query service from the form's ``Action``; S3's from
``server.s3_routes``.
"""

from __future__ import annotations

import functools
import re
from typing import Mapping, NamedTuple
from urllib.parse import parse_qs

from sagemaker_plans_local.core.arns import is_account_id
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.server import credentials
from sagemaker_plans_local.server.credentials import Lookup
from sagemaker_plans_local.server.errors import RouteError, refusal

DEFAULT_ACCOUNT = "123456789012"
#: SigV4 signing names -> the botocore names of the emulated services.
SIGNING_NAMES = {
    "sagemaker": "sagemaker",
    "s3": "s3",
    "sts": "sts",
    "iam": "iam",
    "logs": "logs",
    "tagging": "resourcegroupstaggingapi",
}
#: The protocol family of each emulated service (how its errors are shaped).
FAMILIES = {
    "sagemaker": "json",
    "logs": "json",
    "resourcegroupstaggingapi": "json",
    "sts": "query",
    "iam": "query",
    "s3": "rest-xml",
}

_REAL_KEY = re.compile(r"^(AKIA|ASIA)[A-Z0-9]{16}$")  # a refusal: a trailing newline still looks real


class Scope(NamedTuple):
    """What a request's credential says: access key id, region, (botocore) service name, the credential."""

    access_key_id: str
    region: str
    service: str
    credential: credentials.Credential

    @property
    def account(self) -> str:
        return account_for(self.access_key_id)


def signing_name(service: str) -> str:
    """The SigV4 signing name of an emulated service (botocore name)."""
    return next(name for name, botocore_name in SIGNING_NAMES.items() if botocore_name == service)


def account_for(access_key_id: str) -> str:
    """The account an access key id selects: itself if 12 ASCII digits, else the default account."""
    return access_key_id if is_account_id(access_key_id) else DEFAULT_ACCOUNT


def looks_real(access_key_id: str) -> bool:
    """Whether the key id has the form of a real AWS key (``AKIA``/``ASIA`` and 16 more)."""
    return bool(_REAL_KEY.match(access_key_id))


def guess_family(headers: Lookup) -> str:
    """The protocol family a request without a usable credential looks like it is for."""
    if headers.get("X-Amz-Target"):
        return "json"
    if (headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
        return "query"
    return "rest-xml"


def scope(headers: Lookup, raw_query: str) -> Scope:
    """The request's credential scope, from its one credential (``server/credentials.py``).

    A :class:`RouteError` if it has none, names it twice or names no emulated service.
    """
    family = guess_family(headers)
    credential = credentials.parse(headers, raw_query, family)
    if credential is None:
        raise refusal(
            "missing-credential", family, "Missing Authentication Token: sign the request with SigV4.", 403
        )
    service = SIGNING_NAMES.get(credential.signing_name)
    if service is None:
        raise RouteError(
            "NotImplemented",
            f"sagemaker-plans-local emulates {', '.join(sorted(SIGNING_NAMES))}, "
            f"not {credential.signing_name!r}.",
            501,
        )
    return Scope(credential.access_key_id, credential.region, service, credential)


def json_operation(service: str, method: str, target: str | None) -> str:
    """The awsJson operation ``X-Amz-Target`` names (``<targetPrefix>.<Operation>``)."""
    if method != "POST":
        raise RouteError(
            "UnknownOperationException",
            f"{service_model(service).service_id} answers POST only, not {method}.",
        )
    prefix, _, name = (target or "").partition(".")
    if prefix != service_model(service).metadata["targetPrefix"] or name not in _operations(service):
        raise RouteError("UnknownOperationException", f"Unknown operation {target!r}.")
    return name


@functools.lru_cache(maxsize=None)
def _operations(service: str) -> frozenset[str]:
    """The service's operation names (botocore's is a list: a set looks one up at once)."""
    return frozenset(service_model(service).operation_names)


def query_operation(service: str, method: str, body: bytes, args: Mapping[str, str]) -> str:
    """The query-protocol operation the form's (or the URL's) ``Action`` names."""
    if method not in ("POST", "GET"):
        raise RouteError("InvalidAction", f"The query protocol answers GET and POST, not {method}.")
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        raise RouteError("MalformedQueryString", "The request body is not UTF-8 form data.") from None
    action = (form.get("Action") or [args.get("Action") or ""])[0]
    if not action:
        raise RouteError("MissingAction", "The request must contain the parameter Action.")
    if action not in _operations(service):
        raise RouteError("InvalidAction", f"The action {action} is not valid for this web service.")
    return action


def family_of(service: str) -> str:
    """The protocol family of an emulated service."""
    return FAMILIES[service]
