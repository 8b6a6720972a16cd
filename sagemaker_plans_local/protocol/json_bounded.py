"""A large awsJson request body read without building what its model refuses anyway.

``json.loads`` of a 16 MiB body of ``[{}, {}, ...]`` builds 5.6 million objects (about 400 MB)
before validation says the list may hold 50. Here a body is read value by value with the
standard library's own decoder (``JSONDecoder.raw_decode``, in C), following the
request's shapes: a list or map whose shape has a ``max`` keeps its first ``max + 1`` members
(at least :data:`SHOWN`, as many as a refusal's message shows of them), and every member past
those is read, its nesting checked, and dropped. Values whose shapes hold no bounded list or
map are read whole by it.

What is kept is then decoded and validated as any request: a list kept too long is refused for
its size (``validation.py`` checks no member of such a list), with the message the whole list
gets. A syntax error anywhere is still "not valid JSON", nesting deeper than the limit anywhere
still refuses the body (``too_deep``); the members dropped are not deserialized, so one that
the deserializer would refuse leaves the refusal the list's size.
"""

from __future__ import annotations

import json
import re
from json.decoder import JSONDecodeError
from typing import Any

from botocore.model import Shape

#: The members an over-long list or map keeps at least: a refusal shows about 100 characters of it.
SHOWN = 50
_SPACE = re.compile(r"[ \t\n\r]*")
_SPACES = " \t\n\r"  # (the empty string, the text's end, is in it too: the pattern finds nothing there)
_BOUNDED: dict[tuple[Any, str], bool] = {}


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


_DECODE = json.JSONDecoder(parse_constant=_not_json).raw_decode  # one value at an index, in C


def holds_bounded(shape: Shape | None, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``shape`` is, or holds at any depth, a list or map with a ``max``."""
    if shape is None or shape.type_name not in ("structure", "list", "map") or shape.name in seen:
        return False
    key = (shape._shape_resolver, shape.name)
    known = _BOUNDED.get(key)
    if known is None:
        inner = {"structure": lambda: list(shape.members.values()), "list": lambda: [shape.member]}
        children = inner.get(shape.type_name, lambda: [shape.value])()
        known = "max" in shape.metadata and shape.type_name != "structure"
        known = known or any(holds_bounded(child, seen | {shape.name}) for child in children)
        _BOUNDED[key] = known
    return known


def read(text: str, shape: Shape, max_depth: int) -> tuple[Any, bool]:
    """The document ``text`` holds, its over-long lists and maps cut (``ValueError`` if it is not
    JSON), and whether some member dropped is nested more than ``max_depth`` levels deep."""
    if text.startswith("\ufeff"):
        raise JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    reader = _Reader(text, max_depth)
    value, end = reader.value(_SPACE.match(text, 0).end(), shape, 0)  # type: ignore[union-attr]
    end = _SPACE.match(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise JSONDecodeError("Extra data", text, end)
    return value, reader.too_deep


class _Reader:
    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.max_depth = max_depth
        self.too_deep = False

    def value(self, index: int, shape: Shape | None, depth: int) -> tuple[Any, int]:
        """The value at ``index`` (of ``shape``, inside ``depth`` containers) and where it ends."""
        opening = self.text[index : index + 1]
        if depth < self.max_depth and holds_bounded(shape):
            assert shape is not None
            if opening == "{" and shape.type_name in ("structure", "map"):
                return self._object(index + 1, shape, depth + 1)
            if opening == "[" and shape.type_name == "list":
                return self._array(index + 1, shape, depth + 1)
        return self._scanned(index)

    def _scanned(self, index: int) -> tuple[Any, int]:
        return _DECODE(self.text, index)

    def _array(self, index: int, shape: Shape, depth: int) -> tuple[list, int]:
        text, keep, member = self.text, _kept(shape), shape.member
        items: list[Any] = []
        whole = depth >= self.max_depth or not holds_bounded(member)  # each member read whole
        index = self._space(index)
        if text[index : index + 1] == "]":
            return items, index + 1
        while True:
            item, index = self._scanned(index) if whole else self.value(index, member, depth)
            if len(items) < keep:
                items.append(item)
            else:
                self._dropped(item, depth)
            if text[index : index + 1] in _SPACES:
                index = self._space(index)
            if text[index : index + 1] == "]":
                return items, index + 1
            index = self._after(index, ",", "',' delimiter")
            if text[index : index + 1] in _SPACES:
                index = self._space(index)

    def _object(self, index: int, shape: Shape, depth: int) -> tuple[dict, int]:
        text, members = self.text, dict[str, Any]()
        keep = _kept(shape) if shape.type_name == "map" else None
        index = self._space(index)
        if text[index : index + 1] == "}":
            return members, index + 1
        while True:
            if text[index : index + 1] != '"':
                raise JSONDecodeError("Expecting property name enclosed in double quotes", text, index)
            key, index = _DECODE(text, index)
            index = self._space(self._after(self._space(index), ":", "':' delimiter"))
            inner = shape.value if keep is not None else shape.members.get(key)
            item, index = self.value(index, inner, depth)
            if keep is None or key in members or len(members) < keep:
                members[key] = item  # a key given twice keeps its last value, as json.loads does
            else:
                self._dropped(item, depth)
            index = self._space(index)
            if text[index : index + 1] == "}":
                return members, index + 1
            index = self._space(self._after(index, ",", "',' delimiter"))

    def _space(self, index: int) -> int:
        return _SPACE.match(self.text, index).end()  # type: ignore[union-attr]

    def _after(self, index: int, delimiter: str, expected: str) -> int:
        if self.text[index : index + 1] != delimiter:
            raise JSONDecodeError(f"Expecting {expected}", self.text, index)
        return index + 1

    def _dropped(self, item: Any, depth: int) -> None:
        """A member past what its container keeps (inside ``depth`` containers): only its nesting counts."""
        if isinstance(item, (dict, list)) and (item or depth >= self.max_depth) and not self.too_deep:
            self.too_deep = nests_deeper(item, self.max_depth - depth)


def _kept(shape: Shape) -> int | float:
    most = shape.metadata.get("max")
    return float("inf") if most is None else max(most + 1, SHOWN)


def nests_deeper(value: Any, levels: int) -> bool:
    """Whether ``value`` nests more than ``levels`` lists and dicts deep, itself included (walked
    depth first: what it holds is never copied)."""
    stack = [iter((value,))]
    while stack:
        for item in stack[-1]:
            if isinstance(item, (dict, list)):
                if len(stack) > levels:
                    return True
                stack.append(iter(item.values() if isinstance(item, dict) else item))
                break
        else:
            stack.pop()
    return False
