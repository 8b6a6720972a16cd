"""indexed_page over a store Table: both readings of MaxResults, walked page by page."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.core.store import Table
from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.pagination import indexed_page

INDEXES = {"Name": "name", "Kind": "kind"}


class Row:
    def __init__(self, name: str, kind: str) -> None:
        self.name, self.kind = name, kind


def walk(rows: Table, query: dict, wanted, evaluate_first: bool) -> list[list[Row]]:
    pages, token = [], None
    while True:
        params = {**query, **({"NextToken": token} if token else {})}
        chunk, token = indexed_page(rows.scan, params, INDEXES, "Name", wanted, evaluate_first)
        pages.append(chunk)
        if token is None:
            return pages


ROWS = st.lists(
    st.tuples(st.from_regex(r"[a-d]{1,3}", fullmatch=True), st.sampled_from("xyz")),
    unique_by=lambda row: row[0],
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(
    rows=ROWS,
    kinds=st.sets(st.sampled_from("xyz")),
    sort=st.sampled_from(["Name", "Kind"]),
    descending=st.booleans(),
    limit=st.integers(1, 6),
    evaluate_first=st.booleans(),
)
def test_walks_yield_the_filtered_rows_in_order_once(rows, kinds, sort, descending, limit, evaluate_first):
    table = Table({"name": lambda row: row.name, "kind": lambda row: row.kind})
    for name, kind in rows:
        table.put(name, Row(name, kind))
    query = {
        "SortBy": sort,
        "SortOrder": "Descending" if descending else "Ascending",
        "MaxResults": limit,
        "Kinds": sorted(kinds),
    }
    pages = walk(table, query, lambda row: row.kind in kinds, evaluate_first)
    key = (lambda r: r[0]) if sort == "Name" else (lambda r: r[1])
    ordered = sorted(enumerate(rows), key=lambda item: (key(item[1]), item[0]), reverse=descending)
    assert [row.name for page in pages for row in page] == [r[0] for _, r in ordered if r[1] in kinds]
    assert all(len(page) <= limit for page in pages)
    if evaluate_first:  # each page evaluates `limit` rows: the walk has one page per `limit` rows
        assert len(pages) == max(1, -(-len(rows) // limit))
    else:  # every page but the last is full, and the last is empty only when nothing matches at all
        assert all(len(page) == limit for page in pages[:-1])
        assert pages[-1] or len(pages) == 1


def test_a_token_from_another_sort_is_rejected():
    table = Table({"name": lambda row: row.name, "kind": lambda row: row.kind})
    for name in "abc":
        table.put(name, Row(name, "x"))
    _, token = indexed_page(table.scan, {"MaxResults": 1}, INDEXES, "Name", lambda row: True, True)
    with pytest.raises(ApiError):
        indexed_page(
            table.scan,
            {"MaxResults": 1, "SortBy": "Kind", "NextToken": token},
            INDEXES,
            "Name",
            lambda row: True,
            True,
        )
