"""The awsJson1_1 codec, driven by the botocore shapes.

Requests (:func:`read_request`, :func:`decode_input`): what AWS's JSON
deserializer refuses is a ``SerializationException`` (HTTP 400) naming the
spot: a body that is not a JSON object (``NaN``/``Infinity`` are not JSON), a
body nested more than :data:`MAX_DEPTH` levels, a member its structure does not
define (at any depth), an ``integer`` outside 32 bits or a ``long`` outside 64,
a number too large for a ``double``, a string holding a lone UTF-16 surrogate,
a timestamp that is neither epoch seconds nor ISO-8601 or lies outside
1970-01-01T00:00:00Z..9999-12-31T23:59:59Z, bad base64 for a blob.  Timestamps
become aware UTC ``datetime`` and blobs ``bytes``; a value of the wrong JSON
type and ``null`` are left for validation to report.
Responses: ``datetime`` becomes epoch seconds (naive ones are UTC), ``bytes``
base64, ``None`` members are dropped, and a member missing from the shape is a
programming error (``ValueError``).  Per-shape codecs are built once, lazily,
and cached by shape (resolver and name).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import math
from typing import Any, Callable

from botocore.model import Shape

from sagemaker_plans_local.protocol import json_bounded
from sagemaker_plans_local.protocol.errors import ApiError

_Decode = Callable[[Any, str], Any]
_Encode = Callable[[Any], Any]

_UTC = datetime.timezone.utc
#: The deepest nesting of arrays and objects a request body may have (the model's deepest is 13).
MAX_DEPTH = 32
#: A body over this many bytes (or characters) is read by :mod:`.json_bounded`.
LARGE = 256 * 1024
_EARLIEST = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_LATEST = datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=_UTC)
_INTEGERS = {"integer": (32, -(2**31), 2**31 - 1), "long": (64, -(2**63), 2**63 - 1)}


def serialization_error(message: str) -> ApiError:
    return ApiError("SerializationException", message)


def _key(shape: Shape) -> tuple[Any, str]:
    return shape._shape_resolver, shape.name


def _child(path: str, name: str) -> str:
    """The lowerCamel request path of member ``name`` (as validation reports it)."""
    lower = name[:1].lower() + name[1:]
    return f"{path}.{lower}" if path else lower


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def parse_body(body: bytes | str | None) -> dict:
    """The JSON object a request body holds (an empty body is ``{}``)."""
    try:
        document = json.loads(body or b"{}", parse_constant=_not_json)
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        raise serialization_error("The request body is not valid JSON.") from None
    if not isinstance(document, dict):
        raise serialization_error("The request body must be a JSON object.")
    return document


def _too_deep() -> ApiError:
    return serialization_error(f"The request body is nested more than {MAX_DEPTH} levels deep.")


def _check_depth(document: Any) -> None:
    if json_bounded.nests_deeper(document, MAX_DEPTH):
        raise _too_deep()


def _parse_large(body: bytes | str, shape: Shape) -> dict:
    """:func:`parse_body` for a body over :data:`LARGE`: its over-long lists and maps cut as read."""
    try:
        text = body if isinstance(body, str) else body.decode(json.detect_encoding(body), "surrogatepass")
        document, too_deep = json_bounded.read(text, shape, MAX_DEPTH)
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        raise serialization_error("The request body is not valid JSON.") from None
    if too_deep:
        raise _too_deep()
    if not isinstance(document, dict):
        raise serialization_error("The request body must be a JSON object.")
    return document


def _unreadable(value: Any, path: str, expected: str) -> ApiError:
    shown = (
        value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else json.dumps(value)
    )
    return serialization_error(f"Value '{shown}' at '{path}' can not be converted to {expected}")


def _decode_timestamp(value: Any, path: str) -> Any:
    parsed = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            parsed = datetime.datetime.fromtimestamp(value, _UTC)
        except (OverflowError, OSError, ValueError):
            pass
    elif isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith("Z") else value
        try:
            moment = datetime.datetime.fromisoformat(text)
            parsed = moment.replace(tzinfo=_UTC) if moment.tzinfo is None else moment.astimezone(_UTC)
        except (ValueError, OverflowError):
            pass
    else:
        return value  # the wrong JSON type: validation reports it
    if parsed is None or not _EARLIEST <= parsed <= _LATEST:
        raise _unreadable(
            value,
            path,
            "a timestamp (epoch seconds or ISO-8601, from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)",
        )
    return parsed


def _decode_blob(value: Any, path: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise _unreadable(value, path, "binary data (base64)") from None


def _check_text(value: Any, path: str) -> Any:
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise serialization_error(
                f"Value at '{path}' is not Unicode text: it holds a lone UTF-16 surrogate."
            ) from None
    return value


def _number_decoder(kind: str) -> _Decode:
    if kind in _INTEGERS:
        bits, low, high = _INTEGERS[kind]

        def decode_integer(value: Any, path: str) -> Any:
            if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
                raise _unreadable(value, path, f"a {bits}-bit {kind} ({low} to {high})")
            return value

        return decode_integer

    def decode_float(value: Any, path: str) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            raise _unreadable(value, path, f"a finite {kind}")
        return value

    return decode_float


def _keep(value: Any, path: str) -> Any:
    return value


_DECODERS: dict[tuple[Any, str], _Decode] = {}


def _decoder(shape: Shape) -> _Decode:
    """The cached decoder for ``shape``."""
    key = _key(shape)
    if key not in _DECODERS:
        _DECODERS[key] = _build_decoder(shape)
    return _DECODERS[key]


def _build_decoder(shape: Shape) -> _Decode:
    kind = shape.type_name
    if kind == "structure":
        return _structure_decoder(shape)
    if kind == "list":
        return _list_decoder(shape)
    if kind == "map":
        return _map_decoder(shape)
    if kind in ("integer", "long", "float", "double"):
        return _number_decoder(kind)
    return {"timestamp": _decode_timestamp, "blob": _decode_blob, "string": _check_text}.get(kind, _keep)


def _unchanged(shape: Shape) -> Callable[[Any], bool]:
    """A predicate telling which values ``shape``'s decoder would return as they are, so the
    member's path (built only for error messages) need not be: ASCII strings, in-range integers."""
    kind = shape.type_name
    if kind == "string":
        return lambda value: type(value) is str and value.isascii()
    if kind in _INTEGERS:
        _, low, high = _INTEGERS[kind]
        return lambda value: type(value) is int and low <= value <= high
    if kind == "boolean":
        return lambda value: True
    return lambda value: False


def _structure_decoder(shape: Shape) -> _Decode:
    members: dict[str, tuple[_Decode, Callable[[Any], bool]]] | None = None

    def decode(value: Any, path: str) -> Any:
        nonlocal members
        if not isinstance(value, dict):
            return value
        if members is None:
            members = {name: (_decoder(member), _unchanged(member)) for name, member in shape.members.items()}
        out = None  # a copy, made only once a member's value changes
        for name, item in value.items():
            member = members.get(name)
            if member is None:
                raise serialization_error(
                    f"Unrecognized field '{name}' at '{path or 'the request'}': "
                    f"{shape.name} has no such member."
                )
            decode_member, unchanged = member
            if item is None or unchanged(item):
                continue
            decoded = decode_member(item, _child(path, name))
            if decoded is not item:
                out = dict(value) if out is None else out
                out[name] = decoded
        return value if out is None else out

    return decode


def _list_decoder(shape: Shape) -> _Decode:
    item_decoder: _Decode | None = None

    def decode(value: Any, path: str) -> Any:
        nonlocal item_decoder
        if not isinstance(value, list):
            return value
        item_decoder = item_decoder or _decoder(shape.member)
        return [
            item if item is None else item_decoder(item, f"{path}.{index}.member")
            for index, item in enumerate(value, 1)
        ]

    return decode


def _map_decoder(shape: Shape) -> _Decode:
    value_decoder: _Decode | None = None

    def decode(value: Any, path: str) -> Any:
        nonlocal value_decoder
        if not isinstance(value, dict):
            return value
        value_decoder = value_decoder or _decoder(shape.value)
        return {
            _check_text(key, path): item if item is None else value_decoder(item, f"{path}.{key}")
            for key, item in value.items()
        }

    return decode


def decode_input(shape: Shape | None, value: dict) -> dict:
    """Turn a JSON-decoded request body into Python values (datetimes, bytes) by ``shape``.

    What AWS's deserializer refuses raises a ``SerializationException`` (see the module).
    """
    _check_depth(value)
    return value if shape is None else _decoder(shape)(value, "")


def read_request(shape: Shape | None, body: bytes | str | None) -> dict:
    """:func:`parse_body` then :func:`decode_input`.

    The depth walk runs only when the body holds more than ``MAX_DEPTH`` opening brackets
    (fewer cannot nest deeper; brackets inside strings only over-count). A body over
    :data:`LARGE` is read by :mod:`.json_bounded` (what its model refuses is not built).
    """
    large = shape is not None and body is not None and len(body) > LARGE and json_bounded.holds_bounded(shape)
    document = _parse_large(body, shape) if large else parse_body(body)  # type: ignore[arg-type]
    if body and _openings(body) > MAX_DEPTH:
        _check_depth(document)
    return document if shape is None else _decoder(shape)(document, "")


def _openings(body: bytes | str) -> int:
    if isinstance(body, bytes):
        return body.count(b"{") + body.count(b"[")
    return body.count("{") + body.count("[")


def encode_timestamp(value: Any) -> float:
    """A timestamp's wire value: epoch seconds (a naive datetime is UTC); TypeError if not a datetime."""
    if not isinstance(value, datetime.datetime):
        raise TypeError(f"expected a datetime for a timestamp, got {value!r}")
    return (value if value.tzinfo else value.replace(tzinfo=_UTC)).timestamp()


def encode_blob(value: Any) -> str:
    """A blob's wire value: base64 text; TypeError if not bytes."""
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
        return encode_timestamp
    if kind == "blob":
        return encode_blob
    if kind == "list":
        encode_item = _encoder(shape.member)
        return None if encode_item is None else lambda value: [encode_item(item) for item in value]
    if kind == "map":
        encode_value = _encoder(shape.value)
        return (
            None
            if encode_value is None
            else lambda value: {key: encode_value(item) for key, item in value.items()}
        )
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
    encode = _encoder(shape)
    return value if encode is None else encode(value)
