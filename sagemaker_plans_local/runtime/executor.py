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
import signal
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.runtime import views
from sagemaker_plans_local.runtime.contract import (
    CONTAINER_CWD,
    Host,
    InstanceContract,
    InstanceTree,
    JobFacts,
    container_command,
    hosts_of,
    log_stream,
    runnable,
)
from sagemaker_plans_local.runtime.environments import (
    REQUIREMENTS,
    InstallError,
    VirtualEnvironments,
    activated,
)
from sagemaker_plans_local.runtime.inputs import (
    ClientError,
    SourceError,
    download_channels,
    download_checkpoints,
    fetch_source,
)
from sagemaker_plans_local.runtime.instances import (
    SETUP_EXIT_CODE,
    InstanceLog,
    InstanceOutcome,
    failure_reason,
    limit_reason,
    over_cap_reason,
)
from sagemaker_plans_local.runtime.outputs import upload_artifacts, upload_checkpoints
from sagemaker_plans_local.runtime.processes import (
    ProcessGroup,
    Stopped,
    exit_code,
    run_to_end,
)
from sagemaker_plans_local.services.sagemaker.jobs.execution import RunResult

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob

#: Seconds between SIGTERM and SIGKILL when a run is stopped.
STOP_GRACE_SECONDS = 5.0
#: Exit code of a run stopped before its processes started (as if killed by SIGTERM).
STOPPED_EXIT_CODE = exit_code(-signal.SIGTERM)
#: The virtualenv's directory: in the job's directory (script mode) or the instance's (container).
VENV = "venv"


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
        self._lock = threading.Lock()
        self._by_key: dict[str, LocalRun] = {}
        self._released: set[str] = set()

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
        if self.job_python_path or inherited:
            env["PYTHONPATH"] = os.pathsep.join([*self.job_python_path, *inherited])
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
        """Stop every run and wait for them to end."""
        with self._lock:
            runs = list(self._by_key.values())
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
        if delete:
            shutil.rmtree(self.root / "instances" / run.key, ignore_errors=True)


class LocalRun:
    """One run of a job's entry point on all its instances (the domain's ``Run``)."""

    def __init__(
        self,
        executor: LocalExecutor,
        facts: JobFacts,
        at: datetime,
        key: str,
        pooled: bool,
        previous: "LocalRun | None",
    ) -> None:
        self.executor = executor
        self.facts = facts
        self.at = at
        self.key = key
        self.pooled = pooled
        self.hosts: list[Host] = hosts_of(facts.spec.get("ResourceConfig") or {})
        self.streams = [log_stream(facts.name, host.name, at) for host in self.hosts]
        self._previous = previous
        self._started = time.monotonic()
        self._group = ProcessGroup(executor.stop_grace_seconds)
        self._lock = threading.Lock()
        self._failure: tuple[int, str] | None = None
        self._stopped = False
        self._result: RunResult | None = None
        self._done = threading.Event()
        self._closed = threading.Event()
        self._venv_lock = threading.Lock()  # a script-mode job's instances share one virtualenv
        self._thread = threading.Thread(target=self._main, name=f"run-{facts.name}", daemon=True)

    # -- the port ----------------------------------------------------------------------
    def elapsed(self) -> float:
        result = self._result
        return result.duration if result is not None else time.monotonic() - self._started

    def wait(self, timeout: float | None) -> RunResult | None:
        return self._result if self._done.wait(timeout) else None

    def stop(self) -> None:
        self._stopped = True
        self._group.cancel()

    # -- more ----------------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        return self._stopped

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the run has ended *and* cleaned up its instance directories."""
        return self._closed.wait(timeout)

    def begin(self) -> None:
        self._thread.start()

    # -- the work --------------------------------------------------------------------------
    def _main(self) -> None:
        try:
            if self._previous is not None:
                self._previous.join()
                self._previous = None
            result = self._execute()
        except Exception as error:  # a bug or a failing store: the run still ends
            result = RunResult(
                SETUP_EXIT_CODE,
                self._since_start(),
                limit_reason(f"InternalServerError: {type(error).__name__}: {error}"),
            )
        finally:
            self._group.close()
        self._result = result
        self._done.set()
        try:
            self.executor._ended(self)
        finally:
            self._closed.set()

    def _since_start(self) -> float:
        return time.monotonic() - self._started

    def _execute(self) -> RunResult:
        cap = self.executor.settings.max_instance_processes
        if len(self.hosts) > cap:  # before any thread, directory or process of an instance
            return RunResult(SETUP_EXIT_CODE, self._since_start(), over_cap_reason(cap, len(self.hosts)))
        if container_command(self.facts.spec) is not None:
            cause = views.unavailable()
            if cause is not None:
                return RunResult(SETUP_EXIT_CODE, self._since_start(), views.failure_reason(cause))
        base = self.executor.root / "instances" / self.key
        outcomes = [InstanceOutcome() for _ in self.hosts]
        name = f"run-{self.facts.name}-algo"
        threads = [  # at most max_instance_processes - 1: algo-1 runs in this thread
            threading.Thread(target=self._instance, args=(i, base, outcomes[i]), name=f"{name}-{i + 1}")
            for i in range(1, len(self.hosts))
        ]
        for thread in threads:
            thread.daemon = True
            thread.start()
        if outcomes:
            self._instance(0, base, outcomes[0])
        for thread in threads:
            thread.join()
        succeeded = all(o.exit_code == 0 for o in outcomes)
        self._upload(outcomes, keep_model=succeeded or self._stopped)
        if succeeded:
            return RunResult(0, self._since_start())
        code, reason = self._failure or (STOPPED_EXIT_CODE, "The run was stopped")
        return RunResult(code, self._since_start(), reason)

    def _instance(self, index: int, base: Path, outcome: InstanceOutcome) -> None:
        host = self.hosts[index]
        log = InstanceLog(self.executor.log_store, self.streams[index], self.at, self._started)
        try:
            tree = InstanceTree(base / host.name)
            tree.reset()
            contract = InstanceContract(self.facts, host, self.hosts, tree)
            self._inputs(contract, outcome)
            outcome.tree = tree  # inputs in place: from here on, outputs are uploaded
            argv, env = self._command(contract, base if contract.command is None else tree.root, log)
            code, process = run_to_end(self._group, argv, tree.code, env, log.line)
            outcome.exit_code = code
            if code != 0:
                outcome.failure_reason = failure_reason(tree.failure_file, process, code)
        except Stopped:
            outcome.exit_code = STOPPED_EXIT_CODE
            outcome.failure_reason = "The run was stopped before the entry point started"
        except InstallError as error:
            outcome.exit_code, outcome.failure_reason = error.exit_code or SETUP_EXIT_CODE, str(error)
        except (ClientError, SourceError) as error:
            outcome.exit_code, outcome.failure_reason = SETUP_EXIT_CODE, limit_reason(str(error))
        except Exception as error:
            outcome.exit_code = SETUP_EXIT_CODE
            outcome.failure_reason = limit_reason(f"InternalServerError: {type(error).__name__}: {error}")
        if outcome.exit_code != 0:
            with self._lock:
                first = self._failure is None
                if first:
                    self._failure = (outcome.exit_code, outcome.failure_reason or "")
            if first and len(self.hosts) > 1:
                self._group.cancel()  # one instance failed: the job fails, stop the others

    def _inputs(self, contract: InstanceContract, outcome: InstanceOutcome) -> None:
        """Config files, code (script mode), channels and checkpoints in place."""
        store = self.executor.object_store
        contract.write_config_files()
        if contract.command is None:
            fetch_source(store, contract.submit_directory, contract.tree.code)
        download_channels(store, contract)
        checkpoint_dir = contract.checkpoint_dir()
        if checkpoint_dir is None:
            return
        uri = self.facts.spec["CheckpointConfig"].get("S3Uri")
        if uri:
            outcome.checkpoints = (uri, checkpoint_dir, download_checkpoints(store, uri, checkpoint_dir))
        else:
            checkpoint_dir.mkdir(parents=True, exist_ok=True)

    def _command(
        self, contract: InstanceContract, home: Path, log: InstanceLog
    ) -> tuple[list[str], dict[str, str]]:
        """The process's command line and environment, once the virtualenv in ``home`` is ready.

        A script-mode job's instances share one (``home`` is the job's directory): the first
        makes and fills it, the others wait. A container's own installs run on every instance,
        as on SageMaker, so each has its own (``home`` is the instance's directory).
        """
        executor = self.executor
        tree = contract.tree
        venv = home / VENV
        if contract.command is not None:
            executor.environments.ensure(venv)
            env = activated(executor.container_environment(contract), venv)
            argv = views.launcher(tree.opt_ml, contract.warm_pool_cache, CONTAINER_CWD, contract.command)
            return argv, env
        env = executor.script_environment(contract)
        python = executor.python
        requirements = tree.code / REQUIREMENTS
        if requirements.is_file():

            def pip(argv: list[str], pip_env: Any) -> tuple[int, str]:
                code, process = run_to_end(self._group, argv, tree.code, pip_env, log.line)
                return code, (process.stderr_tail.text() or process.output_tail.text()).strip()

            with self._venv_lock:
                python, env = executor.environments.prepare(venv, requirements, env, pip)
        return contract.argv(python), env

    def _upload(self, outcomes: list[InstanceOutcome], keep_model: bool) -> None:
        facts = self.facts
        store = self.executor.object_store
        first = outcomes[0] if outcomes else None
        config = facts.spec.get("OutputDataConfig") or {}
        output_path = config.get("S3OutputPath")
        if first is not None and first.tree is not None and output_path:
            tree = first.tree
            upload_artifacts(
                store,
                output_path,
                facts.name,
                facts.region,
                tree.model if keep_model else None,
                tree.output_data,
                tree.scratch,
                compressed=config.get("CompressionType") != "NONE",
            )
        for outcome in reversed(outcomes):  # algo-1 last: its files win
            if outcome.checkpoints is not None:
                uri, local, baseline = outcome.checkpoints
                upload_checkpoints(store, uri, local, baseline, facts.region)
