"""Request XML read by botocore shape, with bounded memory.

The document is parsed incrementally (expat, fed 64 KiB at a time from the body
stream) under :class:`XmlLimits`: a byte cap (:class:`BodyTooLarge` as soon as the
bytes read pass it, the rest unread), an element cap and a depth cap
(``MalformedRequest``). A DOCTYPE, and with it every entity declaration, is refused,
so no entity expands and nothing external is fetched. Memory is the tree of at most
``max_elements`` elements holding at most ``max_bytes`` of text: a small multiple of
the caps, whatever the body's size.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree
from xml.parsers import expat

from botocore.model import Shape

from sagemaker_plans_local.protocol.xml_codec import (
    NON_BODY,
    BodyTooLarge,
    MalformedRequest,
    member_key_name,
    parse_scalar,
)

MALFORMED_XML = "The XML you provided was not well-formed or did not validate against our published schema"
_FEED = 64 * 1024


@dataclass(frozen=True)
class XmlLimits:
    """The caps of one XML request body: bytes, elements, nesting depth."""

    max_bytes: int = 1024 * 1024
    max_elements: int = 10_000
    max_depth: int = 32


DEFAULT_LIMITS = XmlLimits()


class _Builder:
    """expat's handlers onto an ``ElementTree.TreeBuilder``, counting elements and depth."""

    def __init__(self, limits: XmlLimits) -> None:
        self.limits = limits
        self.tree = ElementTree.TreeBuilder()
        self.elements = 0
        self.depth = 0

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        self.depth += 1
        if self.elements > self.limits.max_elements or self.depth > self.limits.max_depth:
            raise MalformedRequest(MALFORMED_XML)
        self.tree.start(tag, attributes)

    def end(self, tag: str) -> None:
        self.depth -= 1
        self.tree.end(tag)

    @staticmethod
    def refuse(*_: Any) -> None:
        raise MalformedRequest(MALFORMED_XML)


def _parser(builder: _Builder) -> Any:
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.tree.data
    parser.StartDoctypeDeclHandler = builder.refuse
    parser.EntityDeclHandler = builder.refuse
    return parser


def parse(body: Any, limits: XmlLimits) -> ElementTree.Element | None:
    """The root element of the XML ``body`` (bytes, str or a stream), or None if it is blank."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    stream = io.BytesIO(bytes(body)) if not hasattr(body, "read") else body
    builder = _Builder(limits)
    parser = _parser(builder)
    size, blank = 0, True
    try:
        while chunk := stream.read(min(_FEED, limits.max_bytes + 1 - size)):
            chunk = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
            size += len(chunk)
            if size > limits.max_bytes:
                raise BodyTooLarge(limits.max_bytes)
            blank = blank and not chunk.strip()
            if not blank:
                parser.Parse(chunk, False)
        if blank:
            return None
        parser.Parse(b"", True)
    except expat.ExpatError:
        raise MalformedRequest(MALFORMED_XML) from None
    return builder.tree.close()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _structure(shape: Shape, element: Any, path: str) -> dict:
    grouped: dict[str, list] = {}
    for child in element:
        grouped.setdefault(_local(child.tag), []).append(child)
    out: dict[str, Any] = {}
    for name, member in shape.members.items():
        serialization = member.serialization
        if serialization.get("location") in NON_BODY:
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


def _read(shape: Shape, node: Any, path: str) -> Any:
    kind = shape.type_name
    if kind == "structure":
        return _structure(shape, node[0] if isinstance(node, list) else node, path)
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


def read_xml(shape: Shape, body: Any, limits: XmlLimits = DEFAULT_LIMITS) -> dict | None:
    """A request structure from its XML ``body``, None for a blank one (module docstring for the caps)."""
    root = parse(body, limits)
    return None if root is None else _read(shape, root, "")
