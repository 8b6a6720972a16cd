"""The awsJson1_1 codec, driven by the botocore shapes.

Requests: JSON timestamps (epoch seconds, or ISO-8601 strings) become aware UTC
``datetime``s and base64 blobs become ``bytes``; everything else is left as
decoded, so a value of the wrong JSON type reaches validation unchanged.
Responses: ``datetime`` becomes epoch seconds (naive ones are UTC), ``bytes``
base64, ``None`` members are dropped, and a member missing from the shape is a
programming error (``ValueError``).  Per-shape codecs are built once, lazily,
and cached by shape (resolver and name).
"""

from __future__ import annotations

import base64
import binascii
import datetime
from typing import Any, Callable

from botocore.model import Shape

from .errors import constraint_violations

_Decode = Callable[[Any, str], Any]
_Encode = Callable[[Any], Any]

_UTC = datetime.timezone.utc
_CONVERTED = frozenset({"timestamp", "blob"})


def _key(shape: Shape) -> tuple[Any, str]:
    return shape._shape_resolver, shape.name


def _children(shape: Shape) -> list[Shape]:
    if shape.type_name == "structure":
        return list(shape.members.values())
    if shape.type_name == "list":
        return [shape.member]
    if shape.type_name == "map":
        return [shape.value]
    return []


def _converts(shape: Shape) -> bool:
    """Whether a timestamp or blob is reachable from ``shape`` (cycle-safe)."""
    pending, seen = [shape], {shape.name}
    while pending:
        current = pending.pop()
        if current.type_name in _CONVERTED:
            return True
        for child in _children(current):
            if child.name not in seen:
                seen.add(child.name)
                pending.append(child)
    return False


def _child(path: str, name: str) -> str:
    """The lowerCamel request path of member ``name`` (as validation reports it)."""
    lower = name[:1].lower() + name[1:]
    return f"{path}.{lower}" if path else lower


def _undecodable(value: Any, path: str, expected: str) -> Exception:
    return constraint_violations(
        [f"Value '{value}' at '{path}' failed to satisfy constraint: Member must be {expected}"]
    )


def _decode_timestamp(value: Any, path: str) -> datetime.datetime:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.datetime.fromtimestamp(value, _UTC)
        except (OverflowError, OSError, ValueError):
            pass
    elif isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith("Z") else value
        try:
            parsed = datetime.datetime.fromisoformat(text)
        except ValueError:
            pass
        else:
            return parsed.replace(tzinfo=_UTC) if parsed.tzinfo is None else parsed.astimezone(_UTC)
    raise _undecodable(value, path, "a timestamp in epoch seconds or ISO-8601 format")


def _decode_blob(value: Any, path: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise _undecodable(value, path, "base64-encoded binary data") from None


_DECODERS: dict[tuple[Any, str], _Decode | None] = {}


def _decoder(shape: Shape) -> _Decode | None:
    """The cached decoder for ``shape``; ``None`` when nothing below it needs decoding."""
    key = _key(shape)
    if key not in _DECODERS:
        _DECODERS[key] = _build_decoder(shape) if _converts(shape) else None
    return _DECODERS[key]


def _build_decoder(shape: Shape) -> _Decode:
    if shape.type_name == "timestamp":
        return _decode_timestamp
    if shape.type_name == "blob":
        return _decode_blob
    if shape.type_name == "list":
        return _list_decoder(_decoder(shape.member))
    if shape.type_name == "map":
        return _map_decoder(_decoder(shape.value))
    members: dict[str, _Decode] | None = None

    def decode(value: Any, path: str) -> Any:
        nonlocal members
        if not isinstance(value, dict):
            return value
        if members is None:
            members = {name: dec for name, member in shape.members.items() if (dec := _decoder(member))}
        return {
            name: item if item is None or name not in members else members[name](item, _child(path, name))
            for name, item in value.items()
        }

    return decode


def _list_decoder(item_decoder: _Decode) -> _Decode:
    def decode(value: Any, path: str) -> Any:
        if not isinstance(value, list):
            return value
        return [
            item if item is None else item_decoder(item, f"{path}.{index}.member")
            for index, item in enumerate(value, 1)
        ]

    return decode


def _map_decoder(value_decoder: _Decode) -> _Decode:
    def decode(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            return value
        return {key: item if item is None else value_decoder(item, f"{path}.{key}") for key, item in value.items()}

    return decode


def decode_input(shape: Shape | None, value: dict) -> dict:
    """Turn a JSON-decoded request body into Python values (datetimes, bytes) by ``shape``.

    An undecodable timestamp or blob raises a ``ValidationException``.
    """
    decoder = _decoder(shape) if shape is not None else None
    return value if decoder is None else decoder(value, "")


def _encode_timestamp(value: Any) -> float:
    if not isinstance(value, datetime.datetime):
        raise TypeError(f"expected a datetime for a timestamp, got {value!r}")
    return (value if value.tzinfo else value.replace(tzinfo=_UTC)).timestamp()


def _encode_blob(value: Any) -> str:
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"expected bytes for a blob, got {value!r}")
    return base64.b64encode(value).decode("ascii")


_ENCODERS: dict[tuple[Any, str], _Encode | None] = {}


def _encoder(shape: Shape) -> _Encode | None:
    """The cached encoder for ``shape``; ``None`` when values pass through unchanged."""
    key = _key(shape)
    if key not in _ENCODERS:
        _ENCODERS[key] = _build_encoder(shape)
    return _ENCODERS[key]


def _build_encoder(shape: Shape) -> _Encode | None:
    kind = shape.type_name
    if kind == "timestamp":
        return _encode_timestamp
    if kind == "blob":
        return _encode_blob
    if kind == "list":
        encode_item = _encoder(shape.member)
        return None if encode_item is None else lambda value: [encode_item(item) for item in value]
    if kind == "map":
        encode_value = _encoder(shape.value)
        return None if encode_value is None else lambda value: {key: encode_value(item) for key, item in value.items()}
    if kind == "structure":
        return _structure_encoder(shape)
    return None


def _structure_encoder(shape: Shape) -> _Encode:
    members: dict[str, _Encode | None] | None = None

    def encode(value: Any) -> dict:
        nonlocal members
        if members is None:
            members = {name: _encoder(member) for name, member in shape.members.items()}
        out = {}
        for name, item in value.items():
            if item is None:
                continue
            if name not in members:
                raise ValueError(f"{shape.name} has no member {name!r}")
            encode_member = members[name]
            out[name] = item if encode_member is None else encode_member(item)
        return out

    return encode


def encode_output(shape: Shape, value: dict) -> dict:
    """Turn a handler's result into wire JSON values by ``shape`` (cached per shape).

    Raises ``ValueError`` naming any member ``shape`` does not define.
    """
    return _encoder(shape)(value)
