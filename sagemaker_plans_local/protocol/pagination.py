"""List pages and opaque NextToken values: where the previous page ended, bound to its query.

Two readings of ``MaxResults`` (from each operation's documentation in the model):
*take then filter* (ListTrainingJobs, ListClusters: ``MaxResults`` items are
evaluated in sort order, then filtered, so a page may be empty and still carry a
NextToken) and *filter then take* (the others: up to ``MaxResults`` matching items).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
from typing import Any, Callable, Iterable, Iterator, Mapping

from sagemaker_plans_local.protocol.errors import validation_error

INVALID_TOKEN = "Invalid pagination token: the NextToken is not valid for this request."
DEFAULT_MAX_RESULTS = 10
#: ``scan(index, descending, after)``: rows with their positions, in index order, after ``after``.
Scan = Callable[[str, bool, "tuple | None"], Iterator[tuple[Any, Any]]]


def fingerprint(query: Any) -> str:
    """A short digest identifying the filters and sort of a List request."""
    text = json.dumps(query, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode(position: Any, query_fingerprint: str) -> str:
    payload = json.dumps({"p": position, "q": query_fingerprint}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode()


def decode(token: str, query_fingerprint: str) -> Any:
    """The position stored in ``token``; ValidationException if it is not ours or not for this query."""
    try:
        payload = json.loads(base64.urlsafe_b64decode(token.encode()))
        position, bound_to = payload["p"], payload["q"]
    except (ValueError, TypeError, KeyError):
        raise validation_error(INVALID_TOKEN) from None
    if bound_to != query_fingerprint:
        raise validation_error(INVALID_TOKEN)
    return position


def _list_query(params: dict, descending: bool, **extra: str) -> dict:
    """What a List request's NextToken is bound to: its filters and its sort."""
    query = {name: str(value) for name, value in params.items() if name not in ("NextToken", "MaxResults")}
    query["SortOrder"] = "Descending" if descending else "Ascending"
    query.update(extra)
    return query


def _resume_position(params: dict, query_fingerprint: str) -> tuple | None:
    """The ``(sort value, tiebreak)`` a NextToken resumes after (None without a token)."""
    token = params.get("NextToken")
    if not token:
        return None
    position = decode(token, query_fingerprint)
    if not (
        isinstance(position, list)
        and len(position) == 2
        and isinstance(position[0], (str, int, float))
        and not isinstance(position[0], bool)
        and isinstance(position[1], int)
        and not isinstance(position[1], bool)
    ):
        raise validation_error(INVALID_TOKEN)
    return tuple(position)


def take_then_filter(
    rows: Iterable[tuple[Any, Any]], matches: Callable[[Any], bool], limit: int
) -> tuple[list, Any]:
    """Evaluate ``limit`` rows, keep those that match; returns (rows, last evaluated position or None)."""
    chunk: list[Any] = []
    last = None
    for count, (position, row) in enumerate(rows):
        if count == limit:
            return chunk, last
        if matches(row):
            chunk.append(row)
        last = position
    return chunk, None


def filter_then_take(
    rows: Iterable[tuple[Any, Any]], matches: Callable[[Any], bool], limit: int
) -> tuple[list, Any]:
    """Up to ``limit`` matching rows; the position returned (None at the end) precedes the next match."""
    chunk: list[Any] = []
    previous = None
    for position, row in rows:
        if matches(row):
            if len(chunk) == limit:
                return chunk, previous
            chunk.append(row)
        previous = position
    return chunk, None


def indexed_page(
    scan: Scan,
    params: dict,
    indexes: Mapping[str, str],
    default_sort: str,
    matches: Callable[[Any], bool],
    evaluate_first: bool,
    **bound_to: str,
) -> tuple[list, str | None]:
    """One page of a List request over an indexed table; returns (rows, NextToken).

    ``indexes`` maps each SortBy value to the table index sorting by it;
    ``evaluate_first`` selects take-then-filter, otherwise filter-then-take. A page
    costs a bisect plus the rows it walks, whatever the size of the table.
    """
    descending = params.get("SortOrder", "Ascending") == "Descending"
    query_fingerprint = fingerprint(_list_query(params, descending, **bound_to))
    after = _resume_position(params, query_fingerprint)
    cut = take_then_filter if evaluate_first else filter_then_take
    try:
        rows = scan(indexes[params.get("SortBy", default_sort)], descending, after)
        chunk, last = cut(rows, matches, params.get("MaxResults") or DEFAULT_MAX_RESULTS)
    except TypeError:  # a forged position that does not compare with the index's values
        raise validation_error(INVALID_TOKEN) from None
    return chunk, None if last is None else encode(list(last), query_fingerprint)


def _sorted_scan(ordered: list, positions: list, descending: bool, after: tuple | None) -> Iterator:
    """Scan a list already sorted by ``positions`` (ascending, or descending), after ``after``."""
    start = 0
    if after is not None:
        if descending:  # positions descend: find the first one below ``after``
            start = len(positions) - bisect.bisect_left(positions[::-1], after)
        else:
            start = bisect.bisect_right(positions, after)
    return zip(positions[start:], ordered[start:])


def sorted_page(
    items: Iterable,
    params: dict,
    sort_keys: Mapping[str, Callable],
    default_sort: str,
    tiebreak: Callable,
    **bound_to: str,
) -> tuple[list, str | None]:
    """Page a small, unindexed, already filtered collection: :func:`indexed_page` over the items
    sorted per call (filter-then-take)."""

    def scan(sort_by: str, descending: bool, after: tuple | None) -> Iterator:
        key = sort_keys[sort_by]
        ordered = sorted(items, key=lambda item: (key(item), tiebreak(item)), reverse=descending)
        return _sorted_scan(ordered, [(key(item), tiebreak(item)) for item in ordered], descending, after)

    return indexed_page(
        scan, params, {name: name for name in sort_keys}, default_sort, lambda _: True, False, **bound_to
    )


def page(
    items: list,
    params: dict,
    query: Any,
    position_of: Callable[[Any], Any],
    default_max: int = DEFAULT_MAX_RESULTS,
) -> tuple[list, str | None]:
    """Cut a list in ascending ``position_of`` order (JSON scalars) into the page ``params`` asks for."""
    query_fingerprint = fingerprint(query)
    start = 0
    token = params.get("NextToken")
    if token:
        after = decode(token, query_fingerprint)
        try:
            start = bisect.bisect_right(items, after, key=position_of)
        except TypeError:
            raise validation_error(INVALID_TOKEN) from None
    limit = params.get("MaxResults") or default_max
    chunk = items[start : start + limit]
    more = start + limit < len(items)
    return chunk, encode(position_of(chunk[-1]), query_fingerprint) if more and chunk else None


def within(moment: Any, params: dict, name: str) -> bool:
    """The strict ``<name>After`` / ``<name>Before`` filters of a List request."""
    after, before = params.get(f"{name}After"), params.get(f"{name}Before")
    return (after is None or moment > after) and (before is None or moment < before)
