"""Opaque NextToken values: where the previous page ended, bound to its query."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Callable, Iterable, Mapping

from .errors import validation_error

INVALID_TOKEN = "Invalid pagination token: the NextToken is not valid for this request."


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


def page(items: list, params: dict, query: Any, position_of, default_max: int = 10) -> tuple[list, str | None]:
    """Cut a sorted list into the page ``params`` asks for; returns (items, NextToken).

    ``position_of(item)`` gives a sortable, JSON-able position; the next page
    starts after the last returned item, so pages stay stable while the list grows.
    """
    query_fingerprint = fingerprint(query)
    start = 0
    token = params.get("NextToken")
    if token:
        after = decode(token, query_fingerprint)
        positions = [position_of(item) for item in items]
        start = next((i for i, pos in enumerate(positions) if pos == after), None)
        if start is None:
            # The item was deleted: resume at the first item that sorts after it.
            start = next((i for i, pos in enumerate(positions) if _after(pos, after, query)), len(items))
        else:
            start += 1
    limit = params.get("MaxResults") or default_max
    chunk = items[start:start + limit]
    more = start + limit < len(items)
    return chunk, encode(position_of(chunk[-1]), query_fingerprint) if more and chunk else None


def _after(position: Any, anchor: Any, query: Any) -> bool:
    descending = isinstance(query, dict) and query.get("SortOrder") == "Descending"
    return position < anchor if descending else position > anchor


def sorted_page(items: Iterable, params: dict, sort_keys: Mapping[str, Callable], default_sort: str,
                tiebreak: Callable, **bound_to: str) -> tuple[list, str | None]:
    """Sort ``items`` as a List request's SortBy/SortOrder ask (ties by ``tiebreak``), then cut its page."""
    key = sort_keys[params.get("SortBy", default_sort)]
    descending = params.get("SortOrder", "Ascending") == "Descending"

    def position(item: Any) -> list:
        return [key(item), tiebreak(item)]

    ordered = sorted(items, key=position, reverse=descending)
    return page(ordered, params, _list_query(params, descending, **bound_to), position)


def within(moment: Any, params: dict, name: str) -> bool:
    """The strict ``<name>After`` / ``<name>Before`` filters of a List request."""
    after, before = params.get(f"{name}After"), params.get(f"{name}Before")
    return (after is None or moment > after) and (before is None or moment < before)
