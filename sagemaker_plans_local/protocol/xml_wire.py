"""The rest-xml and query wire formats, driven by the botocore shapes.

Requests are read back from what botocore serialized (the ``request_dict`` a
``before-call`` handler receives): URI labels, query-string, header and
header-map members, and the payload (a stream, or an XML document) for
rest-xml; the form fields for query. Values come back typed as a boto3 caller
gave them (``int``, ``bool``, aware UTC ``datetime``, ``bytes``).

Responses are written from the output shapes by ``xml_codec`` (see there how
botocore's parsers read them); header-bound members (``location: header``)
and header maps (``location: headers``, e.g. ``x-amz-meta-``) become HTTP
headers, RFC 822 timestamps unless the shape's ``timestampFormat`` says otherwise.
"""

from __future__ import annotations

import re
from typing import Any, Collection
from urllib.parse import parse_qsl, unquote, urlsplit

from botocore.model import OperationModel, Shape

from sagemaker_plans_local.protocol.xml_codec import (
    XML_DECLARATION,
    MalformedRequest,
    body_stream,
    check_members,
    escape,
    parse_scalar,
    read_body,
    scalar_text,
    write_value,
    xml_document,
)
from sagemaker_plans_local.protocol.xml_reader import DEFAULT_LIMITS, XmlLimits, read_xml

_LABEL = re.compile(r"\{([^}+]+)(\+?)\}")


# -- rest-xml requests ------------------------------------------------------------------------------


class _Headers:
    """Case-insensitive view of request headers."""

    def __init__(self, headers: Any) -> None:
        self._items = {str(k).lower(): (str(k), v) for k, v in (headers or {}).items()}

    def get(self, name: str) -> Any:
        found = self._items.get(name.lower())
        return None if found is None else found[1]

    def with_prefix(self, prefix: str) -> dict[str, Any]:
        prefix = prefix.lower()
        return {
            original[len(prefix) :]: value
            for lower, (original, value) in self._items.items()
            if lower.startswith(prefix)
        }


def _uri_template(operation: OperationModel) -> str:
    return operation.http.get("requestUri", "/").split("?", 1)[0]


def request_path(operation: OperationModel, request_dict: dict) -> str:
    """The path-style request path (``/<bucket>/<key>``), whatever addressing botocore used.

    botocore strips ``/{Bucket}`` from S3's URIs (the bucket goes in the
    host, or in the endpoint's path for path-style addressing) and keeps the
    full path in ``auth_path`` for signing.
    """
    auth_path = request_dict.get("auth_path")
    if auth_path:
        return auth_path.split("?", 1)[0]
    url_path = (request_dict.get("url_path") or "/").split("?", 1)[0]
    if not _uri_template(operation).startswith("/{Bucket}"):
        return url_path
    url = urlsplit(request_dict.get("url") or "")
    if url.path != url_path and url.path.endswith(url_path.lstrip("/")):
        return url.path  # path style: the endpoint path holds the bucket
    bucket = (url.hostname or "").split(".", 1)[0]
    return "/" + bucket + (url_path if url_path != "/" else "")


def _uri_labels(operation: OperationModel, path: str) -> dict[str, str]:
    template = _uri_template(operation)
    pattern, last = [], 0
    for match in _LABEL.finditer(template):
        pattern.append(re.escape(template[last : match.start()]))
        name = match.group(1)
        pattern.append(f"(?P<{name}>.*)" if match.group(2) else f"(?P<{name}>[^/]*)")
        last = match.end()
    pattern.append(re.escape(template[last:]))
    found = re.fullmatch("".join(pattern) + "/?", path, re.DOTALL)
    if found is None:
        raise MalformedRequest(f"The request path {path!r} does not match {template!r}")
    return {name: unquote(value) for name, value in found.groupdict().items()}


def _typed(shape: Shape, value: Any, member: str) -> Any:
    if shape.type_name == "list":
        items = value if isinstance(value, list) else [part.strip() for part in str(value).split(",")]
        return [parse_scalar(shape.member, item, member) for item in items]
    return parse_scalar(shape, value, member)


def read_rest_request(
    operation: OperationModel,
    request_dict: dict,
    limits: XmlLimits = DEFAULT_LIMITS,
    lenient: Collection[str] = (),
) -> dict:
    """The parameters of a rest-xml request, as the caller passed them to boto3.

    A streaming payload member (e.g. PutObject's ``Body``) is left as the
    bytes or stream botocore was given, unread; any other payload is read
    under ``limits`` (``xml_reader``). A header member named in ``lenient``
    whose value cannot be read is left out rather than refused (HTTP's rule for
    ``If-Modified-Since``).
    """
    shape = operation.input_shape
    if shape is None:
        return {}
    labels = _uri_labels(operation, request_path(operation, request_dict))
    query = request_dict.get("query_string") or {}
    if isinstance(query, str):
        query = dict(parse_qsl(query, keep_blank_values=True))
    headers = _Headers(request_dict.get("headers"))
    params: dict[str, Any] = {}
    for name, member in shape.members.items():
        serialization = member.serialization
        location = serialization.get("location")
        wire_name = serialization.get("name", name)
        if location == "uri":
            if wire_name in labels:
                params[name] = labels[wire_name]
        elif location == "querystring":
            if member.type_name == "map":
                params[name] = {k: v for k, v in query.items()}
            elif wire_name in query:
                params[name] = _typed(member, query[wire_name], name)
        elif location == "header":
            value = headers.get(wire_name)
            if value is not None:
                _header_member(params, name, member, value, name in lenient)
        elif location == "headers":
            found = headers.with_prefix(wire_name)
            if found:
                params[name] = found
    payload = shape.serialization.get("payload")
    if payload:
        _read_payload(shape.members[payload], payload, request_dict.get("body"), limits, params)
    return params


def _header_member(params: dict, name: str, member: Shape, value: Any, lenient: bool) -> None:
    try:
        params[name] = _typed(member, value, name)
    except MalformedRequest:
        if not lenient:
            raise


def _read_payload(member: Shape, name: str, body: Any, limits: XmlLimits, params: dict) -> None:
    if member.type_name == "blob" and member.serialization.get("streaming"):
        params[name] = body_stream(body)
    elif member.type_name in ("blob", "string"):
        data = read_body(body, limits.max_bytes)
        try:
            params[name] = data if member.type_name == "blob" else data.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedRequest("The request body is not UTF-8 text.") from None
    else:
        document = read_xml(member, body, limits)
        if document is not None:
            params[name] = document


# -- rest-xml responses -----------------------------------------------------------------------------


def header_text(shape: Shape, value: Any) -> str:
    if shape.type_name == "list":
        return ",".join(scalar_text(shape.member, item, "rfc822") for item in value)
    return scalar_text(shape, value, "rfc822")


def rest_response(
    shape: Shape | None, result: dict, root: str | None = None, namespace: str | None = None
) -> tuple[dict[str, str], Any]:
    """(headers, body) of a rest-xml answer holding ``result`` (a structure of ``shape``).

    The payload member's value is the body when it is a blob or string
    (bytes or a stream); otherwise the body members form an XML document
    rooted at ``root`` (default: the payload's element name, or the shape name).
    """
    headers: dict[str, str] = {}
    if shape is None:
        return headers, b""
    check_members(shape, result)
    body_members: dict[str, Any] = {}
    for name, member in shape.members.items():
        value = result.get(name)
        if value is None:
            continue
        serialization = member.serialization
        location = serialization.get("location")
        if location == "header":
            headers[serialization.get("name", name)] = header_text(member, value)
        elif location == "headers":
            prefix = serialization.get("name", "")
            for key, item in value.items():
                headers[prefix + key] = str(item)
        elif location is None:
            body_members[name] = value
    payload = shape.serialization.get("payload")
    if payload:
        member = shape.members[payload]
        value = body_members.get(payload)
        if value is None:
            return headers, b""
        if member.type_name in ("blob", "string"):
            return headers, value.encode("utf-8") if isinstance(value, str) else value
        element = root or member.serialization.get("name") or payload
        return headers, xml_document(member, value, element, namespace)
    if not body_members:
        return headers, b""
    return headers, xml_document(shape, body_members, root or shape.name, namespace)


# -- query protocol -----------------------------------------------------------------------------------


def _present(flat: dict, prefix: str) -> bool:
    dotted = prefix + "."
    return any(key == prefix or key.startswith(dotted) for key in flat)


def _read_query(shape: Shape, flat: dict, prefix: str) -> Any:
    kind = shape.type_name
    if kind == "structure":
        out = {}
        for name, member in shape.members.items():
            key = member.serialization.get("name", name)
            key = f"{prefix}.{key}" if prefix else key
            if _present(flat, key):
                out[name] = _read_query(member, flat, key)
        return out
    if kind == "list":
        if flat.get(prefix) == "":
            return []
        if shape.serialization.get("flattened"):
            name = shape.member.serialization.get("name")
            base = ".".join(prefix.split(".")[:-1] + [name]) if name else prefix
        else:
            base = f"{prefix}.{shape.member.serialization.get('name', 'member')}"
        items, index = [], 1
        while _present(flat, f"{base}.{index}"):
            items.append(_read_query(shape.member, flat, f"{base}.{index}"))
            index += 1
        return items
    if kind == "map":
        base = prefix if shape.serialization.get("flattened") else f"{prefix}.entry"
        key_name = shape.key.serialization.get("name", "key")
        value_name = shape.value.serialization.get("name", "value")
        out, index = {}, 1
        while _present(flat, f"{base}.{index}"):
            key = _read_query(shape.key, flat, f"{base}.{index}.{key_name}")
            out[key] = _read_query(shape.value, flat, f"{base}.{index}.{value_name}")
            index += 1
        return out
    return parse_scalar(shape, flat.get(prefix), prefix)


def read_query_request(shape: Shape | None, body: Any) -> dict:
    """The parameters of a query-protocol request (a dict of form fields, or its urlencoded text)."""
    if isinstance(body, dict):
        flat = {str(k): v for k, v in body.items()}
    else:
        try:
            text = read_body(body).decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedRequest("The request body is not UTF-8 text.") from None
        flat = dict(parse_qsl(text, keep_blank_values=True))
    if shape is None:
        return {}
    return _read_query(shape, flat, "")


def query_response(operation: OperationModel, result: dict, request_id: str, namespace: str) -> bytes:
    """A query-protocol answer: ``<OpResponse><OpResult>...</OpResult><ResponseMetadata>``."""
    out: list[str] = [XML_DECLARATION, f'<{operation.name}Response xmlns="{escape(namespace, True)}">']
    shape = operation.output_shape
    if shape is not None:
        wrapper = shape.serialization.get("resultWrapper") or f"{operation.name}Result"
        write_value(out, shape, result, wrapper)
    out.append(f"<ResponseMetadata><RequestId>{escape(request_id)}</RequestId></ResponseMetadata>")
    out.append(f"</{operation.name}Response>")
    return "".join(out).encode("utf-8")


def query_error(code: str, message: str, request_id: str, namespace: str, sender: bool = True) -> bytes:
    return (
        f'{XML_DECLARATION}<ErrorResponse xmlns="{escape(namespace, True)}"><Error>'
        f"<Type>{'Sender' if sender else 'Receiver'}</Type><Code>{escape(code)}</Code>"
        f"<Message>{escape(message)}</Message></Error><RequestId>{escape(request_id)}</RequestId>"
        f"</ErrorResponse>"
    ).encode("utf-8")


def s3_error(code: str, message: str, request_id: str, host_id: str, fields: dict | None = None) -> bytes:
    """S3's error document: ``<Error><Code/><Message/>...<RequestId/><HostId/></Error>``."""
    parts = [XML_DECLARATION, f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"]
    for name, value in (fields or {}).items():
        if value is not None:
            parts.append(f"<{name}>{escape(str(value))}</{name}>")
    parts.append(f"<RequestId>{escape(request_id)}</RequestId><HostId>{escape(host_id)}</HostId></Error>")
    return "".join(parts).encode("utf-8")
