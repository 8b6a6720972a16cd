"""In-memory tables: the innermost layer, holding domain objects by key, with sorted indexes."""

from __future__ import annotations

import itertools
from typing import Any, Callable, Generic, Iterator, Mapping, TypeVar

from sortedcontainers import SortedList

T = TypeVar("T")
#: Where a row sits in an index: ``(sort value, insertion number)``; unique within the table.
Position = tuple


class Table(Generic[T]):
    """Insertion-ordered records by unique key, with sorted indexes for listing.

    ``indexes`` maps an index name to the sort value of a row; each index keeps
    ``(value, insertion number)`` entries sorted, so a page is a bisect plus a
    walk of the page. A row whose sort value changes must be ``reindex``-ed.
    With ``fold_case`` keys are compared lower-cased (SageMaker's resource ids).
    """

    def __init__(
        self, indexes: Mapping[str, Callable[[T], Any]] | None = None, fold_case: bool = False
    ) -> None:
        self._rows: dict[str, T] = {}
        self._keys: dict[int, str] = {}  # insertion number -> key
        self._counter = itertools.count()
        self._fold = fold_case
        self._value_of = dict(indexes or {})
        self._indexes = {name: SortedList() for name in self._value_of}
        self._by_order = tuple(zip(self._value_of.values(), self._indexes.values()))
        # each row's insertion number, then its positions in the indexes' order
        self._entries: dict[str, list[Any]] = {}

    def _key(self, key: str) -> str:
        if not self._fold:
            return key
        folded = key.lower()
        return key if folded == key else folded  # a lower-case key is kept, not held twice

    def get(self, key: str) -> T | None:
        return self._rows.get(self._key(key))

    def __contains__(self, key: str) -> bool:
        return self._key(key) in self._rows

    def put(self, key: str, row: T) -> None:
        key = self._key(key)
        if key in self._rows:
            number = self._unindex(key)
        else:
            number = next(self._counter)
            self._keys[number] = key
        self._rows[key] = row
        self._index(key, number)

    def delete(self, key: str) -> None:
        key = self._key(key)
        if key not in self._rows:
            return
        del self._rows[key], self._keys[self._unindex(key)]

    def reindex(self, key: str) -> None:
        """Re-sort a row after a field one of its indexes sorts by has changed (only the indexes it moves in)."""
        key = self._key(key)
        entries = self._entries.get(key)
        if entries is None:
            return
        row, number = self._rows[key], entries[0]
        for at, (value_of, index) in enumerate(self._by_order, 1):
            position = (value_of(row), number)
            if position != entries[at]:
                index.remove(entries[at])
                index.add(position)
                entries[at] = position

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._rows.values()))

    def __len__(self) -> int:
        return len(self._rows)

    def scan(
        self, index: str, descending: bool = False, after: Position | None = None
    ) -> Iterator[tuple[Position, T]]:
        """Rows in ``index`` order with their positions, starting after ``after`` (a bisect).

        Raises TypeError (when iterated) if ``after`` does not compare with the index's values.
        """
        entries = self._indexes[index]
        if after is None:
            ordered = reversed(entries) if descending else iter(entries)
        elif descending:
            ordered = entries.irange(maximum=tuple(after), inclusive=(True, False), reverse=True)
        else:
            ordered = entries.irange(minimum=tuple(after), inclusive=(False, True))
        for position in ordered:
            yield position, self._rows[self._keys[position[1]]]

    def _index(self, key: str, number: int) -> None:
        row = self._rows[key]
        entries = [number, *((value_of(row), number) for value_of, _ in self._by_order)]
        for position, (_, index) in zip(entries[1:], self._by_order):
            index.add(position)
        self._entries[key] = entries

    def _unindex(self, key: str) -> int:
        """Take the row out of the indexes; its insertion number."""
        entries = self._entries.pop(key)
        for position, (_, index) in zip(entries[1:], self._by_order):
            index.remove(position)
        return entries[0]


class Shared:
    """Gives equal strings and integers of stored records one object each, so that 100,000 records
    made from similar requests hold their role ARNs, images, paths and numbers once.

    ``copy(value)`` rebuilds the JSON-like ``value`` (dicts and lists are new, never shared, so a
    record may change its own in place) with its strings and integers taken from the pool, which
    forgets everything once it holds ``limit`` of them.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self._limit = limit
        self._strings: dict[str, str] = {}
        self._integers: dict[int, int] = {}

    def __getstate__(self) -> dict:
        """A snapshot keeps the limit, not the pool (the records hold their values)."""
        return {"_limit": self._limit}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["_limit"])  # type: ignore[misc]

    def copy(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return self._strings.get(value) or self._one(self._strings, value)
        if kind is dict:
            strings, copy = self._strings, self.copy
            return {
                (strings.get(key) or self._one(strings, key)) if type(key) is str else key: copy(item)
                for key, item in value.items()
            }
        if kind is list:
            return [self.copy(item) for item in value]
        if kind is int:
            return self._integers.get(value) or self._one(self._integers, value)
        return value

    def _one(self, pool: dict, value: Any) -> Any:
        known = pool.get(value)
        if known is None:
            if len(pool) >= self._limit:
                pool.clear()
            known = pool[value] = value
        return known
