"""A backend's state made durable: every change journaled, the journal replayed on open and before each call.

The state of a root is the replay of its journal (``core/journal.py``): the
mutating API calls that succeeded, clock advances, settings, capacity,
scripts, the log lines of local runs and the ends of those runs, each with
the virtual time it happened at. A change is one transaction: taken under
the emulation's lock and SQLite's write lock, it first replays what other
processes wrote, then applies and journals itself. Reads replay what is new
first (the clock's ``syncer``). Replay is deterministic on a manual clock;
on a wall clock each entry is replayed at the time it happened
(docs/durability.md).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterator

from sagemaker_plans_local.core.journal import Entry, Journal, JournalWriteError
from sagemaker_plans_local.core.settings import watch
from sagemaker_plans_local.durable import gc_pause, owners
from sagemaker_plans_local.durable.run_logs import LogJournal, RunLogs
from sagemaker_plans_local.durable.runs import (
    INSTANCE_FAILURE,
    DurableExecutor,
    NoRunner,
    PendingRun,
    Summoner,
    run_body,
)
from sagemaker_plans_local.emulation import Emulation
from sagemaker_plans_local.services.sagemaker.jobs.execution import RunResult

log = logging.getLogger(__name__)

#: Real seconds between two checks that the owner of an awaited run is alive.
LIVENESS_SECONDS = 0.5
#: A replay of at least this many entries runs with the cyclic garbage collector paused.
GC_PAUSE_ENTRIES = 256
#: Changes of a process after which it snapshots the state (at least; see ``_after_change``).
SNAPSHOT_CHANGES = 5000
#: Snapshot bytes that count as one change: a big state is snapshotted less often (its cost is its size).
SNAPSHOT_BYTES_PER_CHANGE = 512
#: Entries since the newest snapshot that make closing a backend snapshot the state.
SNAPSHOT_ON_CLOSE = 100


iso = datetime.isoformat  #: a moment as the journal writes it
parse = datetime.fromisoformat  #: a moment the journal wrote


class Transaction:
    """One journaled change in the making: entries appended at its time ``at``."""

    def __init__(self, durable: "Durable", at: datetime) -> None:
        self.at = at
        self._durable = durable

    def append(self, kind: str, body: dict[str, Any]) -> None:
        self._durable.own(self._durable.journal.append(iso(self.at), kind, body))


class Durable:
    """The durable state of one backend on ``root``: hooks into its emulation, replay, runs.

    ``apply_call(service, region, operation, body)`` replays a journaled API call
    (the backend's services, unjournaled). ``runs_code=False`` never claims a run.
    """

    def __init__(
        self,
        root: Path,
        journal: Journal,
        emulation: Emulation,
        apply_call: Callable[[str, str, str, dict[str, Any]], None],
        runs_code: bool = True,
        applied: int = 0,
        attach: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.journal = journal
        self.emulation = emulation
        self.closed = False
        self.frozen = False  #: the state is a loaded snapshot's, frozen until release (gc_pause.py)
        self.runs_code = runs_code
        self.runner: Summoner = NoRunner()  #: who runs what no process here claims
        self._apply_call = apply_call
        self._owner = owners.Owner(root)
        self._applied = applied  # the entries up to here are in the state (a snapshot's, or replayed)
        self._snapshot_seq = applied
        self._snapshot_bytes = 0
        self._changes = 0  # this process's changes since it last considered a snapshot
        self._synced = False
        self._own: set[int] = set()
        self._applying = False
        self._busy: int | None = None  # the thread inside a transaction or a replay
        self._pending: dict[tuple[str, str, str], PendingRun] = {}
        self._checked: dict[tuple[str, str, str], float] = {}
        self.logs = LogJournal(journal, emulation.clock, self.own)
        self._hook(emulation)
        if attach is not None:
            attach()  # a loaded snapshot's executors: this backend's, before the first replay
        with emulation.lock:
            self.sync()
            self.fail_dead_runs()

    def _hook(self, emulation: Emulation) -> None:
        real_factory = emulation.executor_factory
        if real_factory is not None:
            emulation.executor_factory = lambda em, region: DurableExecutor(
                real_factory(em, region), self, region
            )
        emulation.run_logs = self.run_logs
        emulation.clock.advancer = self.advance
        emulation.clock.syncer = self.sync
        watch(emulation.settings, self._on_setting)

    # -- transactions and replay ---------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Apply one change: the lock, SQLite's write lock, what others wrote replayed first.

        The change sees one time, ``at``, from start to end (a wall clock is pinned there):
        replaying its entry at ``at`` gives exactly what it gave.
        """
        with self.emulation.lock, self.journal.writing():
            outer, self._busy = self._busy, threading.get_ident()
            try:
                self.sync()
                self.logs.flush()
                clock = self.emulation.clock
                at = clock.now()
                with clock.pinned(at):  # a wall clock reads ``at`` throughout, as its replay will
                    yield Transaction(self, at)
            finally:
                self._busy = outer
        self._after_change()

    def own(self, seq: int) -> None:
        """``seq`` was written by this process (already applied here)."""
        self._own.add(seq)

    def busy_here(self) -> bool:
        """Whether the calling thread is inside a transaction or a replay of this backend."""
        return self._busy == threading.get_ident()

    def sync(self, everything: bool = False) -> None:
        """Replay what other processes journaled since the last look (cheap when nothing is new).

        ``everything``: read every entry after the last applied one, this process's own too.
        """
        if self._applying or self.closed:
            return
        with self.emulation.lock:
            if not self.journal.changed() and self._synced and not everything:
                return
            self._synced = True
            entries = self.journal.entries_after(self._applied)
            outer, self._busy = self._busy, threading.get_ident()
            paused = gc_pause.gc_paused() if len(entries) >= GC_PAUSE_ENTRIES else contextlib.nullcontext()
            try:
                with paused, self.applying():
                    self._apply_entries(entries)
            finally:
                self._busy = outer

    def _apply_entries(self, entries: list[Entry]) -> None:
        for entry in entries:
            if entry.seq in self._own:
                self._own.discard(entry.seq)
            else:
                self._replay(entry)
            self._applied = entry.seq

    def _replay(self, entry: Entry) -> None:
        """Apply another process's entry; one that cannot be applied is logged and passed over
        (the state goes on without it rather than every later call failing)."""
        with self.emulation.clock.pinned(parse(entry.at)):
            try:
                APPLY[entry.kind](self, entry.body)
            except Exception:
                log.exception("cannot replay journal entry %s (%s) of %s", entry.seq, entry.kind, self.root)

    @contextlib.contextmanager
    def applying(self) -> Iterator[None]:
        """Apply a change without journaling it again (the setting watcher stays quiet)."""
        outer, self._applying = self._applying, True
        try:
            yield
        finally:
            self._applying = outer

    # -- changes -------------------------------------------------------------------------
    def advance(self, delta: timedelta) -> datetime:
        """The clock's ``advancer``: a journaled advance."""
        with self.transaction() as txn:
            txn.append("advance", {"microseconds": delta // timedelta(microseconds=1)})
            return self.emulation.clock.move(delta)

    def _on_setting(self, name: str, value: Any) -> None:
        if self._applying or self.closed:
            return
        plain = dict(value) if hasattr(value, "items") else value
        with self.transaction() as txn:
            current = getattr(self.emulation.settings, name)
            if (dict(current) if hasattr(current, "items") else current) != plain:  # else: changes nothing
                txn.append("setting", {"name": name, "value": plain})

    def record(self, kind: str, body: dict[str, Any]) -> None:
        """Apply and journal one change of ``kind`` (see :data:`APPLY`)."""
        with self.transaction() as txn, self.applying():
            APPLY[kind](self, body)
            txn.append(kind, body)

    def run_logs(self, region: str) -> RunLogs:
        """Where a local run's log lines go: the region's log store, and the journal soon after."""
        return RunLogs(self.emulation.log_store(region), region, self.logs, lambda: self.closed)

    # -- runs ----------------------------------------------------------------------------
    def claim_run(self, region: str, job: str, started: datetime) -> bool:
        """Claim running the job's code here; False if another process has (or this one never runs code)."""
        if self.closed or not self.runs_code or self.journal.failed is not None:
            return False
        return self.journal.claim_run(region, job, iso(started), self._owner.token) == self._owner.token

    def pending_run(self, region: str, job: str, started: datetime) -> PendingRun:
        run = self._pending[(region, job, iso(started))] = PendingRun(self, region, job, started)
        return run

    def run_ended(self, region: str, job: str, started: datetime, result: RunResult, at: datetime) -> None:
        """An owned run ended: journal it for the other processes (not after close: it was killed)."""
        if self.closed or self.journal.failed is not None:
            return
        body = run_body(region, job, started, result, at)
        try:
            with self.emulation.lock, self.journal.writing():
                self.logs.flush()  # the run's last lines before its end
                self.own(self.journal.append(iso(self.emulation.clock.now()), "run_ended", body))
                self.journal.mark_run_ended(region, job, iso(started))
        except JournalWriteError:  # it ends as a dead process's run once this process lets the root go
            log.error("cannot journal the end of %s's run on %s", job, self.root, exc_info=True)

    def await_run(self, run: PendingRun) -> None:
        """One look for an awaited run's end: replay; if its owner died, it ends as an instance failure."""
        self.sync()
        key = (run.region, run.job, iso(run.started))
        if key not in self._pending or time.monotonic() - self._checked.get(key, 0.0) < LIVENESS_SECONDS:
            return
        self._checked[key] = time.monotonic()
        with self.emulation.lock:
            self._fail_if_orphaned(key)

    def fail_dead_runs(self) -> None:
        """End every awaited run whose owner is gone (after a replay on open)."""
        for key in list(self._pending):
            self._fail_if_orphaned(key)

    def _fail_if_orphaned(self, key: tuple[str, str, str]) -> None:
        claim = self.journal.run_owner(*key)
        if claim is None:  # a process that runs code claims it when it gets there
            return self.runner.run_unclaimed()
        if claim[1] or owners.alive(self.root, claim[0]):
            return  # ended, or owned
        with self.transaction() as txn:
            if key not in self._pending:  # its end was replayed meanwhile
                return
            region, job, started = key
            body = run_body(region, job, parse(started), RunResult(1, 0.0, INSTANCE_FAILURE), txn.at)
            with self.applying():
                _apply_run_ended(self, body)
            txn.append("run_ended", body)
            self.journal.mark_run_ended(*key)

    # -- snapshots -----------------------------------------------------------------------
    def _after_change(self) -> None:
        """After an outermost change: a snapshot when this process has made enough of them."""
        self._changes += 1
        if self._busy is not None or self.journal.in_transaction:
            return
        every = max(SNAPSHOT_CHANGES, self._snapshot_bytes // SNAPSHOT_BYTES_PER_CHANGE)
        if self._changes >= every:
            self._changes = 0
            self.snapshot(every)

    def snapshot(self, minimum: int = 1) -> bool:
        """Snapshot the state if ``minimum`` entries or more came since the newest snapshot; whether it did.

        Consistent with exactly one entry: under the lock, after every entry is applied. The
        write lock is taken only to store it. Never raises: the journal stays the truth.
        """
        from sagemaker_plans_local.durable import snapshots

        if self.closed or self._applying or self.journal.failed is not None:  # a state ahead of its journal
            return False
        try:
            with self.emulation.lock:
                self.logs.flush()
                self.sync(everything=True)
                newest = self.journal.latest_snapshot(snapshots.stamp(self.root))
                self._snapshot_seq = max(self._snapshot_seq, newest[0] if newest else 0)
                if self._own or self._pending or self._applied - self._snapshot_seq < minimum:
                    return False
                size = snapshots.write(self.journal, self.root, self.emulation, self._applied)
                self._snapshot_seq = self._applied
        except Exception:  # a snapshot is an optimization: its failure costs a longer open
            log.warning("cannot snapshot %s", self.root, exc_info=True)
            return False
        self._snapshot_bytes = size or self._snapshot_bytes
        return size is not None

    def close(self) -> None:
        """Stop journaling (the queued log lines first, then a snapshot if one is due); the owned runs
        still going count as a dead process's."""
        self.logs.close(flush=self.journal.failed is None)
        self.snapshot(SNAPSHOT_ON_CLOSE)
        self.closed = True
        watch(self.emulation.settings, None)  # the watcher holds this state: a closed one is let go

    def release(self) -> None:
        """Let the root go (after the emulation has stopped its runs)."""
        self._owner.release()
        self.journal.close()
        if self.frozen:
            self.frozen = False
            gc_pause.thaw()  # this state's cycles may be collected now


def _apply_run_ended(durable: Durable, body: dict[str, Any]) -> None:
    result = RunResult(body["exit_code"], body["duration"], body["failure_reason"])
    jobs = durable.emulation.region(body["region"]).training_jobs
    jobs.run_ended_elsewhere(body["job"], parse(body["started"]), result, parse(body["at"]))
    pending = durable._pending.pop((body["region"], body["job"], body["started"]), None)
    if pending is not None:
        pending.finish(result)


def _apply_call(durable: Durable, body: dict[str, Any]) -> None:
    durable._apply_call(body["service"], body["region"], body["operation"], body)


def _apply_advance(durable: Durable, body: dict[str, Any]) -> None:
    durable.emulation.clock.move(timedelta(microseconds=body["microseconds"]))


def _apply_setting(durable: Durable, body: dict[str, Any]) -> None:
    with durable.applying():
        try:
            setattr(durable.emulation.settings, body["name"], body["value"])
        except ValueError as error:  # out of its range: journaled before settings had ranges
            log.warning("passing over a setting journaled in %s: %s", durable.root, error)


def _apply_capacity_add(durable: Durable, body: dict[str, Any]) -> None:
    durable.emulation.capacity.add(
        body["instance_type"], body["count"], body["zone"], parse(body["start"]), parse(body["end"])
    )


def _apply_capacity_clear(durable: Durable, body: dict[str, Any]) -> None:
    durable.emulation.capacity.clear()


def _apply_script_job(durable: Durable, body: dict[str, Any]) -> None:
    from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript

    script = JobScript(body["outcome"], body["runtime_seconds"], body["failure_reason"])
    durable.emulation.script_job(body["name"], script)


def _apply_script_plan(durable: Durable, body: dict[str, Any]) -> None:
    from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript

    durable.emulation.script_plan(body["name"], PlanScript(body["payment_succeeds"]))


def _apply_log(durable: Durable, body: dict[str, Any]) -> None:
    store = durable.emulation.log_store(body["region"])
    store.append(body["group"], body["stream"], body["millis"], body["message"])


#: How each kind of journal entry is applied.
APPLY: dict[str, Callable[[Durable, dict[str, Any]], None]] = {
    "call": _apply_call,
    "advance": _apply_advance,
    "setting": _apply_setting,
    "capacity_add": _apply_capacity_add,
    "capacity_clear": _apply_capacity_clear,
    "script_job": _apply_script_job,
    "script_plan": _apply_script_plan,
    "log": _apply_log,
    "run_ended": _apply_run_ended,
}
