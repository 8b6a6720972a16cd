"""core/journal.py alone: entries, transactions, other connections' commits, run claims, schema."""

from __future__ import annotations

import pytest

from sagemaker_plans_local.core.journal import SCHEMA_VERSION, Journal, SchemaError


@pytest.fixture
def journals(tmp_path):
    first, second = Journal(tmp_path), Journal(tmp_path)
    yield first, second
    first.close()
    second.close()


def test_entries_come_back_in_order_with_their_bodies(journals):
    first, second = journals
    assert first.append("2026-01-01T00:00:00+00:00", "call", {"a": [1, "x"]}) == 1
    assert second.append("2026-01-01T00:00:01+00:00", "advance", {"microseconds": 5}) == 2
    assert [(e.seq, e.kind, e.body) for e in first.entries_after(0)] == [
        (1, "call", {"a": [1, "x"]}),
        (2, "advance", {"microseconds": 5}),
    ]
    assert first.entries_after(1)[0].at == "2026-01-01T00:00:01+00:00"
    assert first.last_seq() == 2


def test_changed_sees_other_connections_commits_not_its_own(journals):
    first, second = journals
    first.changed()
    first.append("t", "call", {})
    assert not first.changed()  # its own commit
    second.append("t", "call", {})
    assert first.changed() and not first.changed()


def test_a_failed_transaction_leaves_nothing_and_nested_ones_join_the_outer(journals):
    first, second = journals
    with pytest.raises(RuntimeError):
        with first.writing():
            first.append("t", "call", {})
            with first.writing():  # joins: no second BEGIN
                first.append("t", "call", {})
            raise RuntimeError("the change failed")
    assert second.last_seq() == 0 and not first.in_transaction


def test_a_run_has_one_owner_and_its_end_is_marked(journals):
    first, second = journals
    assert first.claim_run("us-east-1", "job", "2026-01-01T00:00:00+00:00", "owner-a") == "owner-a"
    assert second.claim_run("us-east-1", "job", "2026-01-01T00:00:00+00:00", "owner-b") == "owner-a"
    assert second.run_owner("us-east-1", "job", "2026-01-01T00:00:00+00:00") == ("owner-a", False)
    first.mark_run_ended("us-east-1", "job", "2026-01-01T00:00:00+00:00")
    assert second.run_owner("us-east-1", "job", "2026-01-01T00:00:00+00:00") == ("owner-a", True)
    assert second.run_owner("us-east-1", "other", "2026-01-01T00:00:00+00:00") is None


def test_the_schema_version_is_recorded_and_a_newer_one_refused(tmp_path):
    journal = Journal(tmp_path)
    assert journal.meta("schema_version") == str(SCHEMA_VERSION)
    journal.set_meta("schema_version", str(SCHEMA_VERSION + 1))
    journal.close()
    with pytest.raises(SchemaError, match="Upgrade the package, or use another root"):
        Journal(tmp_path)
