"""What a root records about itself on creation: its account, its clock, when and where it began."""

from __future__ import annotations

from datetime import datetime, timezone

import attrs

from sagemaker_plans_local.core.journal import Journal


@attrs.frozen
class RootClock:
    """A root's clock (``start_time`` None: the wall clock), creation time and home region."""

    start_time: datetime | None
    created: datetime
    home_region: str


def open_root(journal: Journal, account_id: str, home_region: str, start_time: datetime | None) -> RootClock:
    """The root's recorded clock, recorded now for a new root.

    An existing root keeps its clock: ``start_time`` None opens it as it is,
    another start time than its own (or one for a wall-clock root) is refused.
    """
    root = journal.path.parent
    stored_account = journal.meta("account_id")
    if stored_account is not None and stored_account != account_id:
        raise ValueError(f"The root {root} holds the state of account {stored_account}, not of {account_id}.")
    stored = journal.meta("start_time")
    if stored is None:
        return _record(journal, account_id, home_region, start_time)
    recorded = datetime.fromisoformat(stored) if stored else None
    if start_time is not None and (recorded is None or recorded != start_time):
        was = f"a manual clock starting at {stored}" if recorded else "the wall clock"
        raise ValueError(
            f"The root {root} was made with {was}; open it with start_time=None (or that time), "
            "or use another root."
        )
    created = journal.meta("created")
    assert created is not None  # recorded with the start time
    return RootClock(recorded, datetime.fromisoformat(created), journal.meta("home_region") or home_region)


def _record(journal: Journal, account_id: str, home_region: str, start_time: datetime | None) -> RootClock:
    start = None if start_time is None else start_time.astimezone(timezone.utc)
    created = start if start is not None else datetime.now(timezone.utc)
    with journal.writing():
        journal.set_meta("account_id", account_id)
        journal.set_meta("home_region", home_region)
        journal.set_meta("created", created.isoformat())
        journal.set_meta("start_time", "" if start is None else start.isoformat())
    return RootClock(start, created, home_region)
