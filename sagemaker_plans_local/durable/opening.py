"""Opening a durable root: its journal, an emulation on its recorded clock, its history replayed."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Sequence

from sagemaker_plans_local.core.journal import Journal
from sagemaker_plans_local.durable import gc_pause, snapshots
from sagemaker_plans_local.durable.leftovers import remove_leftovers
from sagemaker_plans_local.durable.root_meta import open_root
from sagemaker_plans_local.durable.root_trust import check_root
from sagemaker_plans_local.durable.services import journaled, replay_request
from sagemaker_plans_local.durable.state import Durable
from sagemaker_plans_local.emulation import Emulation, ExecutorFactory
from sagemaker_plans_local.service_registry import Services

log = logging.getLogger(__name__)


def open_durable(
    root: Path,
    account_id: str,
    region: str,
    start_time: datetime | None,
    reserved_types: Sequence[str],
    executor_factory: ExecutorFactory | None,
    runs_code: bool = True,
) -> tuple[Emulation, Services, Durable]:
    """The emulation, services and durable state of ``root`` (created if new), up to date.

    ``runs_code=False``: this process never claims a run (others on the root run the code).
    """
    check_root(root)  # another user's, open to all, or holding a link: refused
    journal = Journal(root)
    loaded = None
    try:
        clock = open_root(journal, account_id, region, start_time)
        loaded = snapshots.load(journal, root)
        if loaded is None:
            emulation = Emulation(
                account_id,
                root,
                clock.start_time,
                clock.home_region,
                reserved_types,
                executor_factory=executor_factory,
                created=clock.created,
            )
            applied, late = 0, list[snapshots.LateExecutor]()
        else:
            emulation, applied, late = loaded
            emulation.executor_factory = executor_factory
        services = Services(emulation)
        replay = partial(_replay_call, services)
        attach = partial(_attach, late, emulation)
        durable = Durable(root, journal, emulation, replay, runs_code, applied=applied, attach=attach)
        durable.frozen = loaded is not None  # a loaded snapshot is frozen (gc_pause.py) until release
    except BaseException:
        journal.close()
        if loaded is not None:
            gc_pause.thaw()
        raise
    services.wrap = partial(journaled, durable=durable)
    remove_leftovers(root)  # after this process's own owner is there
    return emulation, services, durable


def _attach(late: list[snapshots.LateExecutor], emulation: Emulation) -> None:
    for executor in late:
        executor.attach(emulation)


def _replay_call(services: Services, service: str, region: str, operation: str, body: dict[str, Any]) -> None:
    from sagemaker_plans_local.protocol.service import trusted  # loaded with the first service

    with trusted():  # it was valid when journaled: not validated again
        answer = services.inner(service).handle(region, operation, replay_request(body))
    if answer.status >= 300:  # the journal holds only calls that succeeded: the state has diverged
        log.warning("replaying %s.%s answered %s: %s", service, operation, answer.status, bytes(answer.body))
