"""The server's backends: one :class:`LocalBackend` per account, made on the account's first request.

Every account's backend has its own clock, all on one time line: a manual
clock starts at the server's start time moved by every advance so far (so an
account first seen after an advance starts where the others are), and
:meth:`Accounts.advance` moves every account's clock together.

With a root, each account's state is durable under ``root/accounts/<id>``,
``root/server.json`` records the server's clock and ``root/clock.json`` the
time it has reached. A durable account holds descriptors (its SQLite
journal and its owner's lock) only while open: at most ``max_open`` idle
ones stay open, the least recently used closing for a new one, and a closed
account opens again on its next request (or when the clock reaches its next
change, which ``closed_accounts.py`` keeps), caught up to the server's time.
Without a root the same number of idle accounts stays in memory, and one
more is let go (``idle_accounts.py``): dropped if it holds nothing, else
suspended on disk, and made or resumed again on use, caught up likewise.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import weakref
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, cast

import attrs

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.backend_root import BackendRoot
from sagemaker_plans_local.core import root_files
from sagemaker_plans_local.core.arns import account_id as checked_account_id
from sagemaker_plans_local.core.arns import is_account_id
from sagemaker_plans_local.core.journal import DATABASE
from sagemaker_plans_local.server.closed_accounts import ClosedAccounts
from sagemaker_plans_local.server.idle_accounts import IdleAccounts, ServedBackend
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT

#: Idle accounts a server keeps open by default (a durable one holds 4 descriptors).
MAX_OPEN_ACCOUNTS = 64
#: The environment variable that sets another number.
MAX_OPEN_VARIABLE = "SAGEMAKER_PLANS_LOCAL_MAX_OPEN_ACCOUNTS"


class WallClockError(Exception):
    """The server follows the wall clock: its time cannot be advanced."""


class Accounts:
    """The backends of a server by account id, all in ``region`` (their default), on one time line.

    ``start_time`` None follows the wall clock. ``root`` None gives every
    backend a temporary directory; otherwise an account's files live under
    ``root/accounts/<account id>``. At most ``max_open`` idle accounts stay open (by
    default ``$SAGEMAKER_PLANS_LOCAL_MAX_OPEN_ACCOUNTS``, else 64).
    """

    def __init__(
        self,
        start_time: datetime | None = None,
        root: Path | None = None,
        region: str = "us-east-1",
        run_code: bool = True,
        max_open: int | None = None,
    ):
        self.start_time = _recorded_start(root, start_time) if root is not None else start_time
        if root is not None:
            _record_run_code(root, run_code)
        self.root = root
        self.region = region
        #: Accounts kept open while idle (those at work stay open beyond it).
        self.max_open = max_open or _max_open()
        self._advanced = timedelta(0)
        self._open: OrderedDict[str, LocalBackend] = OrderedDict()  # least recently used first
        self._draining: weakref.WeakSet[LocalBackend] = weakref.WeakSet()  # closed out, still held
        self._closed = ClosedAccounts(root)
        self._idle = IdleAccounts()  # without a root: the accounts let go
        self._settings: dict[str, dict] = {}  # what a reset keeps, by account
        self._lock = threading.RLock()
        #: The server's URL, where the jobs' own SageMaker calls go (set once it is bound).
        self.job_endpoint_url: str | None = None
        #: False: every account's jobs are simulated on the clock, none of their code runs.
        self.run_code = run_code

    def reopen(self) -> None:
        """Take up a root served before: the server's time where ``clock.json`` says (a root
        without it: the latest account's clock, opening them one at a time). No account stays open."""
        if self.root is None or self.start_time is None:
            return
        with self._lock:
            reached = _recorded_now(self.root)
            if reached is None:  # written before clock.json: every account's clock is read
                for account in self._closed_accounts():
                    self._backend(account)
            else:
                self._advanced = max(reached - self.start_time, self._advanced)
                self._closed.load()
            self._reached()

    @property
    def manual(self) -> bool:
        return self.start_time is not None

    def backend(self, account_id: str = DEFAULT_ACCOUNT) -> LocalBackend:
        """The account's backend, made (or opened again) on use (a ValueError for no account id); handed
        out, it may change in any way (an ephemeral one is never dropped, only suspended)."""
        backend = self._backend(account_id)
        if isinstance(backend, ServedBackend):
            backend.fresh = False
        return backend

    def serving(self, account_id: str = DEFAULT_ACCOUNT) -> LocalBackend:
        """The account's backend for one service request (an ephemeral one stays fresh while they read)."""
        return self._backend(account_id)

    def _backend(self, account_id: str) -> LocalBackend:
        account_id = checked_account_id(account_id)
        with self._lock:
            backend = self._open.get(account_id)
            if backend is not None:
                self._open.move_to_end(account_id)
                return backend
            self._make_room()
            backend = self._open[account_id] = self._make(account_id)
            self._closed.opened(account_id)
            return backend

    def backends(self) -> list[LocalBackend]:
        """The open accounts' backends, and on a manual clock those of the closed accounts whose
        change is due first of all (opened): where the server's next change is."""
        with self._lock:
            if not self.manual:
                return list(self._open.values())
            self._learn_dues()
            opened = list(self._open.values())
            first = min((due for b in opened if (due := b.clock.next_due()) is not None), default=None)
            closed = self._closed.first()
            if closed is not None and (first is None or closed <= first):
                opened += [self._backend(account) for account in self._closed.due_by(closed)]
            return list(dict.fromkeys(opened))

    def now(self) -> datetime:
        """The server's time (every account's clock shows it)."""
        if self.start_time is None:
            return self._backend(DEFAULT_ACCOUNT).clock.now()
        return self.start_time + self._advanced

    def advance(self, seconds: float) -> datetime:
        """Move every account's manual clock ``seconds`` ahead (applying what falls due); the new time.

        A closed account whose next change falls due is opened (and caught up); the others
        catch up when next opened.
        """
        if self.start_time is None:
            raise WallClockError(
                "the server follows the wall clock; start it with --start-time to advance it"
            )
        with self._lock:
            self._advanced += timedelta(seconds=seconds)
            now = self._reached()
            for backend in list(self._open.values()):
                backend.clock.advance(max(now - backend.clock.now(), timedelta(0)))
            self._learn_dues()
            for account in self._closed.due_by(now):
                self._backend(account)
            return self.now()

    def reset(self) -> None:
        """A fresh backend for every account, open or closed (on the start time again; each keeps
        its settings)."""
        with self._lock:
            kept = {
                a: attrs.asdict(b.settings) for a, b in self._open.items() if not getattr(b, "fresh", False)
            }
            for account in self._closed_accounts():
                kept[account] = self._settings_of(account)
            self._settings.update(kept)
            self._close_all()
            if self.root is not None:  # a reset: every account's next backend starts empty
                shutil.rmtree(self.root / "accounts", ignore_errors=True)
            self._advanced = timedelta(0)
            self._closed.clear()
            self._reached()

    def reset_account(self, account_id: str) -> None:
        """A fresh backend for one account, open or closed (a tenant's reset): it keeps its
        settings and starts at the server's time; the clock and the other accounts are untouched."""
        with self._lock:
            held = [b for b in (self._open.pop(account_id, None), *self._draining) if b is not None]
            held = [backend for backend in held if backend.account_id == account_id]
            if held:
                self._settings[account_id] = attrs.asdict(held[0].settings)
            elif account_id in self._closed_accounts():
                self._settings[account_id] = self._settings_of(account_id)
            for backend in held:
                self._draining.discard(backend)
                backend.close()
            self._closed.opened(account_id)  # its next change is gone with it
            if self.root is not None:
                shutil.rmtree(self.root / "accounts" / account_id, ignore_errors=True)

    def close(self) -> None:
        """Close every backend (a server's last act), and keep the accounts' next changes in ``dues.json``."""
        with self._lock:
            dues = {account: backend.clock.next_due() for account, backend in self._open.items()}
            self._close_all()
            if self.root is not None:
                for account, due in dues.items():
                    self._closed.closed(account, due)
                self._closed.save()

    def _make(self, account_id: str) -> LocalBackend:
        root = None if self.root is None else self.root / "accounts" / account_id
        home = None if root is not None else self._idle.home(account_id, self._created_now())
        existing = (root / DATABASE).exists() if root is not None else home is not None and home.kept
        start = None if self.start_time is None or existing else self.now()
        try:
            backend = self._open_backend(account_id, start, home)
        except BaseException:
            if home is not None and home.kept:  # its state stays suspended, for the next request
                self._idle.suspended[account_id] = home
            raise
        settings = self._settings.pop(account_id, {})
        for name, value in settings.items():
            setattr(backend.settings, name, value)
        if isinstance(backend, ServedBackend):
            backend.fresh = not (existing or settings)
        if existing and self.start_time is not None:
            self._catch_up(backend)
        return backend

    def _catch_up(self, backend: LocalBackend) -> None:
        """An account opened again to the server's time (applying what fell due while it was
        closed); one ahead of it (moved by a backend of its own) moves the server's time there."""
        behind = self.now() - backend.clock.now()
        if behind > timedelta(0):
            backend.clock.advance(behind)
        elif behind < timedelta(0):
            self._advanced -= behind
            self._reached()

    def _make_room(self) -> None:
        """Let the least recently used idle accounts go until one more fits in ``max_open``.

        A backend someone else holds (a request under way, a client, a test's reference: CPython's
        reference count says) or at work stays open. A durable one let go is closed when it is
        garbage (its finalizer): at once if nothing else holds it, else when its last holder lets
        go; an ephemeral one is dropped or suspended at once (``idle_accounts.py``).
        """
        for account in list(self._open):
            if len(self._open) < self.max_open:
                return
            if sys.getrefcount(self._open[account]) > 2 or self._open[account].at_work():
                continue  # held (2: the dict's and the call's own) or at work: it stays open
            due = self._open[account].clock.next_due()
            if self.root is not None:
                self._draining.add(self._open.pop(account))  # closed here (unless held unseen)
            elif self._idle.let_go(account, cast(ServedBackend, self._open[account])):
                del self._open[account]
            else:
                continue  # its state cannot be kept now
            if self.root is not None or due is not None:
                self._closed.closed(account, due)

    def _learn_dues(self) -> None:
        """Each closed account's next change: one not known (never seen closed, or written by
        another process since) is opened, one at a time, to learn it."""
        for account in self._closed.unknown(self._open):
            self._backend(account)

    def _closed_accounts(self) -> list[str]:
        """The accounts the root holds (or suspended without one) that are not open now."""
        if self.root is None:
            return list(self._idle.suspended)
        if not (self.root / "accounts").is_dir():
            return []
        names = sorted(d.name for d in (self.root / "accounts").iterdir() if (d / DATABASE).exists())
        names = [name for name in names if is_account_id(name)]  # anything else is left alone
        return [name for name in names if name not in self._open]

    def _open_backend(
        self, account_id: str, start: datetime | None, home: BackendRoot | None
    ) -> LocalBackend:
        arguments: dict[str, Any] = dict(
            region=self.region,
            account_id=account_id,
            start_time=start,
            job_endpoint_url=self.job_endpoint_url,
            run_job_code=self.run_code,
        )
        if home is not None:
            return ServedBackend(home, **arguments)
        return LocalBackend(root=cast(Path, self.root) / "accounts" / account_id, **arguments)

    def _created_now(self) -> datetime:
        """When an ephemeral account made now is created (on a wall clock, the wall clock's time)."""
        return self.now() if self.start_time is not None else datetime.now(timezone.utc)

    def _settings_of(self, account: str) -> dict:
        """A closed account's settings (opened for the while, as the server opens it)."""
        home = self._idle.suspended.pop(account) if self.root is None else None
        with self._open_backend(account, None, home) as backend:
            return attrs.asdict(backend.settings)

    def _reached(self) -> datetime:
        """The server's time, recorded in ``clock.json`` on a manual clock with a root."""
        now = self.now()
        if self.root is not None and self.start_time is not None:
            root_files.write_text(self.root / "clock.json", json.dumps({"now": now.isoformat()}))
        return now

    def _close_all(self) -> None:
        backends, self._open = [*self._open.values(), *self._draining], OrderedDict()
        self._draining = weakref.WeakSet()
        for backend in backends:
            backend.close()
        self._idle.clear()


def _max_open() -> int:
    text = os.environ.get(MAX_OPEN_VARIABLE, str(MAX_OPEN_ACCOUNTS))
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{MAX_OPEN_VARIABLE} must be a whole number of accounts (at least 1), not {text!r}")
    return int(text)


def _recorded_now(root: Path) -> datetime | None:
    """The time ``root/clock.json`` records the server reached (None: not recorded)."""
    record = root / "clock.json"
    if not record.exists():
        return None
    return datetime.fromisoformat(json.loads(root_files.read_text(record))["now"])


def _recorded_start(root: Path, start_time: datetime | None) -> datetime | None:
    """The start time ``root/server.json`` records (written now for a new root); a different one is refused."""
    record = root / "server.json"
    if not record.exists():
        root.mkdir(mode=root_files.DIRECTORY_MODE, parents=True, exist_ok=True)
        start = None if start_time is None else start_time.isoformat()
        root_files.write_text(record, json.dumps({"start_time": start}))
        return start_time
    stored = json.loads(root_files.read_text(record))["start_time"]
    recorded = None if stored is None else datetime.fromisoformat(stored)
    if start_time is not None and start_time != recorded:
        was = f"--start-time {stored}" if stored else "the wall clock"
        raise ValueError(f"the root {root} was served with {was}; restart it with that, or none")
    return recorded


def _record_run_code(root: Path, run_code: bool) -> None:
    """Whether job code runs is the root's for good (its journal replays jobs as they were run or
    simulated): ``root/server.json`` records it; another choice is refused while it holds accounts."""
    record = root / "server.json"
    document = json.loads(root_files.read_text(record))
    recorded = document.get("run_code", True)
    if recorded == run_code:
        return
    accounts = root / "accounts"
    if accounts.is_dir() and any(accounts.iterdir()):
        was = "running job code" if recorded else "with --no-run-code"
        raise ValueError(f"the root {root} was served {was}; restart it so, or serve on another root")
    root_files.write_text(record, json.dumps({**document, "run_code": run_code}))


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (``Z`` or an offset; a naive one is UTC), as an aware datetime."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
