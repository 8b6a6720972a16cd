"""The local executor: runs a job's code on this machine, one process per instance.

A script-mode job's entry point runs with the toolkit's contract; a
``ContainerEntrypoint`` job's command runs where the instance's tree is
``/opt/ml`` (:mod:`.views`). ``start`` returns at once; a background thread
prepares every instance (``/opt/ml`` tree, code, data, checkpoints, virtualenv),
runs the processes concurrently, uploads the artifacts, and then publishes the
:class:`~sagemaker_plans_local.services.sagemaker.jobs.execution.RunResult`. Instance
directories live under ``<root>/instances/pools/<pool id>/algo-<i>`` for a
job on a warm pool (kept for the pool's next job, removed by
:meth:`LocalExecutor.release`) and ``<root>/instances/jobs/<job>/algo-<i>``
otherwise (removed once the run has ended).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.runtime import systems
from sagemaker_plans_local.runtime.contract import InstanceContract, JobFacts, runnable
from sagemaker_plans_local.runtime.environments import VirtualEnvironments
from sagemaker_plans_local.runtime.network import AddressBlocks
from sagemaker_plans_local.runtime.run import LocalRun
from sagemaker_plans_local.services.sagemaker.jobs.execution import RunResult

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob

#: Seconds between SIGTERM and SIGKILL when a run is stopped.
STOP_GRACE_SECONDS = 5.0

__all__ = ["STOP_GRACE_SECONDS", "LocalExecutor", "LocalRun"]


class LocalExecutor:
    """Implements the domain's ``Executor`` port with local subprocesses."""

    def __init__(
        self,
        root: Path,
        object_store: Any,
        log_store: Any,
        clock: Any,
        python: str = sys.executable,
        *,
        stop_grace_seconds: float = STOP_GRACE_SECONDS,
        job_environment: Mapping[str, str] | None = None,
        job_python_path: Sequence[str] = (),
        settings: Settings | None = None,
    ) -> None:
        self.root = Path(root)
        self.object_store = object_store
        self.log_store = log_store
        self.clock = clock  # runs are timed in real seconds from their virtual start
        self.python = python
        self.stop_grace_seconds = stop_grace_seconds
        #: Added to every script's environment, and to its PYTHONPATH after the code directory.
        self.job_environment = dict(job_environment or {})
        self.job_python_path = list(job_python_path)
        #: The backend's settings (``max_instance_processes`` is read as each run starts).
        self.settings = settings if settings is not None else Settings()
        self.environments = VirtualEnvironments(python)
        #: The runs' loopback addresses (one block of algo-1..algo-N per run).
        self.addresses = AddressBlocks()
        self._lock = threading.Lock()
        self._by_key: dict[str, LocalRun] = {}
        self._released: set[str] = set()
        self._unclosed: set[LocalRun] = set()  # started, instance directories not yet cleaned

    # -- the port ----------------------------------------------------------------------
    def runs(self, job: "TrainingJob") -> bool:
        return runnable(job.spec)

    def start(self, job: "TrainingJob", at: datetime) -> "LocalRun":
        facts = JobFacts(job.name, job.arn, job.spec, job.cache_dir, job.capacity_block_expiration)
        pooled = job.pool is not None
        key = self._key(job.pool.pool_id if job.pool is not None else job.name, pooled)
        with self._lock:
            previous = self._by_key.get(key)
            run = LocalRun(self, facts, at, key, pooled, previous)
            self._by_key[key] = run
            self._unclosed.add(run)
        run.begin()
        return run

    def script_environment(self, contract: InstanceContract) -> dict[str, str]:
        """The contract's environment plus what this executor adds for every script."""
        env = contract.environment(os.environ)
        env.update(self.job_environment)
        if self.job_python_path:
            code, *rest = env["PYTHONPATH"].split(os.pathsep)
            env["PYTHONPATH"] = os.pathsep.join([code, *self.job_python_path, *rest])
        return env

    def container_environment(self, contract: InstanceContract) -> dict[str, str]:
        """A container's environment plus what this executor adds for every job."""
        env = contract.container_environment(os.environ)
        env.update(self.job_environment)
        inherited = [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
        site = str(systems.INSTANCE_SITE)  # after the bootstrap, whose sitecustomize chains to it
        env["PYTHONPATH"] = os.pathsep.join([*self.job_python_path, site, *inherited])
        return env

    def ended(self, job: "TrainingJob", started: datetime, result: RunResult, at: datetime) -> None:
        """Nothing to do: an ephemeral backend keeps a run's end in memory only."""

    # -- instances ---------------------------------------------------------------------
    def release(self, pool_id: str) -> None:
        """Delete a terminated warm pool's instance directories (after its run, if one is on)."""
        key = self._key(pool_id, True)
        with self._lock:
            if key in self._by_key:
                self._released.add(key)
                return
        shutil.rmtree(self.root / "instances" / key, ignore_errors=True)

    def instances_dir(self, job: "TrainingJob") -> Path:
        """Where ``job``'s instance directories are (``algo-<i>`` inside)."""
        name = job.pool.pool_id if job.pool is not None else job.name
        return self.root / "instances" / self._key(name, job.pool is not None)

    def close(self, timeout: float | None = None) -> None:
        """Stop every run and wait for them to end and clean up."""
        with self._lock:
            runs = list(self._unclosed)
        for run in runs:
            run.stop()
        for run in runs:
            run.join(timeout)

    @staticmethod
    def _key(name: str, pooled: bool) -> str:
        return f"pools/{name}" if pooled else f"jobs/{name}"

    def _ended(self, run: "LocalRun") -> None:
        """Clean up after a run: its job's instances, or a pool's released meanwhile."""
        with self._lock:
            if self._by_key.get(run.key) is run:
                del self._by_key[run.key]
            current = run.key in self._by_key
            delete = not run.pooled or (run.key in self._released and not current)
            if delete:
                self._released.discard(run.key)
        try:
            if delete:
                shutil.rmtree(self.root / "instances" / run.key, ignore_errors=True)
        finally:
            with self._lock:
                self._unclosed.discard(run)
