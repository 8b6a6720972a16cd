"""Hypothesis strategies that generate requests from the botocore SageMaker model.

Values are drawn mostly inside the model's constraints and sometimes outside
them (enum, length, range, pattern), so both answers and rejections occur.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

from botocore.model import Shape
from hypothesis import strategies as st

TEXT = st.characters(blacklist_categories=("Cs",))
UTC = st.just(timezone.utc)
MAX_DEPTH = 4


def _string(shape: Shape) -> st.SearchStrategy:
    if shape.enum:
        return (
            st.one_of(st.sampled_from(shape.enum), st.text(TEXT, max_size=8))
            if len(shape.enum) > 0
            else st.text(TEXT)
        )
    low = shape.metadata.get("min", 0)
    high = min(shape.metadata.get("max", 64), 64)
    inside = st.text(TEXT, min_size=low, max_size=max(low, high))
    if low == 0 and shape.metadata.get("pattern") is None:
        return inside
    # Names and ids: mostly well-formed, sometimes anything.
    well_formed = st.from_regex(r"[a-zA-Z0-9](-?[a-zA-Z0-9]){0,20}", fullmatch=True)
    if low > 1:
        return st.one_of(inside, st.text(TEXT, max_size=80))
    return st.one_of(well_formed, inside, st.text(TEXT, max_size=80))


def _number(shape: Shape, integral: bool) -> st.SearchStrategy:
    low = shape.metadata.get("min")
    high = shape.metadata.get("max")
    if integral:
        inside = st.integers(min_value=low, max_value=high)
        edges = [v for v in (low, high) if v is not None]
        outside = st.sampled_from([v + d for v in edges for d in (-1, 1)]) if edges else st.integers()
        return st.one_of(inside, outside)
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


def for_shape(shape: Shape, depth: int = 0) -> st.SearchStrategy:
    """A strategy for Python values of ``shape`` (as a boto3 caller passes them)."""
    kind = shape.type_name
    if kind == "structure":
        required = set(shape.required_members)
        members = shape.members
        if depth >= MAX_DEPTH:
            return st.fixed_dictionaries(
                {n: st.deferred(lambda s=members[n]: for_shape(s, depth + 1)) for n in required}
            )
        return st.fixed_dictionaries(
            {n: st.deferred(lambda s=members[n]: for_shape(s, depth + 1)) for n in required},
            optional={
                n: st.deferred(lambda s=s: for_shape(s, depth + 1))
                for n, s in members.items()
                if n not in required
            },
        )
    if kind == "list":
        low = shape.metadata.get("min", 0)
        return st.lists(for_shape(shape.member, depth + 1), min_size=low, max_size=max(low, 3))
    if kind == "map":
        return st.dictionaries(for_shape(shape.key, depth + 1), for_shape(shape.value, depth + 1), max_size=3)
    if kind == "string":
        return _string(shape)
    if kind in ("integer", "long"):
        return _number(shape, integral=True)
    if kind in ("float", "double"):
        return _number(shape, integral=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "timestamp":
        return st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=UTC)
    if kind == "blob":
        return st.binary(max_size=16)
    raise NotImplementedError(kind)


# -- raw JSON bodies (what a hand-made request or another SDK sends) ----------------------------------

#: Stands for a JSON value nested DEEP levels; :func:`raw_body` splices it in as text.
DEEP_MARKER = "\x00deep\x00"
DEEP = 10_000
HUGE_INTS = (2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 10**30)
EXTREME_NUMBERS = (2**31 - 1, -(2**31), 2**63 - 1, 10**9, 0, -1, 1.5, 1e308)
BAD_TIMESTAMPS = (
    "yesterday",
    "",
    "2024-13-01T00:00:00Z",
    "9999-12-31T23:59:59+14:00",
    "0001-01-01T00:00:00-01:00",
    1e20,
    -1e20,
    253402300800,
    -62135596801,
    1e308,
)
ODD_TEXT = (
    "",
    "\ud800",
    "\udfff\ud800",
    "\u0000",
    "\u2028\u2029\u0085",
    "e\u0301",
    "\U0001f600" * 40,
    "\ufeff",
    "a" * 70_000,
    "ｍｌ．ｐ５．４８ｘｌａｒｇｅ",
)


def _to_json(shape: Shape, value: Any) -> Any:
    """A Python value of ``shape`` as it travels in awsJson (timestamps as epoch seconds, blobs base64)."""
    kind = shape.type_name
    if kind == "timestamp":
        return value.timestamp()
    if kind == "blob":
        return base64.b64encode(value).decode()
    if kind == "structure":
        return {name: _to_json(shape.members[name], item) for name, item in value.items()}
    if kind == "list":
        return [_to_json(shape.member, item) for item in value]
    if kind == "map":
        return {key: _to_json(shape.value, item) for key, item in value.items()}
    return value


def json_for_shape(shape: Shape, depth: int = 0) -> st.SearchStrategy:
    """JSON values of ``shape``, mostly inside its constraints (see :func:`for_shape`)."""
    return for_shape(shape, depth).map(lambda value: _to_json(shape, value))


def _mutations(shape: Shape | None) -> st.SearchStrategy:
    """Replacements for a value of ``shape`` (None: a member the shape does not have)."""
    anything = st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from(HUGE_INTS),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(ODD_TEXT),
        st.just([]),
        st.just({}),
        st.just(DEEP_MARKER),
        st.just([DEEP_MARKER]),
        st.just({"Unknown": DEEP_MARKER}),
    )
    if shape is None:
        return anything
    kind = shape.type_name
    if kind == "timestamp":
        return st.one_of(st.sampled_from(BAD_TIMESTAMPS), anything)
    if kind == "string":
        return st.one_of(st.sampled_from(ODD_TEXT), anything)
    if kind in ("integer", "long", "float", "double"):
        return st.one_of(st.sampled_from(HUGE_INTS + EXTREME_NUMBERS), anything)
    return anything


def _paths(shape: Shape, value: Any, path: tuple = ()) -> list[tuple[tuple, Shape | None]]:
    """Every (path, shape) in ``value``, plus one unknown-member slot per structure."""
    found = [(path, shape)]
    if shape.type_name == "structure" and isinstance(value, dict):
        found.append((path + ("UnknownMember",), None))
        for name, item in value.items():
            if name in shape.members:
                found.extend(_paths(shape.members[name], item, path + (name,)))
    elif shape.type_name == "list" and isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(shape.member, item, path + (index,)))
    elif shape.type_name == "map" and isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(shape.value, item, path + (key,)))
    return found


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        copy = list(value)
        copy[head] = _replace(copy[head], rest, new)
        return copy
    return {**value, head: _replace(value.get(head), rest, new)}


@st.composite
def mutated(draw, shape: Shape, base: st.SearchStrategy) -> Any:
    """A value drawn from ``base`` (JSON of ``shape``) with zero to three mutated spots."""
    value = draw(base)
    for _ in range(draw(st.integers(0, 3))):
        path, spot = draw(st.sampled_from(_paths(shape, value)))
        if not path and spot is not None:
            continue  # keep the body an object
        value = _replace(value, path, draw(_mutations(spot)))
    return value


def raw_body(value: Any) -> bytes:
    """``value`` as request bytes, each :data:`DEEP_MARKER` replaced by an array nested :data:`DEEP` deep."""
    text = json.dumps(value)
    return text.replace(json.dumps(DEEP_MARKER), "[" * DEEP + "]" * DEEP).encode("utf-8", "surrogatepass")
