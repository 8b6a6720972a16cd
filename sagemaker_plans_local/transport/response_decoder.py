"""botocore's JSON-protocol response parsing, compiled once per output shape.

``botocore.parsers.JSONParser`` walks every member of a shape for every
response; for DescribeTrainingJob that walk was a third of a call. This module
builds, per shape, a function that gives exactly what that parser gives —
members in model order, ``None`` members dropped, sparse lists kept, blobs
base64-decoded, timestamps as botocore parses them — and the test suite checks
the two against each other on responses generated from the model. Shapes the
JSON parser treats specially (documents, tagged unions, event streams) are not
compiled: :func:`decoder_for` returns ``None`` and the caller uses botocore.

:func:`converter_for` goes one step further for an in-process answer: it turns a
handler's result straight into what the decoder gives for the wire document
``json_wire.encode_output`` makes of it (the same values and types, the same
``ValueError`` for a member the shape lacks), without building the document.
"""

from __future__ import annotations

import base64
from typing import Any, Callable

from botocore.model import Shape

from sagemaker_plans_local.protocol.json_wire import encode_blob
from sagemaker_plans_local.transport.timestamps import parse_datetime, parse_wire_timestamp

Decode = Callable[[Any], Any]


class _Unsupported(Exception):
    pass


_CACHE: dict[tuple[str, str], Decode | None] = {}
_CONVERTERS: dict[tuple[str, str], Decode | None] = {}
_IDENTITY = object()


def decoder_for(shape: Shape, service_uid: str) -> Decode | None:
    """A function turning wire JSON of ``shape`` into botocore's parsed value, or None."""
    key = (service_uid, shape.name)
    if key not in _CACHE:
        try:
            _CACHE[key] = _build(shape, {})
        except _Unsupported:
            _CACHE[key] = None
    return _CACHE[key]


def _build(shape: Shape, building: dict[str, list]) -> Any:
    """A decoder for ``shape``, or ``_IDENTITY`` when the wire value is already the answer."""
    kind = shape.type_name
    if kind == "structure":
        if shape.is_document_type or shape.is_tagged_union or shape.serialization.get("eventstream"):
            raise _Unsupported(shape.name)
        return _structure(shape, building)
    if kind == "list":
        item = _build(shape.member, building)
        if item is _IDENTITY:
            return _IDENTITY
        return lambda value: [None if x is None else item(x) for x in value]
    if kind == "map":
        key = _build(shape.key, building)
        item = _build(shape.value, building)
        if key is _IDENTITY and item is _IDENTITY:
            return _IDENTITY
        key = _plain(key)
        item = _plain(item)
        return lambda value: {key(k): item(v) for k, v in value.items()}
    if kind == "timestamp":
        return parse_wire_timestamp
    if kind == "blob":
        return base64.b64decode
    return _IDENTITY


def _decoder_or_none(shape: Shape, building: dict[str, list]) -> Decode | None:
    decode = _build(shape, building)
    return None if decode is _IDENTITY else decode


def _plain(decode: Any) -> Decode:
    return (lambda value: value) if decode is _IDENTITY else decode


def _structure(shape: Shape, building: dict[str, list]) -> Decode:
    # Recursive shapes: the decoder looks its members up on first use.
    known = building.get(shape.name)
    if known is not None:
        return lambda value: known[0](value)
    cell = building[shape.name] = [None]
    members = tuple(
        (name, member.serialization.get("name", name), _decoder_or_none(member, building))
        for name, member in shape.members.items()
    )

    def decode(value: Any) -> Any:
        if value is None:
            return None
        parsed = {}
        for name, wire, decode_member in members:
            item = value.get(wire)
            if item is not None:
                parsed[name] = item if decode_member is None else decode_member(item)
        return parsed

    cell[0] = decode
    return decode


# -- handler results straight to the parsed form ----------------------------------------------
def converter_for(shape: Shape, service_uid: str) -> Decode | None:
    """A function giving ``decoder_for(shape)(encode_output(shape, result))`` from ``result``, or None."""
    key = (service_uid, shape.name)
    if key not in _CONVERTERS:
        try:
            converter = _convert(shape, {})
            _CONVERTERS[key] = (lambda value: value) if converter is _IDENTITY else converter
        except _Unsupported:
            _CONVERTERS[key] = None
    return _CONVERTERS[key]


def _null_member(value: Any) -> Any:
    """What encoding a null list item or map value of a shape that needs encoding does."""
    raise TypeError("a null item where the shape expects a value")


def _convert(shape: Shape, building: dict[str, list]) -> Any:
    """A converter for ``shape``, or ``_IDENTITY`` when encoding and decoding both pass values through."""
    kind = shape.type_name
    if kind == "structure":
        if shape.is_document_type or shape.is_tagged_union or shape.serialization.get("eventstream"):
            raise _Unsupported(shape.name)
        return _convert_structure(shape, building)
    if kind == "list":
        item = _convert(shape.member, building)
        if item is _IDENTITY:
            return _IDENTITY
        return lambda value: [_null_member(x) if x is None else item(x) for x in value]
    if kind == "map":
        key = _plain(_build(shape.key, {}))
        item = _convert(shape.value, building)
        if item is _IDENTITY:
            decode = _build(shape, {})
            return _IDENTITY if decode is _IDENTITY else decode
        return lambda value: {key(k): _null_member(v) if v is None else item(v) for k, v in value.items()}
    if kind == "timestamp":
        return parse_datetime
    if kind == "blob":
        return lambda value: base64.b64decode(encode_blob(value))
    return _IDENTITY


def _convert_structure(shape: Shape, building: dict[str, list]) -> Decode:
    known = building.get(shape.name)
    if known is not None:
        return lambda value: known[0](value)
    cell = building[shape.name] = [None]
    if any(member.serialization.get("name", name) != name for name, member in shape.members.items()):
        raise _Unsupported(shape.name)  # the wire names a member otherwise: encode, then decode
    members = tuple((name, _converter_or_none(member, building)) for name, member in shape.members.items())
    ranks = {name: (rank, convert) for rank, (name, convert) in enumerate(members)}

    def rank_of(name: str) -> int:
        return ranks[name][0]

    def convert(value: Any) -> Any:
        # One pass over the value's members; sorted into model order after, if they were not in it.
        parsed, last, ordered = {}, -1, True
        for name, item in value.items():
            if item is None:
                continue
            entry = ranks.get(name)
            if entry is None:
                raise ValueError(f"{shape.name} has no member {name!r}")
            rank, convert_member = entry
            if rank < last:
                ordered = False
            last = rank
            parsed[name] = item if convert_member is None else convert_member(item)
        return parsed if ordered else {name: parsed[name] for name in sorted(parsed, key=rank_of)}

    cell[0] = convert
    return convert


def _converter_or_none(shape: Shape, building: dict[str, list]) -> Decode | None:
    convert = _convert(shape, building)
    return None if convert is _IDENTITY else convert
