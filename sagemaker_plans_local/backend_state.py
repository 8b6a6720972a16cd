"""What a LocalBackend is made of and how it ends: its emulation, services, executor and durable state."""

from __future__ import annotations

import logging
import pickle
import zlib
from datetime import datetime
from typing import TYPE_CHECKING

from sagemaker_plans_local.backend_root import BackendRoot
from sagemaker_plans_local.emulation import Emulation, ExecutorFactory
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.service_registry import Services
from sagemaker_plans_local.transport import in_job

if TYPE_CHECKING:
    from sagemaker_plans_local.durable.state import Durable
    from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor

log = logging.getLogger(__name__)

#: The file of a kept temporary root holding its suspended backend's state (:func:`suspend`).
SUSPENDED = "suspended-state"


def open_state(
    held: BackendRoot,
    account_id: str,
    region: str,
    start_time: datetime | None,
    factory: ExecutorFactory | None,
    runs_code: bool,
) -> tuple[Emulation, Services, Durable | None]:
    """The backend's emulation and services: on a given root, durable (its journal replayed).

    ``factory`` None: no executor, every job is simulated.
    """
    reserved_types = service_model().shape_for("ReservedCapacityInstanceType").enum
    if held.owned:
        emulation = _resumed(held, factory) or Emulation(
            account_id,
            held.path,
            start_time,
            region,
            reserved_types,
            executor_factory=factory,
            created=held.created,
        )
        return emulation, Services(emulation), None
    from sagemaker_plans_local.durable.opening import open_durable

    return open_durable(held.path, account_id, region, start_time, reserved_types, factory, runs_code)


def suspend(emulation: Emulation, held: BackendRoot) -> bool:
    """Leave an ephemeral emulation's state in its root, kept for the next backend on it to resume
    (False, nothing written: it cannot be kept now, a run in progress)."""
    from sagemaker_plans_local.durable import snapshots

    state = held.path / SUSPENDED
    with emulation.lock:
        try:
            data = zlib.compress(snapshots.dumps(emulation), 1)  # a quarter of the size for 0.4 ms
            state.write_bytes(data)
        except Exception as error:  # noqa: BLE001  # a run in progress, a full disk: it stays open
            expected = isinstance(error, (pickle.PicklingError, TypeError, AttributeError))
            log.log(
                logging.DEBUG if expected else logging.WARNING, "%s stays open: %r", held.path, str(error)
            )
            state.unlink(missing_ok=True)  # (the message only: the error's frames hold the backend)
            return False
    held.kept = True
    return True


def _resumed(held: BackendRoot, factory: ExecutorFactory | None) -> Emulation | None:
    """The emulation suspended in ``held`` (None: none is), its file removed."""
    state = held.path / SUSPENDED
    if not held.kept or not state.exists():
        return None
    from sagemaker_plans_local.durable import snapshots

    emulation, executors = snapshots.loads(zlib.decompress(state.read_bytes()))
    state.unlink()
    held.kept = False
    emulation.executor_factory = factory
    for executor in executors:
        executor.attach(emulation)
    return emulation


def local_executor(emulation: Emulation, region: str, endpoint_url: str | None = None) -> Executor:
    """The local runtime for one region's script-mode jobs (loaded with the first region, not the backend)."""
    from sagemaker_plans_local.runtime import LocalExecutor

    return LocalExecutor(
        emulation.root / "runtime" / region,
        emulation.objects,
        emulation.run_logs(region),
        emulation.clock,
        job_environment=in_job.job_environment(
            str(emulation.objects.root), emulation.account_id, endpoint_url
        ),
        job_python_path=[in_job.BOOTSTRAP_DIR],
        settings=emulation.settings,
    )


def shut_down(emulation: Emulation, root: BackendRoot, durable: Durable | None) -> None:
    """Close a backend (once, from close(), garbage collection or interpreter exit)."""
    try:
        if durable is not None:
            durable.close()
        emulation.close(timeout=10)
    finally:
        if durable is not None:
            durable.release()
        root.release()
