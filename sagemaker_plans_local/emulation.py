"""The root of the domain: one account's state across regions, on one clock."""

from __future__ import annotations

import functools
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar, cast

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.settings import Settings

if TYPE_CHECKING:
    from sagemaker_plans_local.services.logs.streams import LogStore
    from sagemaker_plans_local.services.s3.objects import ObjectStore
    from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor
    from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript
    from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList
    from sagemaker_plans_local.services.sagemaker.plans.regional_capacity import RegionalCapacity
    from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript
    from sagemaker_plans_local.services.sagemaker.region import Region

#: Builds the executor of one region's script-mode jobs: ``factory(emulation, region_name)``.
ExecutorFactory = Callable[["Emulation", str], "Executor"]

_Part = TypeVar("_Part")


class Emulation:
    """Clock, settings, capacity, scripts and per-region state, guarded by one lock.

    ``reserved_instance_types`` (the model's ReservedCapacityInstanceType
    enum) seed the default capacity inventory of ``home_region``.
    ``executor_factory`` gives each region, when first used, the executor that
    runs its script-mode jobs' code (None: their runs are simulated).
    ``created`` (default: now) is when the default inventory is laid out from.
    ``run_logs(region)`` is where local runs write their log lines (a
    durable backend journals them; by default the region's log store).
    """

    def __init__(
        self,
        account_id: str,
        root: Path,
        start_time: datetime | None,
        home_region: str = "us-east-1",
        reserved_instance_types: Sequence[str] = (),
        prices: PriceList | None = None,
        executor_factory: ExecutorFactory | None = None,
        created: datetime | None = None,
    ) -> None:
        self.lock = threading.RLock()
        self.account_id = account_id
        self.root = root
        self.clock = VirtualClock(start_time, self.lock)
        self.settings = Settings()
        self.executor_factory = executor_factory
        # What is made on first use: the object store, the capacity inventory, the price list.
        self._parts: dict[str, object] = {} if prices is None else {"prices": prices}
        # The default inventory is laid out from the creation time, whenever it is first needed.
        self._inventory_seed = (tuple(reserved_instance_types), home_region, created or self.clock.now())
        self.run_logs: Callable[[str], Any] = self.log_store
        self._logs: dict[str, LogStore] = {}
        self._scripts: dict[str, JobScript] = {}
        self._same_scripts: dict[JobScript, JobScript] = {}  # equal scripts held once (bounded)
        self._plan_scripts: dict[str, PlanScript] = {}
        self._regions: dict[str, Region] = {}

    def __getstate__(self) -> dict:
        """What a snapshot keeps: the state, not the object store (files under ``root``) nor the hooks."""
        state = self.__dict__.copy()
        state["_parts"] = {name: part for name, part in self._parts.items() if name != "objects"}
        state.update(executor_factory=None, run_logs=None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.run_logs = self.log_store

    @property
    def objects(self) -> ObjectStore:
        """The account's S3 objects under ``root/s3`` (made, and its modules loaded, on first use)."""
        return cast("ObjectStore", self._once(self._parts, "objects", self._new_objects))

    @property
    def capacity(self) -> RegionalCapacity:
        """Capacity free for training plans, per region (the default inventory laid out on first use)."""
        return cast("RegionalCapacity", self._once(self._parts, "capacity", self._new_capacity))

    @property
    def prices(self) -> PriceList:
        """The plans' price list (the shipped one unless given)."""
        return cast("PriceList", self._once(self._parts, "prices", _default_prices))

    def region(self, name: str) -> Region:
        """The SageMaker state of one region, made on first use (its modules load with the first)."""
        return self._once(self._regions, name, lambda: self._new_region(name))

    def _once(self, made: dict[str, _Part], key: str, make: Callable[[], _Part]) -> _Part:
        """``made[key]``, made by the first caller under the lock."""
        value = made.get(key)
        if value is None:
            with self.lock:
                value = made.get(key)
                if value is None:
                    value = made[key] = make()
        return value

    def _new_objects(self) -> ObjectStore:
        from sagemaker_plans_local.services.s3.objects import ObjectStore

        return ObjectStore(self.root / "s3", self.clock)

    def _new_capacity(self) -> RegionalCapacity:
        """The regional capacity with the default inventory laid out from the creation time."""
        from sagemaker_plans_local.services.sagemaker.plans.default_inventory import default_inventory
        from sagemaker_plans_local.services.sagemaker.plans.regional_capacity import RegionalCapacity

        capacity = RegionalCapacity()
        for block in default_inventory(*self._inventory_seed):
            capacity.add(block.instance_type, block.count, block.availability_zone, block.start, block.end)
        return capacity

    def _new_region(self, name: str) -> Region:
        from sagemaker_plans_local.services.sagemaker.region import Region

        executor = self.executor_factory(self, name) if self.executor_factory else None
        return Region(
            name,
            self.clock,
            self.settings,
            self.account_id,
            self.lock,
            capacity=self.capacity.for_region(name),
            prices=self.prices,
            cache_root=self.root / "warm-pool-cache" / name,
            script_for=self.script_for,
            plan_script_for=self.plan_script_for,
            executor=executor,
        )

    def regions(self) -> list[Region]:
        return list(self._regions.values())

    def at_work(self) -> bool:
        """Whether a close would cut work short: a call holds the lock, or a job's code runs (or
        another process's run is awaited) here."""
        if not self.lock.acquire(blocking=False):
            return True
        try:
            services = [region.training_jobs for region in self.regions()]
            return any(jobs.running(job) for jobs in services for job in jobs.all())
        finally:
            self.lock.release()

    def close(self, timeout: float | None = None) -> None:
        """Stop every region's local runs (waiting at most ``timeout`` real seconds for each)."""
        for region in self.regions():
            executor = region.training_jobs.executor
            if executor is not None:
                executor.close(timeout)

    def log_store(self, region: str) -> LogStore:
        """CloudWatch Logs of one region (log lines carry the backend's clock time)."""
        with self.lock:
            store = self._logs.get(region)
            if store is None:
                from sagemaker_plans_local.services.logs.streams import LogStore

                store = self._logs[region] = LogStore(self.clock)
            return store

    def script_for(self, job_name: str) -> JobScript:
        """The scripted outcome of a job; names match regardless of case, as job names do."""
        return self._scripts.get(job_name.lower()) or _default_scripts()[0]

    def plan_script_for(self, plan_name: str) -> PlanScript:
        """The scripted payment of a plan; names match regardless of case, as plan names do."""
        return self._plan_scripts.get(plan_name.lower()) or _default_scripts()[1]

    def script_job(self, job_name: str, script: JobScript) -> None:
        with self.lock:
            key = job_name.lower()
            if len(self._same_scripts) >= 10_000:
                self._same_scripts.clear()
            script = self._same_scripts.setdefault(script, script)
            self._scripts[job_name if key == job_name else key] = script
            for region in self._regions.values():
                region.training_jobs.rescript(job_name)

    def script_plan(self, plan_name: str, script: PlanScript) -> None:
        with self.lock:
            self._plan_scripts[plan_name.lower()] = script


@functools.lru_cache(maxsize=None)
def _default_scripts() -> tuple[JobScript, PlanScript]:
    """A job's and a plan's outcome when none is scripted (their modules load with the first region)."""
    from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript
    from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript

    return JobScript(), PlanScript()


def _default_prices() -> PriceList:
    from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList

    return PriceList.default()
