"""The server's backends: one :class:`LocalBackend` per account, made on the account's first request.

Every account's backend has its own clock, all on one time line: a manual
clock starts at the server's start time moved by every advance so far (so an
account first seen after an advance starts where the others are), and
:meth:`Accounts.advance` moves every account's clock together.

With a root, each account's state is durable under ``root/accounts/<id>``
and ``root/server.json`` records the server's clock: a server restarted on
the root opens every account it had, at the time they had reached.
"""

from __future__ import annotations

import json
import shutil
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import attrs

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.core.journal import DATABASE
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT


class WallClockError(Exception):
    """The server follows the wall clock: its time cannot be advanced."""


class Accounts:
    """The backends of a server by account id, all in ``region`` (their default), on one time line.

    ``start_time`` None follows the wall clock. ``root`` None gives every
    backend a temporary directory; otherwise an account's files live under
    ``root/accounts/<account id>``.
    """

    def __init__(
        self,
        start_time: datetime | None = None,
        root: Path | None = None,
        region: str = "us-east-1",
        run_code: bool = True,
    ):
        self.start_time = _recorded_start(root, start_time) if root is not None else start_time
        if root is not None:
            _record_run_code(root, run_code)
        self.root = root
        self.region = region
        self._advanced = timedelta(0)
        self._backends: dict[str, LocalBackend] = {}
        self._settings: dict[str, dict] = {}  # what a reset keeps, by account
        self._lock = threading.RLock()
        #: The server's URL, where the jobs' own SageMaker calls go (set once it is bound).
        self.job_endpoint_url: str | None = None
        #: False: every account's jobs are simulated on the clock, none of their code runs.
        self.run_code = run_code

    def reopen(self) -> None:
        """Open every account a root holds, the server's time where the latest of them is."""
        if self.root is None or not (self.root / "accounts").is_dir():
            return
        for directory in sorted((self.root / "accounts").iterdir()):
            backend = self.backend(directory.name)
            if self.start_time is not None:
                self._advanced = max(self._advanced, backend.clock.now() - self.start_time)

    @property
    def manual(self) -> bool:
        return self.start_time is not None

    def backend(self, account_id: str = DEFAULT_ACCOUNT) -> LocalBackend:
        """The account's backend, made on first use."""
        backend = self._backends.get(account_id)
        if backend is None:
            with self._lock:
                backend = self._backends.get(account_id)
                if backend is None:
                    backend = self._backends[account_id] = self._make(account_id)
        return backend

    def backends(self) -> list[LocalBackend]:
        """Every account's backend made so far."""
        with self._lock:
            return list(self._backends.values())

    def now(self) -> datetime:
        """The server's time (every account's clock shows it)."""
        if self.start_time is None:
            return self.backend().clock.now()
        return self.start_time + self._advanced

    def advance(self, seconds: float) -> datetime:
        """Move every account's manual clock ``seconds`` ahead (applying what falls due); the new time."""
        if self.start_time is None:
            raise WallClockError(
                "the server follows the wall clock; start it with --start-time to advance it"
            )
        with self._lock:
            self._advanced += timedelta(seconds=seconds)
            for backend in list(self._backends.values()):
                backend.clock.advance(self.now() - backend.clock.now())
            return self.now()

    def reset(self) -> None:
        """A fresh backend for every account (on the start time again; each keeps its settings)."""
        with self._lock:
            self._settings.update(
                {account: attrs.asdict(b.settings) for account, b in self._backends.items()}
            )
            self._close_all(remove=True)
            self._advanced = timedelta(0)

    def close(self) -> None:
        """Close every backend (a server's last act)."""
        with self._lock:
            self._close_all()

    def _make(self, account_id: str) -> LocalBackend:
        root = None if self.root is None else self.root / "accounts" / account_id
        existing = root is not None and (root / DATABASE).exists()
        start = None if self.start_time is None or existing else self.now()
        backend = LocalBackend(
            region=self.region,
            account_id=account_id,
            start_time=start,
            root=root,
            job_endpoint_url=self.job_endpoint_url,
            run_job_code=self.run_code,
        )
        for name, value in self._settings.pop(account_id, {}).items():
            setattr(backend.settings, name, value)
        return backend

    def _close_all(self, remove: bool = False) -> None:
        backends, self._backends = self._backends, {}
        for backend in backends.values():
            backend.close()
            if remove and self.root is not None:  # a reset: the account's next backend starts empty
                shutil.rmtree(backend.root, ignore_errors=True)


def _recorded_start(root: Path, start_time: datetime | None) -> datetime | None:
    """The start time ``root/server.json`` records (written now for a new root); a different one is refused."""
    record = root / "server.json"
    if not record.exists():
        root.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"start_time": None if start_time is None else start_time.isoformat()}))
        return start_time
    stored = json.loads(record.read_text())["start_time"]
    recorded = None if stored is None else datetime.fromisoformat(stored)
    if start_time is not None and start_time != recorded:
        was = f"--start-time {stored}" if stored else "the wall clock"
        raise ValueError(f"the root {root} was served with {was}; restart it with that, or none")
    return recorded


def _record_run_code(root: Path, run_code: bool) -> None:
    """Whether job code runs is the root's for good (its journal replays jobs as they were run or
    simulated): ``root/server.json`` records it; another choice is refused while it holds accounts."""
    record = root / "server.json"
    document = json.loads(record.read_text())
    recorded = document.get("run_code", True)
    if recorded == run_code:
        return
    accounts = root / "accounts"
    if accounts.is_dir() and any(accounts.iterdir()):
        was = "running job code" if recorded else "with --no-run-code"
        raise ValueError(f"the root {root} was served {was}; restart it so, or serve on another root")
    record.write_text(json.dumps({**document, "run_code": run_code}))


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (``Z`` or an offset; a naive one is UTC), as an aware datetime."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
