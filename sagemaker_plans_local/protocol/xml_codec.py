"""XML values by botocore shape: scalars, documents written and read, request bodies.

Responses are written from the output shapes exactly as botocore's parsers
read them: ``locationName`` (``serialization['name']``), ``flattened`` lists
and maps, list member names (``member`` by default), map ``entry``/``key``/
``value`` names, ``xmlAttribute`` and ``xmlNamespace`` (``xml_wire`` puts
header-bound members in HTTP headers). Timestamps are ISO 8601 with
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

from botocore.model import Shape
from botocore.utils import parse_timestamp

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_UTC = datetime.timezone.utc
_INVALID_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
NON_BODY = frozenset({"header", "headers", "statusCode", "uri", "querystring"})


class MalformedRequest(Exception):
    """The request cannot be read back by its shape (bad XML, a number that is not one, ...)."""

    def __init__(self, message: str, member: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.member = member


class BodyTooLarge(MalformedRequest):
    """The request body is larger than its cap (found while reading it, before the rest is read)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"The request body is larger than {limit} bytes.")
        self.limit = limit


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


def _timestamp(text: str) -> datetime.datetime:
    """``text`` as an aware UTC datetime; ``ValueError`` for anything that is not one.

    botocore's ``parse_timestamp`` raises ``RuntimeError`` for numbers past the platform's epoch
    range (``1e20``, ``inf``) and ``OverflowError`` for dates a UTC offset pushes out of years
    1-9999: every one of them is a client's bad value, not a failure of ours.
    """
    try:
        return _utc(parse_timestamp(text))
    except (ValueError, TypeError, OverflowError, RuntimeError, OSError):
        raise ValueError(text) from None


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
            return _timestamp(text.strip())
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


def check_members(shape: Shape, value: Any) -> None:
    if not isinstance(value, dict):
        raise TypeError(f"expected a dict for {shape.name}, got {value!r}")
    unknown = [name for name in value if name not in shape.members]
    if unknown:
        raise ValueError(f"{shape.name} has no member {unknown[0]!r}")


def write_value(out: list[str], shape: Shape, value: Any, tag: str, attributes: str = "") -> None:
    kind = shape.type_name
    if kind == "structure":
        check_members(shape, value)
        children: list[str] = []
        extra: list[str] = []
        for name, member in shape.members.items():
            item = value.get(name)
            if item is None:
                continue
            serialization = member.serialization
            if serialization.get("location") in NON_BODY:
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
            write_value(out, shape.member, item, item_tag)
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
    write_value(out, shape.key, key, shape.key.serialization.get("name", "key"))
    write_value(out, shape.value, item, shape.value.serialization.get("name", "value"))


def _write_member(out: list[str], name: str, member: Shape, value: Any) -> None:
    tag = member_key_name(member, name)
    flattened = member.serialization.get("flattened")
    namespace = _namespace_attribute(member.serialization)
    if member.type_name == "list" and flattened:
        for item in value:
            write_value(out, member.member, item, tag, namespace)
    elif member.type_name == "map" and flattened:
        for key, item in value.items():
            out.append(f"<{tag}{namespace}>")
            _write_entry(out, member, key, item)
            out.append(f"</{tag}>")
    else:
        write_value(out, member, value, tag, namespace)


def xml_document(shape: Shape, value: Any, root: str, namespace: str | None = None) -> bytes:
    """An XML document whose root element ``root`` holds ``value`` (a structure or a scalar of ``shape``)."""
    attributes = _namespace_attribute(shape.serialization) or (
        f' xmlns="{escape(namespace, True)}"' if namespace else ""
    )
    out: list[str] = [XML_DECLARATION]
    write_value(out, shape, value, root, attributes)
    return "".join(out).encode("utf-8")


# -- request bodies ---------------------------------------------------------------------------------


def read_body(body: Any, limit: int | None = None) -> bytes:
    """The whole request body as bytes (botocore may hand bytes, str, a dict or a stream).

    With a ``limit``, a body longer than ``limit`` bytes is :class:`BodyTooLarge`, raised as soon
    as the bytes read pass it (a stream is not read further).
    """
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray, memoryview, str)):
        data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        if limit is not None and len(data) > limit:
            raise BodyTooLarge(limit)
        return data
    if hasattr(body, "read"):
        chunks, size = [], 0
        while chunk := body.read(1024 * 1024 if limit is None else min(1024 * 1024, limit + 1 - size)):
            chunks.append(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            size += len(chunks[-1])
            if limit is not None and size > limit:
                raise BodyTooLarge(limit)
        return b"".join(chunks)
    return read_body(bytes(body), limit)


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
