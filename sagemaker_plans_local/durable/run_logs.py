"""The log lines of local runs on a durable root: in the log store at once, journaled soon after.

A run's output is read by threads of the runtime while, on a manual clock,
an advance may hold the backend's lock (and the journal's) waiting for that
very run. So a line never waits for either: it goes into the region's log
store at once and into a queue, which is journaled by the next transaction of
this process, by the run's end, at close, or by a flusher thread within
:data:`FLUSH_SECONDS` — whichever comes first.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable

from sagemaker_plans_local.core.clock import Clock
from sagemaker_plans_local.core.journal import Journal, JournalWriteError

if TYPE_CHECKING:
    from sagemaker_plans_local.services.logs.streams import LogStore

log = logging.getLogger(__name__)

#: Longest real time a queued line waits for its journal entry.
FLUSH_SECONDS = 0.25


class LogJournal:
    """The queue of run log lines not journaled yet; ``own(seq)`` notes each entry written."""

    def __init__(self, journal: Journal, clock: Clock, own: Callable[[int], None]) -> None:
        self._journal = journal
        self._clock = clock
        self._own = own
        self._queued: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._flusher: threading.Thread | None = None

    def queue(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._queued.append((self._clock.now().isoformat(), body))
            if self._flusher is None:
                self._flusher = threading.Thread(target=self._flush_soon, name="log-journal", daemon=True)
                self._flusher.start()
        self._wake.set()

    def flush(self) -> None:
        """Journal every queued line (in one transaction, or the caller's)."""
        with self._lock:
            queued, self._queued = self._queued, []
        if not queued:
            return
        with self._journal.writing():
            for at, body in queued:
                self._own(self._journal.append(at, "log", body))

    def close(self, flush: bool = True) -> None:
        """Journal what is queued (unless not ``flush``: the journal cannot be written) and stop the flusher."""
        self._closed = True
        self._wake.set()
        if flush:
            self.flush()

    def _flush_soon(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            time.sleep(FLUSH_SECONDS)
            if self._journal.failed is not None:
                return  # the backend journals nothing more (Durable.failed)
            if not self._closed:
                try:
                    self.flush()
                except JournalWriteError:
                    log.error("cannot journal the log lines of local runs", exc_info=True)
                    return


class RunLogs:
    """A region's log store as a local run writes it: each line stored at once and queued for the journal."""

    def __init__(self, store: LogStore, region: str, logs: LogJournal, closed: Callable[[], bool]) -> None:
        self._store = store
        self._region = region
        self._logs = logs
        self._closed = closed

    def append(self, group: str, stream: str, timestamp: datetime | int, message: str) -> None:
        from sagemaker_plans_local.services.logs.streams import to_millis

        millis = to_millis(timestamp)
        self._store.append(group, stream, millis, message)
        if not self._closed():
            body = {"region": self._region, "group": group, "stream": stream, "millis": millis}
            self._logs.queue({**body, "message": message})
