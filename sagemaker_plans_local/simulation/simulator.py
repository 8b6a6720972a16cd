"""``simulate(workload, policies)``: every policy on its own fresh backend, one process per policy.

A :class:`Simulation` holds each policy's :class:`~.answers.PolicyResult`; it prints as a table in Jupyter
(``_repr_html_``), gives ``to_json()`` (what ``simulate --json`` prints), plain ``records()`` for a data
frame, ``figure()`` (the comparison chart) and ``timeline(policy)`` (the timeline picture of one policy).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import html
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import attrs

from sagemaker_plans_local.inspection.prices import CURRENCY, TrainingPrices
from sagemaker_plans_local.simulation.answers import PolicyResult, policy_result
from sagemaker_plans_local.simulation.capacity import CapacityBlock, load_capacity
from sagemaker_plans_local.simulation.policies import Policy, parse_policy, sweep
from sagemaker_plans_local.simulation.readback import Reader
from sagemaker_plans_local.simulation.runner import submit_all
from sagemaker_plans_local.simulation.workload import Workload, load_workload

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: ``progress(policy, jobs submitted, jobs)`` while a simulation runs.
Progress = Callable[[str, int, int], None]
TABLE_KEYS = ("policy", "total", "plan_fees", "training", "warm_pool", "completed", "failed", "warm_starts")
#: The collector's youngest-generation threshold while a policy runs (Python's default: 700).
RUN_THRESHOLD = 50_000


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Fewer garbage collections while a run makes its many short-lived objects: what lived before is
    frozen (never traversed again by the run's collections) and the youngest generation collects every
    :data:`RUN_THRESHOLD` allocations; both are undone after. Cycles are still collected."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(RUN_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def run_policy(
    workload: Workload,
    policy: Policy,
    prices: TrainingPrices | None = None,
    capacity: tuple[CapacityBlock, ...] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> PolicyResult:
    """``workload`` under ``policy`` on a fresh backend, read back and priced (``prices``: the environment's)."""
    reader = Reader(TrainingPrices.from_environment() if prices is None else prices)
    with _few_collections():
        backend, submitted = submit_all(workload, policy, capacity, progress, retire=reader.take)
        with backend:
            facts, plans, money = reader.finish(
                functools.partial(backend.call, "sagemaker"), backend.clock.now(), submitted
            )
        return policy_result(policy.label, workload, submitted, facts, plans, money)


@attrs.frozen
class Simulation:
    """The policies' results on one workload, in the order the policies were given."""

    workload: Workload
    policies: tuple[Policy, ...]
    results: tuple[PolicyResult, ...]
    prices: TrainingPrices
    capacity: tuple[CapacityBlock, ...] | None = None
    curves: tuple[tuple[int, ...], ...] = ()  #: the results of each sweep, in sweep order (drawn as curves)

    def result(self, policy: str | Policy) -> PolicyResult:
        """The result of ``policy`` (as written, e.g. ``"keep-alive=600"``)."""
        label = policy.label if isinstance(policy, Policy) else parse_policy(policy).label
        for result in self.results:
            if result.policy == label:
                return result
        raise KeyError(label)

    def to_json(self) -> dict[str, Any]:
        """``{"currency", "policies": [...]}`` with the documented keys, plus the workload and price source."""
        return {
            "currency": CURRENCY,
            "policies": [result.to_json() for result in self.results],
            "workload": {
                "source": self.workload.source,
                "jobs": len(self.workload.jobs),
                "start": self.workload.start.isoformat(),
            },
            "prices": self.prices.source,
        }

    def records(self) -> list[dict[str, Any]]:
        """One flat record per policy (``pandas.DataFrame(simulation.records())``)."""
        flat = []
        for result in self.results:
            document = result.to_json()
            for key in ("wait_seconds", "provisioning_seconds"):
                for stat, value in document.pop(key).items():
                    document[f"{key.removesuffix('_seconds')}_{stat}_seconds"] = value
            document.pop("plans")
            document.pop("outcomes")
            flat.append(document)
        return flat

    def jobs(self, policy: str | Policy) -> list[dict[str, Any]]:
        """One record per workload job under ``policy``."""
        return [job.to_json() for job in self.result(policy).jobs]

    def figure(self) -> "Figure":
        """The comparison chart: cost against p95 queue wait (sweeps as curves), and each policy's cost split."""
        from sagemaker_plans_local.simulation.chart import comparison

        return comparison(self.results, self.curves, f"{len(self.workload.jobs)} jobs: ")

    def timeline(self, policy: str | Policy, title: str | None = None) -> "Figure":
        """The timeline picture of ``policy`` (run again: the same engine gives the same run)."""
        from sagemaker_plans_local.inspection.snapshot import Snapshot
        from sagemaker_plans_local.inspection.timeline import timeline

        chosen = policy if isinstance(policy, Policy) else parse_policy(policy)
        backend, _ = submit_all(self.workload, chosen, self.capacity)
        with backend:
            snapshot = Snapshot.collect(backend.client(), backend.clock.now())
        return timeline(snapshot, title or f"what-if: {chosen.label}")

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(record[key]))}</td>" for key in TABLE_KEYS) + "</tr>"
            for record in self.records()
        )
        header = "".join(f"<th>{key}</th>" for key in TABLE_KEYS)
        return f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>"


def simulate(
    workload: Workload | str | Path,
    policies: Sequence[str | Policy] = ("on-demand",),
    *,
    sweep_over: str | None = None,
    prices: TrainingPrices | str | Path | None = None,
    capacity: tuple[CapacityBlock, ...] | str | Path | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> Simulation:
    """Run ``workload`` (a :class:`Workload` or a file) under each policy; ``sweep_over`` repeats each policy
    over a parameter (``keep-alive=0..3600/300``). More than one policy runs one process per policy, on at
    most ``workers`` (default: every core) processes."""
    workload = workload if isinstance(workload, Workload) else load_workload(workload)
    chosen = [policy if isinstance(policy, Policy) else parse_policy(policy) for policy in policies]
    curves: tuple[tuple[int, ...], ...] = ()
    if sweep_over is not None:
        expanded = [sweep(sweep_over, [base]) for base in chosen]
        curves = tuple(
            tuple(range(sum(map(len, expanded[:i])), sum(map(len, expanded[: i + 1]))))
            for i in range(len(expanded))
        )
        chosen = [policy for group in expanded for policy in group]
    price_list = (
        prices if isinstance(prices, TrainingPrices) or prices is None else TrainingPrices.from_file(prices)
    )
    price_list = TrainingPrices.from_environment() if price_list is None else price_list
    blocks = load_capacity(capacity) if isinstance(capacity, (str, Path)) else capacity
    results = _run_all(workload, chosen, price_list, blocks, workers, progress)
    return Simulation(workload, tuple(chosen), tuple(results), price_list, blocks, curves)


def _run_all(
    workload: Workload,
    policies: list[Policy],
    prices: TrainingPrices,
    capacity: tuple[CapacityBlock, ...] | None,
    workers: int | None,
    progress: Progress | None,
) -> list[PolicyResult]:
    workers = min(len(policies), workers or os.cpu_count() or 1)
    if workers <= 1:
        return [
            run_policy(
                workload, policy, prices, capacity, _Tell(progress, policy.label) if progress else None
            )
            for policy in policies
        ]
    context = _worker_context()
    with context.Manager() if progress else contextlib.nullcontext() as manager:
        queue = manager.Queue() if manager is not None else None
        drain = _Drain(queue, progress) if queue is not None and progress is not None else None
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = [
                pool.submit(
                    run_policy,
                    workload,
                    policy,
                    prices,
                    capacity,
                    _Put(queue, policy.label) if queue else None,
                )
                for policy in policies
            ]
            try:
                return [future.result() for future in futures]
            finally:
                if drain is not None:
                    drain.stop()


def _worker_context() -> Any:
    """Where the workers come from: a fork server, started in the standard library's directory.

    Python starts it as ``python -c "from multiprocessing.forkserver import main; ..."``, which puts
    the working directory first on ``sys.path`` while it imports ``multiprocessing``: started from a
    shared directory, it would run a module planted there. Its workers then take this process's
    ``sys.path`` and working directory. (The working directory moves for the instant of the start;
    without a fork server — Windows — the workers are spawned as they are.)
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    here = os.getcwd()
    os.chdir(os.path.dirname(os.__file__))
    try:
        forkserver.ensure_running()
    finally:
        os.chdir(here)
    return multiprocessing.get_context("forkserver")


@attrs.frozen
class _Tell:
    """A run's progress in this process, named by its policy."""

    progress: Progress
    label: str

    def __call__(self, done: int, total: int) -> None:
        self.progress(self.label, done, total)


@attrs.frozen
class _Put:
    """A run's progress from a worker process: onto the parent's queue."""

    queue: Any
    label: str

    def __call__(self, done: int, total: int) -> None:
        self.queue.put((self.label, done, total))


class _Drain:
    """Hands what the workers put on ``queue`` to ``progress``, on a thread, until stopped."""

    def __init__(self, queue: Any, progress: Progress) -> None:
        self.queue, self.progress = queue, progress
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (item := self.queue.get()) is not None:
            self.progress(*item)

    def stop(self) -> None:
        self.queue.put(None)
        self.thread.join()
