"""The rest-xml and query wire formats, driven by the botocore shapes.

Requests are read back from what botocore serialized (the ``request_dict`` a
``before-call`` handler receives): URI labels, query-string, header and
header-map members, and the payload (a stream, or an XML document) for
rest-xml; the form fields for query. Values come back typed as a boto3 caller
gave them (``int``, ``bool``, aware UTC ``datetime``, ``bytes``).

Responses are written from the output shapes exactly as botocore's parsers
read them: ``locationName`` (``serialization['name']``), ``flattened`` lists
and maps, list member names (``member`` by default), map ``entry``/``key``/
``value`` names, ``xmlAttribute`` and ``xmlNamespace``; header-bound
members (``location: header``) and header maps (``location: headers``, e.g.
``x-amz-meta-``) become HTTP headers. Timestamps are ISO 8601 with
milliseconds in XML and RFC 822 in headers unless the shape's
``timestampFormat`` says otherwise. A member the shape does not define is a
programming error (``ValueError``).

XML 1.0 cannot carry every character: ``\\r`` is written as ``&#13;`` (so it
survives parsing) and characters XML forbids (most C0 controls, lone
surrogates) are replaced by U+FFFD. S3 listings avoid the problem with
``EncodingType=url``, which boto3 always requests.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import email.utils
import io
import re
from typing import Any, BinaryIO
from urllib.parse import parse_qsl, unquote, urlsplit
from xml.etree import ElementTree

from botocore.model import OperationModel, Shape
from botocore.utils import parse_timestamp

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_UTC = datetime.timezone.utc
_INVALID_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_NON_BODY = frozenset({"header", "headers", "statusCode", "uri", "querystring"})
_LABEL = re.compile(r"\{([^}+]+)(\+?)\}")


class MalformedRequest(Exception):
    """The request cannot be read back by its shape (bad XML, a number that is not one, ...)."""

    def __init__(self, message: str, member: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.member = member


# -- scalars ----------------------------------------------------------------------------------


def _utc(value: datetime.datetime) -> datetime.datetime:
    return value.replace(tzinfo=_UTC) if value.tzinfo is None else value.astimezone(_UTC)


def timestamp_text(value: Any, timestamp_format: str) -> str:
    if not isinstance(value, datetime.datetime):
        raise TypeError(f"expected a datetime for a timestamp, got {value!r}")
    value = _utc(value)
    if timestamp_format == "rfc822":
        return email.utils.format_datetime(value, usegmt=True)
    if timestamp_format == "unixTimestamp":
        seconds = value.timestamp()
        return str(int(seconds)) if seconds == int(seconds) else repr(seconds)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def scalar_text(shape: Shape, value: Any, default_timestamp_format: str = "iso8601") -> str:
    """The wire text of a scalar value of ``shape``."""
    kind = shape.type_name
    if kind == "boolean":
        if not isinstance(value, bool):
            raise TypeError(f"expected a bool for {shape.name}, got {value!r}")
        return "true" if value else "false"
    if kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"expected an int for {shape.name}, got {value!r}")
        return str(value)
    if kind in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"expected a number for {shape.name}, got {value!r}")
        return repr(float(value))
    if kind == "timestamp":
        return timestamp_text(value, shape.serialization.get("timestampFormat") or default_timestamp_format)
    if kind == "blob":
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"expected bytes for {shape.name}, got {value!r}")
        return base64.b64encode(value).decode("ascii")
    if kind == "string":
        if not isinstance(value, str):
            raise TypeError(f"expected a str for {shape.name}, got {value!r}")
        return value
    raise TypeError(f"{shape.name} is not a scalar shape ({kind})")


def parse_scalar(shape: Shape, text: Any, member: str) -> Any:
    """A request scalar from its wire text (``MalformedRequest`` if it cannot be one)."""
    kind = shape.type_name
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    try:
        if kind == "boolean":
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                raise ValueError(text)
            return lowered == "true"
        if kind in ("integer", "long"):
            return int(text.strip())
        if kind in ("float", "double"):
            return float(text.strip())
        if kind == "timestamp":
            return _utc(parse_timestamp(text.strip()))
        if kind == "blob":
            return base64.b64decode(text, validate=True)
    except (ValueError, TypeError, OverflowError, binascii.Error):
        raise MalformedRequest(f"Invalid value {text!r} for {member}", member) from None
    return text


# -- XML writing --------------------------------------------------------------------------------


def escape(text: str, attribute: bool = False) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    if attribute:
        text = text.replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")
    return _INVALID_XML.sub("\ufffd", text)


def member_key_name(shape: Shape, member_name: str) -> str:
    """The XML element name of a structure member (as botocore's XML parsers look it up)."""
    if shape.type_name == "list" and shape.serialization.get("flattened"):
        name = shape.member.serialization.get("name")
        if name is not None:
            return name
    return shape.serialization.get("name") or member_name


def _namespace_attribute(serialization: dict) -> str:
    namespace = serialization.get("xmlNamespace")
    if not namespace:
        return ""
    if isinstance(namespace, str):
        return f' xmlns="{escape(namespace, True)}"'
    prefix = namespace.get("prefix")
    name = f"xmlns:{prefix}" if prefix else "xmlns"
    return f' {name}="{escape(namespace["uri"], True)}"'


def _check_members(shape: Shape, value: Any) -> None:
    if not isinstance(value, dict):
        raise TypeError(f"expected a dict for {shape.name}, got {value!r}")
    unknown = [name for name in value if name not in shape.members]
    if unknown:
        raise ValueError(f"{shape.name} has no member {unknown[0]!r}")


def _write(out: list[str], shape: Shape, value: Any, tag: str, attributes: str = "") -> None:
    kind = shape.type_name
    if kind == "structure":
        _check_members(shape, value)
        children: list[str] = []
        extra: list[str] = []
        for name, member in shape.members.items():
            item = value.get(name)
            if item is None:
                continue
            serialization = member.serialization
            if serialization.get("location") in _NON_BODY:
                continue
            if serialization.get("xmlAttribute"):
                text = escape(scalar_text(member, item), True)
                extra.append(f' {serialization.get("name", name)}="{text}"')
                continue
            _write_member(children, name, member, item)
        out.append(f"<{tag}{attributes}{''.join(extra)}>")
        out.extend(children)
        out.append(f"</{tag}>")
    elif kind == "list":
        item_tag = shape.member.serialization.get("name", "member")
        out.append(f"<{tag}{attributes}>")
        for item in value:
            _write(out, shape.member, item, item_tag)
        out.append(f"</{tag}>")
    elif kind == "map":
        out.append(f"<{tag}{attributes}>")
        for key, item in value.items():
            out.append("<entry>")
            _write_entry(out, shape, key, item)
            out.append("</entry>")
        out.append(f"</{tag}>")
    else:
        out.append(f"<{tag}{attributes}>{escape(scalar_text(shape, value))}</{tag}>")


def _write_entry(out: list[str], shape: Shape, key: Any, item: Any) -> None:
    _write(out, shape.key, key, shape.key.serialization.get("name", "key"))
    _write(out, shape.value, item, shape.value.serialization.get("name", "value"))


def _write_member(out: list[str], name: str, member: Shape, value: Any) -> None:
    tag = member_key_name(member, name)
    flattened = member.serialization.get("flattened")
    namespace = _namespace_attribute(member.serialization)
    if member.type_name == "list" and flattened:
        for item in value:
            _write(out, member.member, item, tag, namespace)
    elif member.type_name == "map" and flattened:
        for key, item in value.items():
            out.append(f"<{tag}{namespace}>")
            _write_entry(out, member, key, item)
            out.append(f"</{tag}>")
    else:
        _write(out, member, value, tag, namespace)


def xml_document(shape: Shape, value: dict, root: str, namespace: str | None = None) -> bytes:
    """An XML document whose root element ``root`` holds ``value`` (a structure of ``shape``)."""
    attributes = _namespace_attribute(shape.serialization) or (
        f' xmlns="{escape(namespace, True)}"' if namespace else "")
    out: list[str] = [XML_DECLARATION]
    _write(out, shape, value, root, attributes)
    return "".join(out).encode("utf-8")


# -- XML reading (request payloads) ---------------------------------------------------------------


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _read(shape: Shape, node: Any, path: str) -> Any:
    kind = shape.type_name
    if kind == "structure":
        element = node[0] if isinstance(node, list) else node
        grouped: dict[str, list] = {}
        for child in element:
            grouped.setdefault(_local(child.tag), []).append(child)
        out: dict[str, Any] = {}
        for name, member in shape.members.items():
            serialization = member.serialization
            if serialization.get("location") in _NON_BODY:
                continue
            if serialization.get("xmlAttribute"):
                attribute = serialization.get("name", name)
                for key, text in element.attrib.items():
                    if _local(key) == attribute.split(":")[-1]:
                        out[name] = parse_scalar(member, text, f"{path}.{name}")
                continue
            found = grouped.get(member_key_name(member, name))
            if not found:
                continue
            flattened = serialization.get("flattened") and member.type_name in ("list", "map")
            out[name] = _read(member, found if flattened else found[0], f"{path}.{name}" if path else name)
        return out
    if kind == "list":
        if shape.serialization.get("flattened"):
            items = node if isinstance(node, list) else [node]
        else:
            items = list(node[0] if isinstance(node, list) else node)
        return [_read(shape.member, item, path) for item in items]
    if kind == "map":
        entries = node if shape.serialization.get("flattened") else list(node)
        key_tag = shape.key.serialization.get("name", "key")
        value_tag = shape.value.serialization.get("name", "value")
        out = {}
        for entry in entries:
            children = {_local(child.tag): child for child in entry}
            if key_tag in children:
                key = _read(shape.key, children[key_tag], path)
                out[key] = _read(shape.value, children[value_tag], path) if value_tag in children else None
        return out
    element = node[0] if isinstance(node, list) else node
    return parse_scalar(shape, element.text or "", path)


def read_xml(shape: Shape, document: bytes) -> dict:
    """A request structure from its XML document (``MalformedRequest`` if it is not well-formed)."""
    try:
        root = ElementTree.fromstring(document)
    except ElementTree.ParseError:
        raise MalformedRequest("The XML you provided was not well-formed or did not validate "
                               "against our published schema") from None
    return _read(shape, root, "")


# -- request bodies ---------------------------------------------------------------------------------


def read_body(body: Any) -> bytes:
    """The whole request body as bytes (botocore may hand bytes, str, a dict or a stream)."""
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):
        chunks = []
        while True:
            chunk = body.read(1024 * 1024)
            if not chunk:
                break
            chunks.append(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        return b"".join(chunks)
    return bytes(body)


def body_stream(body: Any) -> BinaryIO | bytes:
    """The request body as bytes or a readable binary stream, without reading a stream."""
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if hasattr(body, "read"):
        return body
    return io.BytesIO(bytes(body))


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
        return {original[len(prefix):]: value for lower, (original, value) in self._items.items()
                if lower.startswith(prefix)}


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
        pattern.append(re.escape(template[last:match.start()]))
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


def read_rest_request(operation: OperationModel, request_dict: dict) -> dict:
    """The parameters of a rest-xml request, as the caller passed them to boto3.

    A streaming payload member (e.g. PutObject's ``Body``) is left as the
    bytes or stream botocore was given, unread.
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
    payload = shape.serialization.get("payload")
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
                params[name] = _typed(member, value, name)
        elif location == "headers":
            found = headers.with_prefix(wire_name)
            if found:
                params[name] = found
    if payload:
        member = shape.members[payload]
        body = request_dict.get("body")
        if member.type_name == "blob" and member.serialization.get("streaming"):
            params[payload] = body_stream(body)
        elif member.type_name in ("blob", "string"):
            data = read_body(body)
            params[payload] = data if member.type_name == "blob" else data.decode("utf-8")
        else:
            data = read_body(body)
            if data.strip():
                params[payload] = read_xml(member, data)
    return params


# -- rest-xml responses -----------------------------------------------------------------------------


def header_text(shape: Shape, value: Any) -> str:
    if shape.type_name == "list":
        return ",".join(scalar_text(shape.member, item, "rfc822") for item in value)
    return scalar_text(shape, value, "rfc822")


def rest_response(shape: Shape | None, result: dict, root: str | None = None,
                  namespace: str | None = None) -> tuple[dict[str, str], Any]:
    """(headers, body) of a rest-xml answer holding ``result`` (a structure of ``shape``).

    The payload member's value is the body when it is a blob or string
    (bytes or a stream); otherwise the body members form an XML document
    rooted at ``root`` (default: the payload's element name, or the shape name).
    """
    headers: dict[str, str] = {}
    if shape is None:
        return headers, b""
    _check_members(shape, result)
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
        _write(out, shape, result, wrapper)
    out.append(f"<ResponseMetadata><RequestId>{escape(request_id)}</RequestId></ResponseMetadata>")
    out.append(f"</{operation.name}Response>")
    return "".join(out).encode("utf-8")


def query_error(code: str, message: str, request_id: str, namespace: str, sender: bool = True) -> bytes:
    return (f'{XML_DECLARATION}<ErrorResponse xmlns="{escape(namespace, True)}"><Error>'
            f"<Type>{'Sender' if sender else 'Receiver'}</Type><Code>{escape(code)}</Code>"
            f"<Message>{escape(message)}</Message></Error><RequestId>{escape(request_id)}</RequestId>"
            f"</ErrorResponse>").encode("utf-8")


def s3_error(code: str, message: str, request_id: str, host_id: str, fields: dict | None = None) -> bytes:
    """S3's error document: ``<Error><Code/><Message/>...<RequestId/><HostId/></Error>``."""
    parts = [XML_DECLARATION, f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"]
    for name, value in (fields or {}).items():
        if value is not None:
            parts.append(f"<{name}>{escape(str(value))}</{name}>")
    parts.append(f"<RequestId>{escape(request_id)}</RequestId><HostId>{escape(host_id)}</HostId></Error>")
    return "".join(parts).encode("utf-8")
