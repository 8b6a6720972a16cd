"""The durable journal of a backend root: an append-only log of state changes in SQLite.

Every process on one root opens the same database file in WAL mode. A
change is written in one transaction (``writing``), taken with ``BEGIN
IMMEDIATE`` so that writers queue one after another; readers never block.
``synchronous=NORMAL`` keeps a committed entry across a killed process (the
WAL is in the file system); a power cut may lose the last entries but never
leaves a half-written one. ``runs`` records which process runs a job's code;
``snapshots`` holds serialized states, each at an entry ``seq``, by ``stamp``
(what wrote it: ``durable/snapshots.py``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import IO, Any, Iterator, NamedTuple, cast

from sagemaker_plans_local.core.root_files import linked, open_file

#: The layout of the database this package writes; a root written by a newer one is refused.
SCHEMA_VERSION = 1
DATABASE = "state.sqlite3"
#: How long a writer waits for another process's transaction (a manual clock's advance may wait
#: for a training process).
BUSY_TIMEOUT_MS = 600_000
#: Snapshots kept in all (of every stamp; one per stamp).
KEPT_SNAPSHOTS = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    region TEXT NOT NULL, job TEXT NOT NULL, started TEXT NOT NULL, owner TEXT NOT NULL,
    ended INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (region, job, started)
);
CREATE TABLE IF NOT EXISTS snapshots (
    seq INTEGER NOT NULL, stamp TEXT NOT NULL, digest TEXT NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (stamp, seq)
);
"""


class SchemaError(RuntimeError):
    """The root was written by a newer sagemaker-plans-local (or is not a journal)."""


class JournalWriteError(OSError):
    """A change could not be journaled (a full disk, an I/O error, a write lock never had): it was
    rolled back, and :attr:`Journal.failed` keeps the first such error after the write lock was
    taken (docs/durability.md). ``reason`` is SQLite's message."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class Entry(NamedTuple):
    """One journaled change: its number, virtual time (ISO 8601), kind and JSON body."""

    seq: int
    at: str
    kind: str
    body: dict[str, Any]


class Journal:
    """The journal database of one root, for one process (thread-safe)."""

    def __init__(self, root: Path) -> None:
        self.path = root / DATABASE
        _prepare(self.path)
        self._connection = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        self._lock = threading.RLock()
        self._depth = 0
        self._version: int | None = None
        #: The first write that failed (None: every write so far committed).
        self.failed: JournalWriteError | None = None
        try:
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            with self.writing():
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    self._connection.execute(statement)
                self._check_schema()
        except BaseException:
            self._connection.close()
            raise

    def _check_schema(self) -> None:
        stored = self.meta("schema_version")
        if stored is None:
            self.set_meta("schema_version", str(SCHEMA_VERSION))
        elif int(stored) > SCHEMA_VERSION:
            raise SchemaError(
                f"The root {self.path.parent} holds state of schema version {stored}, written by a newer "
                f"sagemaker-plans-local; this one reads up to version {SCHEMA_VERSION}. Upgrade the "
                "package, or use another root."
            )

    # -- meta --------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.writing():
            self._connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- transactions ------------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One write transaction (nested calls join the outer one); rolled back if the block raises.

        A write that fails raises :class:`JournalWriteError`, and so does every later one (:attr:`failed`).
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            if self.failed is not None:  # the writer's state may hold a change the journal does not
                raise JournalWriteError(
                    f"{self.failed}; nothing is journaled until reopened", self.failed.reason
                )
            try:
                self._connection.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:  # nothing was written: later writes may succeed
                raise JournalWriteError(
                    f"cannot write the journal {self.path}: {error}", str(error)
                ) from error
            self._depth = 1
            try:
                yield
                self._connection.execute("COMMIT")
            except BaseException as error:
                self._rollback()
                if isinstance(error, sqlite3.Error):
                    raise self._write_failed(error) from error
                raise
            finally:
                self._depth = 0

    def _rollback(self) -> None:
        """Roll back the transaction unless SQLite did (it does after a full disk or an I/O error)."""
        if self._connection.in_transaction:
            try:
                self._connection.execute("ROLLBACK")
            except sqlite3.Error:  # the transaction went with the error: nothing was committed
                pass

    def _write_failed(self, error: sqlite3.Error) -> JournalWriteError:
        failure = JournalWriteError(f"cannot write the journal {self.path}: {error}", str(error))
        if self.failed is None:
            self.failed = failure
        return failure

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def changed(self) -> bool:
        """Whether another connection committed since the last call (SQLite's data_version)."""
        with self._lock:
            version = self._connection.execute("PRAGMA data_version").fetchone()[0]
            changed, self._version = version != self._version, version
        return changed

    # -- entries -----------------------------------------------------------------------
    def append(self, at: str, kind: str, body: dict[str, Any]) -> int:
        """Add an entry (inside :meth:`writing`, or as its own transaction); its number."""
        with self.writing():
            cursor = self._connection.execute(
                "INSERT INTO entries (at, kind, body) VALUES (?, ?, ?)",
                (at, kind, json.dumps(body, separators=(",", ":"))),
            )
        assert cursor.lastrowid is not None  # an INSERT sets it
        return cursor.lastrowid

    def entries_after(self, seq: int) -> list[Entry]:
        """The entries numbered after ``seq``, in order."""
        with self._lock:
            rows = self._connection.execute(
                "SELECT seq, at, kind, body FROM entries WHERE seq > ? ORDER BY seq", (seq,)
            ).fetchall()
        return [Entry(number, at, kind, json.loads(body)) for number, at, kind, body in rows]

    def last_seq(self) -> int:
        with self._lock:
            row = self._connection.execute("SELECT max(seq) FROM entries").fetchone()
        return int(row[0] or 0)

    # -- snapshots ---------------------------------------------------------------------
    def latest_snapshot(self, stamp: str) -> tuple[int, str] | None:
        """The newest snapshot written with ``stamp``: (seq, digest), or None."""
        with self._lock:
            row = self._connection.execute(
                "SELECT seq, digest FROM snapshots WHERE stamp = ? ORDER BY seq DESC LIMIT 1", (stamp,)
            ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def snapshot_data(self, stamp: str, seq: int) -> IO[bytes]:
        """The bytes of a snapshot, read as a stream (from SQLite's blob, on Pythons that have blobopen)."""
        blobopen = getattr(self._connection, "blobopen", None)
        column = "NULL" if blobopen is not None else "data"
        with self._lock:
            row = self._connection.execute(
                f"SELECT rowid, {column} FROM snapshots WHERE stamp = ? AND seq = ?", (stamp, seq)
            ).fetchone()
            if row is None:
                raise KeyError(seq)
            if blobopen is None:
                return io.BytesIO(row[1])
            return cast(IO[bytes], _Blob(blobopen("snapshots", "data", row[0], readonly=True), self._lock))

    def put_snapshot(self, stamp: str, seq: int, digest: str, data: bytes) -> None:
        """Keep a snapshot at ``seq``; older ones of the same stamp, and all but the newest
        :data:`KEPT_SNAPSHOTS` of other stamps, go."""
        with self.writing():
            self._connection.execute(
                "INSERT OR REPLACE INTO snapshots (seq, stamp, digest, data) VALUES (?, ?, ?, ?)",
                (seq, stamp, digest, data),
            )
            self._connection.execute("DELETE FROM snapshots WHERE stamp = ? AND seq < ?", (stamp, seq))
            self._connection.execute(
                "DELETE FROM snapshots WHERE rowid NOT IN "
                "(SELECT rowid FROM snapshots ORDER BY seq DESC, rowid DESC LIMIT ?)",
                (KEPT_SNAPSHOTS,),
            )

    # -- runs --------------------------------------------------------------------------
    def claim_run(self, region: str, job: str, started: str, owner: str) -> str:
        """Claim running a job's code for ``owner``; the owner of the run (``owner`` if claimed now)."""
        with self.writing():
            self._connection.execute(
                "INSERT OR IGNORE INTO runs (region, job, started, owner) VALUES (?, ?, ?, ?)",
                (region, job, started, owner),
            )
            row = self._connection.execute(
                "SELECT owner FROM runs WHERE region = ? AND job = ? AND started = ?", (region, job, started)
            ).fetchone()
        return str(row[0])

    def run_owner(self, region: str, job: str, started: str) -> tuple[str, bool] | None:
        """Who claimed the run, and whether its end is journaled (None: nobody claimed it)."""
        with self._lock:
            row = self._connection.execute(
                "SELECT owner, ended FROM runs WHERE region = ? AND job = ? AND started = ?",
                (region, job, started),
            ).fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    def mark_run_ended(self, region: str, job: str, started: str) -> None:
        with self.writing():
            self._connection.execute(
                "UPDATE runs SET ended = 1 WHERE region = ? AND job = ? AND started = ?",
                (region, job, started),
            )

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def _prepare(path: Path) -> None:
    """Refuse a journal whose files are links; make a new one private (SQLite gives its ``-wal`` and
    ``-shm`` files the database file's mode)."""
    for name in (path.name, *(path.name + suffix for suffix in ("-wal", "-shm", "-journal"))):
        if (path.parent / name).is_symlink():
            raise linked(path.parent / name)
    try:
        os.close(open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        pass


class _Blob(io.RawIOBase):
    """A snapshot's blob as a stream, read under the journal's lock (one connection, many threads)."""

    def __init__(self, blob: Any, lock: threading.RLock) -> None:
        self._blob = blob
        self._lock = lock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        with self._lock:
            data = self._blob.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            with self._lock:
                self._blob.close()
        super().close()
