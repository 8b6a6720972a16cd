"""One run of a job's code on all its instances: :class:`LocalRun`, the domain's ``Run``.

A background thread prepares every instance (``/opt/ml`` tree, code, data,
checkpoints, virtualenv), gives the run its network (one loopback address per
instance, :mod:`.network`), starts what each instance starts (:mod:`.launchers`
for a script-mode job, the command for a container) concurrently, uploads the
artifacts, and then publishes the
:class:`~sagemaker_plans_local.services.sagemaker.jobs.execution.RunResult`.
"""

from __future__ import annotations

import signal
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.runtime import launchers, systems, views
from sagemaker_plans_local.runtime.commands import Environments, Installer, Network, command_of
from sagemaker_plans_local.runtime.contract import (
    Host,
    InstanceContract,
    InstanceTree,
    JobFacts,
    container_command,
    hosts_of,
    log_stream,
)
from sagemaker_plans_local.runtime.environments import InstallError
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
from sagemaker_plans_local.runtime.network import AddressBlocks, hosts_file
from sagemaker_plans_local.runtime.outputs import upload_artifacts, upload_checkpoints
from sagemaker_plans_local.runtime.processes import ProcessGroup, Stopped, exit_code, run_to_end
from sagemaker_plans_local.services.sagemaker.jobs.execution import RunResult

#: Exit code of a run stopped before its processes started (as if killed by SIGTERM).
STOPPED_EXIT_CODE = exit_code(-signal.SIGTERM)
#: The run's hosts file and mpirun's agent, in the job's (or pool's) directory.
HOSTS_FILE, MPI_AGENT = "hosts", "mpi-agent"


class Owner(Environments, Protocol):
    """The executor a run belongs to (:class:`~sagemaker_plans_local.runtime.executor.LocalExecutor`)."""

    root: Path
    object_store: Any
    log_store: Any
    stop_grace_seconds: float
    settings: Settings
    addresses: AddressBlocks

    def _ended(self, run: "LocalRun") -> None: ...


class LocalRun:
    """One run of a job's entry point on all its instances (the domain's ``Run``)."""

    def __init__(
        self,
        executor: Owner,
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
        self._ended_hosts = {host.name: threading.Event() for host in self.hosts}
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
        count, per_host = launchers.processes_of(self.facts.spec, len(self.hosts))
        if count > cap:  # before any thread, directory or process of an instance
            return RunResult(SETUP_EXIT_CODE, self._since_start(), over_cap_reason(cap, count, per_host))
        if container_command(self.facts.spec) is not None:
            cause = views.unavailable()
            if cause is not None:
                return RunResult(SETUP_EXIT_CODE, self._since_start(), views.failure_reason(cause))
        base = self.executor.root / "instances" / self.key
        block = self.executor.addresses.reserve(len(self.hosts))
        try:
            return self._on_network(base, self._network(base, block))
        finally:
            self.executor.addresses.release(block, len(self.hosts))

    def _network(self, base: Path, block: int) -> Network:
        """The run's hosts file (every instance's name) and mpirun's agent, written in ``base``."""
        base.mkdir(parents=True, exist_ok=True)
        hosts, agent = base / HOSTS_FILE, base / MPI_AGENT
        hosts.write_text(hosts_file([h.name for h in self.hosts], block))
        viewed = views.unavailable() is None
        agent.write_text(launchers.agent_script(views.program() if viewed else None))
        agent.chmod(0o755)
        if container_command(self.facts.spec) is not None:
            systems.write_shell(base)
        return Network(hosts, agent, viewed)

    def _on_network(self, base: Path, network: Network) -> RunResult:
        outcomes = [InstanceOutcome() for _ in self.hosts]
        name = f"run-{self.facts.name}-algo"
        threads = [  # at most max_instance_processes - 1: algo-1 runs in this thread
            threading.Thread(
                target=self._instance, args=(i, base, network, outcomes[i]), name=f"{name}-{i + 1}"
            )
            for i in range(1, len(self.hosts))
        ]
        for thread in threads:
            thread.daemon = True
            thread.start()
        if outcomes:
            self._instance(0, base, network, outcomes[0])
        for thread in threads:
            thread.join()
        succeeded = all(o.exit_code == 0 for o in outcomes)
        self._upload(outcomes, keep_model=succeeded or self._stopped)
        if succeeded:
            return RunResult(0, self._since_start())
        code, reason = self._failure or (STOPPED_EXIT_CODE, "The run was stopped")
        return RunResult(code, self._since_start(), reason)

    def _instance(self, index: int, base: Path, network: Network, outcome: InstanceOutcome) -> None:
        host = self.hosts[index]
        log = InstanceLog(self.executor.log_store, self.streams[index], self.at, self._started)
        try:
            tree = InstanceTree(base / host.name)
            tree.reset()
            contract = InstanceContract(self.facts, host, self.hosts, tree)
            self._inputs(contract, outcome)
            outcome.tree = tree  # inputs in place: from here on, outputs are uploaded
            home = base if contract.command is None else tree.root
            command = command_of(self.executor, contract, home, network, self._installer(tree, log))
            if command.leader is not None:  # an MPI worker: the leader's mpirun reaches it
                log.line("Starting MPI run as worker node.")  # the toolkit's WorkerRunner's lines
                self._ended_hosts[command.leader].wait()
                log.line("MPI process finished.")
                outcome.exit_code = 0
            else:
                code, process = run_to_end(self._group, command.argv, tree.code, command.env, log.line)
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
        finally:
            self._ended_hosts[host.name].set()
        self._ended(outcome)

    def _ended(self, outcome: InstanceOutcome) -> None:
        """An instance failed: the first failure is the job's, and the others are stopped."""
        if outcome.exit_code == 0:
            return
        with self._lock:
            first = self._failure is None
            if first:
                self._failure = (outcome.exit_code, outcome.failure_reason or "")
        if first and len(self.hosts) > 1:
            self._group.cancel()  # one instance failed: the job fails, stop the others

    def _installer(self, tree: InstanceTree, log: InstanceLog) -> Installer:
        """Fills the job's shared virtualenv, one instance at a time, pip's output in ``log``."""

        def pip(argv: list[str], pip_env: Any) -> tuple[int, str]:
            code, process = run_to_end(self._group, argv, tree.code, pip_env, log.line)
            return code, (process.stderr_tail.text() or process.output_tail.text()).strip()

        def install(venv: Path, requirements: Path, env: dict) -> tuple[str, dict]:
            with self._venv_lock:
                return self.executor.environments.prepare(venv, requirements, env, pip)

        return install

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
