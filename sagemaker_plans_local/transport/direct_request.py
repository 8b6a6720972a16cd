"""A direct call's parameters as the service would read them off the wire, without the wire.

For the JSON services, ``json_wire.read_request(shape, body)`` of the body botocore's serializer makes
of valid parameters gives back the parameters themselves where every value is *plain*: a ``dict``
for a structure or map (ASCII string keys), a ``list`` or ``tuple`` for a list, an ASCII ``str``, an
``int`` in its shape's range (32 bits for ``integer``, 64 for ``long``), a ``bool``, a finite ``float``
or an ``int`` for a ``float``/``double``. :func:`copier_for` compiles, per input shape, a copy of such
parameters (new dicts and lists, so the service never holds the caller's objects) that raises
:class:`NotPlain` at the first other value (a timestamp, a blob, non-ASCII text, a number out of
range ...) and wherever botocore's validator could object (a required member missing, a member the
shape lacks, a value under its ``min``, a union not holding exactly one member): the caller then
validates with botocore and takes the serializer's path, whose reading refuses or converts it. So
parameters it copies are ones botocore's validator accepts. Shapes whose wire form differs (renamed
members, documents, event streams, JSON-value headers) or that nest themselves (a body could then nest
deeper than the reader allows) get no copier.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from botocore.model import Shape

Copy = Callable[[Any], Any]
_RANGES = {"integer": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}


class NotPlain(Exception):
    """A value the wire would change or refuse: the request goes through the serializer."""


class _Unsupported(Exception):
    pass


_COPIERS: dict[tuple[str, str], Copy | None] = {}


def copier_for(shape: Shape, service_uid: str) -> Copy | None:
    """The plain copy of parameters of ``shape`` (raising :class:`NotPlain`), or None for such shapes."""
    key = (service_uid, shape.name)
    if key not in _COPIERS:
        try:
            _COPIERS[key] = _build(shape, ())
        except _Unsupported:
            _COPIERS[key] = None
    return _COPIERS[key]


def _build(shape: Shape, ancestors: tuple[str, ...]) -> Copy:
    kind = shape.type_name
    if shape.serialization.get("jsonvalue"):
        raise _Unsupported(shape.name)
    if kind == "structure":
        return _structure(shape, ancestors)
    if kind == "list":
        return _at_least(_minimum(shape), len, _list(_build(shape.member, ancestors)))
    if kind == "map":
        if shape.key.type_name != "string":
            raise _Unsupported(shape.name)
        return _map(_build(shape.key, ancestors), _build(shape.value, ancestors))
    if kind == "string":
        return _at_least(_minimum(shape), len, _string)
    if kind == "boolean":
        return _boolean
    if kind in _RANGES:
        return _at_least(_minimum(shape), int, _integer(*_RANGES[kind]))
    if kind in ("float", "double"):
        return _at_least(_minimum(shape), float, _float)
    return _not_plain  # timestamps and blobs: the wire converts them


def _minimum(shape: Shape) -> Any:
    """The lower bound botocore's validator checks (``min``; 1 for a host label), or None."""
    if "min" in shape.metadata:
        return shape.metadata["min"]
    return 1 if shape.serialization.get("hostLabel") else None


def _at_least(low: Any, measure: Callable[[Any], Any], copy: Copy) -> Copy:
    """``copy``, refusing a value whose ``measure`` (after its type is checked) is under ``low``."""
    if low is None:
        return copy

    def copy_checked(value: Any) -> Any:
        copied = copy(value)
        if measure(copied) < low:
            raise NotPlain()
        return copied

    return copy_checked


def _structure(shape: Shape, ancestors: tuple[str, ...]) -> Copy:
    if shape.name in ancestors or shape.is_document_type or shape.serialization.get("eventstream"):
        raise _Unsupported(shape.name)
    if any(member.serialization.get("name", name) != name for name, member in shape.members.items()):
        raise _Unsupported(shape.name)
    inner = (*ancestors, shape.name)
    members = {name: _build(member, inner) for name, member in shape.members.items()}
    required = tuple(shape.metadata.get("required", ()))
    union = shape.is_tagged_union

    def copy_structure(value: Any) -> dict:
        if type(value) is not dict or (union and len(value) != 1):
            raise NotPlain()
        for name in required:
            if name not in value:
                raise NotPlain()
        out = {}
        for name, item in value.items():
            copy = members.get(name)
            if copy is None:
                raise NotPlain()
            out[name] = copy(item)
        return out

    return copy_structure


def _list(copy_item: Copy) -> Copy:
    def copy_list(value: Any) -> list:
        if type(value) is not list and type(value) is not tuple:
            raise NotPlain()
        return [copy_item(item) for item in value]

    return copy_list


def _map(copy_key: Copy, copy_value: Copy) -> Copy:
    def copy_map(value: Any) -> dict:
        if type(value) is not dict:
            raise NotPlain()
        return {copy_key(key): copy_value(item) for key, item in value.items()}

    return copy_map


def _string(value: Any) -> str:
    if type(value) is not str or not value.isascii():
        raise NotPlain()
    return value


def _boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise NotPlain()
    return value


def _integer(low: int, high: int) -> Copy:
    def copy_integer(value: Any) -> int:
        if type(value) is not int or not low <= value <= high:
            raise NotPlain()
        return value

    return copy_integer


def _float(value: Any) -> float | int:
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return value
    raise NotPlain()


def _not_plain(value: Any) -> Any:
    raise NotPlain()
