"""Model-driven request validation with AWS's wording.

Every constraint comes from the botocore shapes: ``required``, ``enum``,
``min``/``max`` (string length, list/map size, numeric value) and ``pattern``.
Each violation reads like AWS's::

    Value 'ml.foo' at 'resourceConfig.instanceType' failed to satisfy constraint:
    Member must satisfy enum value set: [...]

(on one line).

Paths:

* structure members are lowerCamel (first letter lowercased), joined by ``.``:
  ``resourceConfig.instanceType``;
* list elements are ``<list>.<N>.member``, 1-based: ``vpcConfig.subnets.1.member``;
* map values are ``<map>.<key>``: ``hyperParameters.epochs``; a bad map key is
  reported at the map's own path, the key as the value, its failures wrapped as
  ``Map keys must satisfy constraint: [<constraint>, ...]``.

Violations come in path order: members by lowerCamel name, list elements by
index, map entries by key; one value's failures in the order length/value,
pattern, enum.  Values are rendered as AWS does: ``'text'``, ``'5'``,
``'true'``, ``null``; lists and maps Java-style (``'[a, b]'``, ``'{k=v}'``),
shortened when long.  A value of the wrong JSON type for its shape fails with
``Member must be of type <shape type>`` (``string``, ``integer``, ``list``, ...);
timestamps and blobs are expected decoded (``datetime``, ``bytes``, see
:mod:`.wire`); members a structure does not define are not checked here.

Patterns are Java regular expressions matched against the whole value in
bounded time (:mod:`.patterns`); a value longer than its shape's ``max`` is
reported for its length alone (its pattern is not tried), and a list or map with more members
than its ``max`` for its size alone (its members are not checked: a request of 400,000 tags is
refused as cheaply as one of 51).  An explicit ``null`` is reported as
``Member must not be null`` wherever it stands (AWS's wording for a missing
required member); unknown members never reach validation (:mod:`.wire`
refuses them).
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Iterator

from botocore.model import OperationModel, Shape

from sagemaker_plans_local.protocol.errors import constraint_violations
from sagemaker_plans_local.protocol.patterns import matcher

_Check = Callable[[Any, str, list], None]
_Rule = tuple[Callable[[Any], bool], str]

_MAX_RENDERED = 100
_NUMBERS = ("integer", "long", "float", "double")
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "long": (int,),
    "float": (int, float),
    "double": (int, float),
    "boolean": (bool,),
    "timestamp": (datetime.datetime,),
    "blob": (bytes, bytearray),
    "list": (list, tuple),
    "map": (dict,),
    "structure": (dict,),
}


def _java_pieces(value: Any) -> Iterator[str]:
    """``value`` written Java-style, piece by piece (a caller stops reading once it has enough)."""
    if value is None:
        yield "null"
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ", "
            yield from _java_pieces(item)
        yield "]"
    elif isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield f"{', ' if index else ''}{key}="
            yield from _java_pieces(item)
        yield "}"
    elif isinstance(value, datetime.datetime):
        yield value.isoformat()
    else:
        yield str(value)


def _render(value: Any) -> str:
    if value is None:
        return "null"
    if not isinstance(value, (list, tuple, dict)):
        return f"'{''.join(_java_pieces(value))}'"
    pieces, length = [], 0
    for piece in _java_pieces(value):  # a long list is read only as far as it is shown
        pieces.append(piece)
        length += len(piece)
        if length > _MAX_RENDERED:
            return f"'{''.join(pieces)[: _MAX_RENDERED - 3]}...'"
    return f"'{''.join(pieces)}'"


def _message(value: Any, path: str, constraint: str) -> str:
    return f"Value {_render(value)} at '{path}' failed to satisfy constraint: {constraint}"


def _lower_camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _bounds(shape: Shape, size: Callable[[Any], Any], noun: str) -> list[_Rule]:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    rules: list[_Rule] = []
    if low is not None:
        rules.append(
            (lambda value: size(value) < low, f"Member must have {noun} greater than or equal to {low}")
        )
    if high is not None:
        rules.append(
            (lambda value: size(value) > high, f"Member must have {noun} less than or equal to {high}")
        )
    return rules


#: A pattern check remembers its answers for up to this many values of at most 512 characters.
_REMEMBERED = 4096


def _remembered(matches: Callable[[str], bool]) -> Callable[[str], bool]:
    """``matches``, each value matched once: requests repeat theirs (roles, images, paths)."""
    seen: dict[str, bool] = {}

    def check(value: str) -> bool:
        known = seen.get(value)
        if known is None:
            known = matches(value)
            if len(value) <= 512:
                if len(seen) >= _REMEMBERED:
                    seen.clear()
                seen[value] = known
        return known

    return check


def _rules(shape: Shape) -> list[_Rule]:
    """The value constraints of ``shape`` as (fails, wording) pairs."""
    if shape.type_name in _NUMBERS:
        return _bounds(shape, lambda value: value, "value")
    if shape.type_name not in ("string", "blob", "list", "map"):
        return []
    rules = _bounds(shape, len, "length")
    pattern = shape.metadata.get("pattern")
    if pattern is not None and shape.type_name == "string":
        matches, longest = _remembered(matcher(pattern)), shape.metadata.get("max", float("inf"))
        rules.append(
            (
                lambda value: len(value) <= longest and not matches(value),
                f"Member must satisfy regular expression pattern: {pattern}",
            )
        )
    enum = shape.metadata.get("enum")
    if enum:
        allowed, listed = frozenset(enum), ", ".join(enum)
        rules.append((lambda value: value not in allowed, f"Member must satisfy enum value set: [{listed}]"))
    return rules


def _type_check(shape: Shape) -> Callable[[Any], bool]:
    """A predicate telling whether a value has the Python type ``shape`` expects."""
    kinds = _PYTHON_TYPES.get(shape.type_name, (object,))
    if shape.type_name in _NUMBERS:
        return lambda value: isinstance(value, kinds) and not isinstance(value, bool)
    return lambda value: isinstance(value, kinds)


_CHECKERS: dict[tuple[Any, str], _Check] = {}


def _checker(shape: Shape) -> _Check:
    """The cached checker for ``shape``, keyed by its resolver and name."""
    key = (shape._shape_resolver, shape.name)
    check = _CHECKERS.get(key)
    if check is None:
        check = _CHECKERS[key] = _build(shape)
    return check


def _build(shape: Shape) -> _Check:
    is_typed = _type_check(shape)
    type_failure = f"Member must be of type {shape.type_name}"
    rules = _rules(shape)
    walk = {"structure": _structure_walker, "list": _list_walker, "map": _map_walker}.get(shape.type_name)
    walk_children = walk(shape) if walk else None
    most = shape.metadata.get("max", float("inf")) if shape.type_name in ("list", "map") else float("inf")

    def check(value: Any, path: str, out: list) -> None:
        if not is_typed(value):
            out.append(_message(value, path, type_failure))
            return
        for fails, wording in rules:
            if fails(value):
                out.append(_message(value, path, wording))
        if walk_children is not None and len(value) <= most:  # too long: its size alone is reported
            walk_children(value, path, out)

    return check


def _structure_walker(shape: Shape) -> _Check:
    members: list[tuple[str, str, bool, _Check]] | None = None

    def walk(value: dict, path: str, out: list) -> None:
        nonlocal members
        if members is None:
            required_names = set(shape.required_members)
            members = [
                (name, _lower_camel(name), name in required_names, _checker(member))
                for name, member in sorted(shape.members.items(), key=lambda item: _lower_camel(item[0]))
            ]
        for name, lower, required, check in members:
            item = value.get(name)
            if item is not None:
                check(item, _child(path, lower), out)
            elif required or name in value:
                out.append(_message(None, _child(path, lower), "Member must not be null"))

    return walk


def _list_walker(shape: Shape) -> _Check:
    check: _Check | None = None

    def walk(value: list, path: str, out: list) -> None:
        nonlocal check
        check = check or _checker(shape.member)
        for index, item in enumerate(value, 1):
            item_path = f"{path}.{index}.member"
            if item is None:
                out.append(_message(None, item_path, "Member must not be null"))
            else:
                check(item, item_path, out)

    return walk


def _map_walker(shape: Shape) -> _Check:
    built: tuple[list[_Rule], _Check] | None = None

    def walk(value: dict, path: str, out: list) -> None:
        nonlocal built
        if built is None:
            built = _rules(shape.key), _checker(shape.value)
        key_rules, check = built
        for key in sorted(value):
            failures = [wording for fails, wording in key_rules if fails(key)]
            if failures:
                out.append(_message(key, path, f"Map keys must satisfy constraint: [{', '.join(failures)}]"))
            item, item_path = value[key], f"{path}.{key}"
            if item is None:
                out.append(_message(None, item_path, "Member must not be null"))
            else:
                check(item, item_path, out)

    return walk


# -- whether there is any violation, without paths or order (most requests have none) ----------
_Valid = Callable[[Any], bool]
_VALIDITY: dict[tuple[Any, str], _Valid] = {}


def _validity(shape: Shape) -> _Valid:
    """The cached predicate telling whether ``_checker(shape)`` would find nothing."""
    key = (shape._shape_resolver, shape.name)
    valid = _VALIDITY.get(key)
    if valid is None:
        cell: list[_Valid] = []
        _VALIDITY[key] = lambda value: cell[0](value)  # what a recursive shape meets while building
        valid = _VALIDITY[key] = _build_validity(shape)
        cell.append(valid)
    return valid


def _build_validity(shape: Shape) -> _Valid:
    is_typed = _type_check(shape)
    fails = tuple(fails for fails, _ in _rules(shape))
    kind = shape.type_name
    if kind == "structure":
        return _structure_validity(shape, is_typed)
    if kind == "list":
        return _list_validity(is_typed, fails, _validity(shape.member))
    if kind == "map":
        key_fails, value_valid = tuple(fails for fails, _ in _rules(shape.key)), _validity(shape.value)
        return lambda value: (
            is_typed(value)
            and not any(rule(value) for rule in fails)
            and all(
                not any(rule(key) for rule in key_fails) and item is not None and value_valid(item)
                for key, item in value.items()
            )
        )
    return _scalar_validity(is_typed, fails)


def _structure_validity(shape: Shape, is_typed: _Valid) -> _Valid:
    members = {name: _validity(member) for name, member in shape.members.items()}
    required = tuple(shape.required_members)

    def valid_structure(value: Any) -> bool:
        if not is_typed(value):
            return False
        for name, item in value.items():
            valid = members.get(name)
            if valid is not None and (item is None or not valid(item)):
                return False
        for name in required:
            if value.get(name) is None:
                return False
        return True

    return valid_structure


def _list_validity(is_typed: _Valid, fails: tuple[Callable[[Any], bool], ...], item_valid: _Valid) -> _Valid:
    def valid_list(value: Any) -> bool:
        if not is_typed(value):
            return False
        for rule in fails:
            if rule(value):
                return False
        for item in value:
            if item is None or not item_valid(item):
                return False
        return True

    return valid_list


def _scalar_validity(is_typed: _Valid, fails: tuple[Callable[[Any], bool], ...]) -> _Valid:
    if not fails:
        return is_typed
    if len(fails) == 1:
        (fail,) = fails
        return lambda value: is_typed(value) and not fail(value)

    def valid_scalar(value: Any) -> bool:
        if not is_typed(value):
            return False
        for rule in fails:
            if rule(value):
                return False
        return True

    return valid_scalar


def violations(shape: Shape, value: Any, path: str = "") -> list[str]:
    """Every constraint violation in ``value`` (a decoded request) against ``shape``, in path order."""
    if _validity(shape)(value):
        return []
    out: list[str] = []
    _checker(shape)(value, path, out)
    return out


def validate_request(operation_model: OperationModel, params: dict) -> None:
    """Raise AWS's ``ValidationException`` if ``params`` violate the operation's input shape."""
    shape = operation_model.input_shape
    if shape is None:
        return
    problems = violations(shape, params)
    if problems:
        raise constraint_violations(problems)
