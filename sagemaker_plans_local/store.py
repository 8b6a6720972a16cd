"""In-memory tables: the innermost layer, holding domain objects by key."""

from __future__ import annotations

from typing import Generic, Iterator, TypeVar

T = TypeVar("T")


class Table(Generic[T]):
    """Insertion-ordered records by unique key."""

    def __init__(self) -> None:
        self._rows: dict[str, T] = {}

    def get(self, key: str) -> T | None:
        return self._rows.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._rows

    def put(self, key: str, row: T) -> None:
        self._rows[key] = row

    def delete(self, key: str) -> None:
        self._rows.pop(key, None)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._rows.values()))

    def __len__(self) -> int:
        return len(self._rows)
