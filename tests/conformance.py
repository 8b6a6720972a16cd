"""Test helper: does a response, as botocore parsed it, conform to its output shape?

Deliberately independent of ``sagemaker_plans_local.protocol.validation`` so that
it can judge the code under test: a plain recursive walk, no caching.
"""

from __future__ import annotations

import datetime
from typing import Any

from botocore.model import Shape

from sagemaker_plans_local.protocol.service_model import operation_model

_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "long": (int,),
    "float": (float, int),
    "double": (float, int),
    "boolean": (bool,),
    "timestamp": (datetime.datetime,),
    "blob": (bytes, bytearray),
    "list": (list,),
    "map": (dict,),
    "structure": (dict,),
}
_NUMBERS = ("integer", "long", "float", "double")


def _has_type(shape: Shape, value: Any) -> bool:
    if isinstance(value, bool) and shape.type_name != "boolean":
        return False
    return isinstance(value, _PYTHON_TYPES.get(shape.type_name, (object,)))


def _bounds(shape: Shape, value: Any, path: str) -> list[str]:
    if shape.type_name in _NUMBERS:
        measure, noun = value, "value"
    elif shape.type_name in ("string", "blob", "list", "map"):
        measure, noun = len(value), "length"
    else:
        return []
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    problems = []
    if low is not None and measure < low:
        problems.append(f"{path}: {noun} {measure} below min {low}")
    if high is not None and measure > high:
        problems.append(f"{path}: {noun} {measure} above max {high}")
    return problems


def conformance_problems(shape: Shape, value: Any, path: str = "") -> list[str]:
    """Every way ``value`` (a botocore-parsed output) departs from ``shape``."""
    here = path or "<response>"
    if not _has_type(shape, value):
        return [f"{here}: {type(value).__name__} {value!r} is not a {shape.type_name}"]
    problems = _bounds(shape, value, here)
    enum = shape.metadata.get("enum")
    if enum and value not in enum:
        problems.append(f"{here}: {value!r} is not in the enum {shape.name}")
    if shape.type_name == "structure":
        for name in shape.required_members:
            if value.get(name) is None:
                problems.append(f"{here}: required member {name} is missing")
        for name, item in value.items():
            member_path = f"{path}.{name}" if path else name
            if name not in shape.members:
                if not (name == "ResponseMetadata" and not path):
                    problems.append(f"{member_path}: not a member of {shape.name}")
            elif item is not None:
                problems.extend(conformance_problems(shape.members[name], item, member_path))
    elif shape.type_name == "list":
        for index, item in enumerate(value):
            problems.extend(conformance_problems(shape.member, item, f"{here}[{index}]"))
    elif shape.type_name == "map":
        for key, item in value.items():
            problems.extend(conformance_problems(shape.key, key, f"{here} key {key!r}"))
            problems.extend(conformance_problems(shape.value, item, f"{here}[{key!r}]"))
    return problems


def assert_conforms(operation_name: str, parsed_response: dict, service: str = "sagemaker") -> None:
    """Fail with every problem found if ``parsed_response`` does not fit the operation's output shape."""
    shape = operation_model(operation_name, service).output_shape
    if shape is None:
        extra = sorted(set(parsed_response) - {"ResponseMetadata"})
        assert not extra, f"{operation_name} has no output, got {extra}"
        return
    problems = conformance_problems(shape, parsed_response)
    assert not problems, f"{operation_name} response does not conform:\n  " + "\n  ".join(problems)
