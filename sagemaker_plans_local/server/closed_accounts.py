"""What a server knows of its closed durable accounts: when each one's next change is due.

Each entry carries its account's journal signature (the sizes and times of its SQLite file and
WAL) when it was taken: an account whose journal changed since (another process wrote to it) is
unknown again, to be opened to learn it. ``root/dues.json`` keeps the entries across a stop.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Collection

from sagemaker_plans_local.core import root_files
from sagemaker_plans_local.core.arns import is_account_id
from sagemaker_plans_local.core.journal import DATABASE

DUES = "dues.json"


class ClosedAccounts:
    """The next change of each closed account of ``root/accounts`` (None: of each account suspended
    by a server with no root) the server has seen close, or read in ``root/dues.json``."""

    def __init__(self, root: Path | None) -> None:
        self._root = root
        self._dues: dict[str, tuple[datetime | None, list[int]]] = {}

    def closed(self, account: str, due: datetime | None) -> None:
        """``account`` was closed (its files no longer open here) with its next change ``due``."""
        self._dues[account] = (due, self._signature(account))

    def opened(self, account: str) -> None:
        self._dues.pop(account, None)

    def unknown(self, open_accounts: Collection[str]) -> list[str]:
        """The accounts of ``root/accounts``, not open, whose next change is not known."""
        if self._root is None or not (self._root / "accounts").is_dir():
            return []
        with os.scandir(self._root / "accounts") as entries:
            names = sorted(e.name for e in entries if e.name not in open_accounts and is_account_id(e.name))
        unknown = []
        for name in names:
            mark, entry = self._signature(name), self._dues.get(name)
            if mark[0] >= 0 and (entry is None or entry[1] != mark):  # a journal, changed or never seen
                unknown.append(name)
        return unknown

    def due_by(self, moment: datetime) -> list[str]:
        """The closed accounts whose next change is due by ``moment``."""
        return [account for account, (due, _) in self._dues.items() if due is not None and due <= moment]

    def first(self) -> datetime | None:
        """The earliest next change of any closed account."""
        return min((due for due, _ in self._dues.values() if due is not None), default=None)

    def clear(self) -> None:
        self._dues.clear()
        if self._root is not None:
            (self._root / DUES).unlink(missing_ok=True)

    def save(self) -> None:
        """Write the entries to ``root/dues.json`` (a server's last act)."""
        if self._root is None:
            return
        entries = {
            a: [None if due is None else due.isoformat(), mark] for a, (due, mark) in self._dues.items()
        }
        root_files.write_text(self._root / DUES, json.dumps(entries))

    def load(self) -> None:
        """Take up the entries of ``root/dues.json`` whose account's journal is as it was then."""
        record = None if self._root is None else self._root / DUES
        if record is not None and record.exists():
            for account, (due, mark) in json.loads(root_files.read_text(record)).items():
                if mark == self._signature(account):
                    self._dues[account] = (None if due is None else datetime.fromisoformat(due), mark)

    def _signature(self, account: str) -> list[int]:
        if self._root is None:  # an account suspended in memory's own temporary root: only this process
            return []
        marks = []
        database = os.path.join(self._root, "accounts", account, DATABASE)
        for path in (database, f"{database}-wal"):
            try:
                status = os.stat(path)
            except FileNotFoundError:
                marks += [-1, -1]
            else:
                marks += [status.st_size, status.st_mtime_ns]
        return marks
