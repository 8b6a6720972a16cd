"""Hypothesis strategies that generate requests from the botocore SageMaker model.

Values are drawn mostly inside the model's constraints and sometimes outside
them (enum, length, range, pattern), so both answers and rejections occur.
"""

from __future__ import annotations

from datetime import datetime, timezone

from botocore.model import Shape
from hypothesis import strategies as st

TEXT = st.characters(blacklist_categories=("Cs",))
UTC = st.just(timezone.utc)
MAX_DEPTH = 4


def _string(shape: Shape) -> st.SearchStrategy:
    if shape.enum:
        return st.one_of(st.sampled_from(shape.enum), st.text(TEXT, max_size=8)) \
            if len(shape.enum) > 0 else st.text(TEXT)
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
            return st.fixed_dictionaries({n: st.deferred(lambda s=members[n]: for_shape(s, depth + 1))
                                          for n in required})
        return st.fixed_dictionaries(
            {n: st.deferred(lambda s=members[n]: for_shape(s, depth + 1)) for n in required},
            optional={n: st.deferred(lambda s=s: for_shape(s, depth + 1))
                      for n, s in members.items() if n not in required},
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
