"""Snapshots of a durable root: its emulation's state at one journal entry, so that opening replays only what follows.

A snapshot is the emulation (every region's jobs, pools, plans, clusters and
tags, the capacity, the clock with its scheduled changes, settings, scripts,
log streams) pickled at entry ``seq``, kept in the journal's ``snapshots``
table with a :func:`stamp` naming what wrote it: the snapshot format, the
package's source (a digest of its files' names, sizes and times), the Python that ran it and the
root's path. Opening loads the newest snapshot of this very stamp whose bytes
match their digest, then replays the entries after it; any other snapshot, or
one that does not load, is passed over for a full replay (never a wrong state).

What is not state is cut out and attached again on load: locks are made anew,
each region's executor comes back as a :class:`LateExecutor` that the opening
backend points at its own, the object store (files under the root) and the
durable hooks are made by the backend. A local run in progress cannot be kept
(a process, a thread): no snapshot is taken while one is.
"""

from __future__ import annotations

import copyreg
import functools
import hashlib
import io
import logging
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable

import attrs

from sagemaker_plans_local.core.clock import Event
from sagemaker_plans_local.core.journal import Journal
from sagemaker_plans_local.durable import snapshot_chunks
from sagemaker_plans_local.durable.gc_pause import gc_paused
from sagemaker_plans_local.durable.runs import DurableExecutor, PendingRun
from sagemaker_plans_local.emulation import Emulation

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor, Run
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob

log = logging.getLogger(__name__)

#: The layout of a snapshot (``durable/snapshot_chunks.py``); a change makes every older snapshot pass over.
FORMAT = 2
_CHUNK = 1 << 20  # the stream's reads


@functools.lru_cache(maxsize=None)
def _source_digest() -> str:
    """A digest of every file of the package (name, size, modification time): a snapshot holds its
    objects as this code made them, so any change of the code passes the older snapshots over."""
    digest = hashlib.blake2b(digest_size=16)
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*")):
        if "__pycache__" not in path.parts and path.is_file():
            facts = path.stat()
            digest.update(
                f"{path.relative_to(package).as_posix()}\0{facts.st_size}\0{facts.st_mtime_ns}\0".encode()
            )
    return digest.hexdigest()


def stamp(root: Path) -> str:
    """What a snapshot of ``root`` written by this process must carry to be loaded by it."""
    python = f"{sys.implementation.cache_tag}-{sys.version_info[:3]}"
    return f"{FORMAT}/{_source_digest()}/{python}/{root.resolve()}"


class LateExecutor:
    """A region's executor in a loaded snapshot: the opening backend's own, made from the factory
    :meth:`attach` names when first needed (a reopen that runs no job's code loads no runtime)."""

    def __init__(self, region: str) -> None:
        self.region = region
        self.target: Executor | None = None
        self._emulation: Emulation | None = None
        _loading().append(self)

    def attach(self, emulation: Emulation) -> None:
        self._emulation = emulation

    def _real(self) -> Executor | None:
        emulation, self._emulation = self._emulation, None
        if emulation is not None and emulation.executor_factory is not None:
            self.target = emulation.executor_factory(emulation, self.region)
        return self.target

    def runs(self, job: TrainingJob) -> bool:
        target = self._real()
        return target is not None and target.runs(job)

    def start(self, job: TrainingJob, at: Any) -> Run:
        target = self._real()
        assert target is not None  # runs() said it runs the job
        return target.start(job, at)

    def ended(self, job: TrainingJob, started: Any, result: Any, at: Any) -> None:
        target = self._real()
        assert target is not None  # it started the run
        target.ended(job, started, result, at)

    def release(self, pool_id: str) -> None:
        target = self._real()  # a pool's instance directories may be left by an earlier process
        if target is not None:
            target.release(pool_id)

    def close(self, timeout: float | None = None) -> None:
        if self.target is not None:  # never made: no run to stop
            self.target.close(timeout)


_state = threading.local()


def _loading() -> list[LateExecutor]:
    """The executors the snapshot being loaded in this thread brings back."""
    return _state.executors  # type: ignore[no-any-return]  # set by load()


def _refuse(obj: object) -> Any:
    raise pickle.PicklingError(f"a snapshot cannot hold {type(obj).__name__} (a run in progress?)")


def _late(region: str) -> LateExecutor:
    return LateExecutor(region)


def _reduce_executor(executor: DurableExecutor | LateExecutor) -> tuple[Callable[..., Any], tuple[str]]:
    return _late, (executor.region,)


def _dispatch_table() -> dict[type, Callable[[Any], Any]]:
    from sagemaker_plans_local.runtime.executor import LocalRun
    from sagemaker_plans_local.services.s3.objects import ObjectStore

    table: dict[type, Callable[[Any], Any]] = dict(copyreg.dispatch_table)
    table[type(threading.Lock())] = lambda _: (threading.Lock, ())
    table[type(threading.RLock())] = lambda _: (threading.RLock, ())
    table[DurableExecutor] = table[LateExecutor] = _reduce_executor
    for kind in (PendingRun, LocalRun, threading.Thread, subprocess.Popen, ObjectStore, Journal):
        table[kind] = _refuse
    return table


def _event_state(event: Event, state: Any) -> Any:
    """What a snapshot keeps of a clock event: no action once it can never run (fired, cancelled:
    no clock holds it), only what it says (a job's events stay listed until the job clears them)."""
    if isinstance(state, tuple) and state[1].get("_clock") is None:
        return None, {**state[1], "action": None}
    return state


def dumps(emulation: Emulation) -> bytes:
    """The emulation's state as bytes (``PicklingError`` if it cannot be kept now).

    An ephemeral emulation's own executors (each region's) come back as :class:`LateExecutor` s too.
    """
    from sagemaker_plans_local.runtime.executor import LocalExecutor

    regions = {id(region.training_jobs.executor): region.name for region in emulation.regions()}
    table = _dispatch_table()
    table[LocalExecutor] = lambda executor: (_late, (_region_of(regions, executor),))
    with gc_paused():  # many objects made (the chunks' memos), no garbage
        return snapshot_chunks.dump(emulation, table, {Event: _event_state})


def _region_of(regions: dict[int, str], executor: object) -> str:
    region = regions.get(id(executor))
    if region is None:
        raise pickle.PicklingError("a snapshot holds the executors of its regions only")
    return region


def loads(data: bytes) -> tuple[Emulation, list[LateExecutor]]:
    """The emulation :func:`dumps` wrote, and its executors to attach (``LateExecutor.attach``)."""
    _state.executors = []
    try:
        with gc_paused():  # many objects made, no garbage
            emulation = snapshot_chunks.load(io.BytesIO(data))
        if not isinstance(emulation, Emulation):
            raise TypeError(f"it holds a {type(emulation).__name__}")
        return emulation, _loading()
    finally:
        _state.executors = []


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def write(journal: Journal, root: Path, emulation: Emulation, seq: int) -> int | None:
    """Snapshot ``emulation`` (its state at entry ``seq``) into the journal; its size (None: not now)."""
    try:
        data = dumps(emulation)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        log.debug("no snapshot of %s at entry %s: %s", root, seq, error)
        return None
    journal.put_snapshot(stamp(root), seq, digest_of(data), data)
    return len(data)


def load(journal: Journal, root: Path) -> tuple[Emulation, int, list[LateExecutor]] | None:
    """The newest snapshot of this stamp: its emulation, its entry, its executors to attach (None: replay all)."""
    mark = stamp(root)
    found = journal.latest_snapshot(mark)
    if found is None:
        return None
    seq, digest = found
    try:
        with journal.snapshot_data(mark, seq) as stream:
            if _stream_digest(stream) != digest:
                raise ValueError("its bytes do not match their digest")
        _state.executors = []
        with journal.snapshot_data(mark, seq) as stream, gc_paused(keep=True):  # long-lived, no garbage
            emulation = snapshot_chunks.load(io.BufferedReader(stream, _CHUNK))  # type: ignore[type-var]
        if not isinstance(emulation, Emulation):
            raise TypeError(f"it holds a {type(emulation).__name__}")
        attrs.validate(emulation.settings)  # a setting out of its range (taken before ranges): replay
        return emulation, seq, _loading()
    except Exception as error:  # noqa: BLE001  # any failure: the journal is the truth, replayed whole
        log.warning(
            "passing over the snapshot of %s at entry %s (%s): replaying the journal", root, seq, error
        )
        return None
    finally:
        _state.executors = []


def _stream_digest(stream: IO[bytes]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    while chunk := stream.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()
