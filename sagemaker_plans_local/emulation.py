"""The root of the domain: one account's state across regions, on one clock."""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import Callable, Sequence

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.services.logs.streams import LogStore
from sagemaker_plans_local.services.s3.objects import ObjectStore
from sagemaker_plans_local.services.sagemaker.clusters.clusters import Clusters
from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor
from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript
from sagemaker_plans_local.services.sagemaker.jobs.training_jobs import TrainingJobs
from sagemaker_plans_local.services.sagemaker.plans.default_inventory import default_inventory
from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList
from sagemaker_plans_local.services.sagemaker.plans.regional_capacity import RegionalCapacity
from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript, TrainingPlans
from sagemaker_plans_local.services.sagemaker.tags import ResourceTags

DEFAULT_SCRIPT = JobScript()
DEFAULT_PLAN_SCRIPT = PlanScript()

#: Builds the executor of one region's script-mode jobs: ``factory(emulation, region_name)``.
ExecutorFactory = Callable[["Emulation", str], Executor]


class Region:
    """Everything one region of the account holds."""

    def __init__(self, name: str, emulation: "Emulation") -> None:
        self.name = name
        self.training_plans = TrainingPlans(
            emulation.clock,
            emulation.settings,
            name,
            emulation.account_id,
            emulation.capacity.for_region(name),
            emulation.prices,
            emulation.plan_script_for,
        )
        self.training_jobs = TrainingJobs(
            emulation.clock,
            emulation.settings,
            name,
            emulation.account_id,
            cache_root=emulation.root / "warm-pool-cache" / name,
            script_for=emulation.script_for,
            plans=self.training_plans,
            lock=emulation.lock,
            executor=emulation.executor_factory(emulation, name) if emulation.executor_factory else None,
        )
        self.clusters = Clusters(
            emulation.clock, emulation.settings, name, emulation.account_id, self.training_plans
        )
        self.tags = ResourceTags(self.training_jobs, self.training_plans, self.clusters)


class Emulation:
    """Clock, settings, capacity, scripts and per-region state, guarded by one lock.

    ``reserved_instance_types`` (the model's ReservedCapacityInstanceType
    enum) seed the default capacity inventory of ``home_region``.
    ``executor_factory`` gives each region, when first used, the executor that
    runs its script-mode jobs' code (None: their runs are simulated).
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
    ) -> None:
        self.lock = threading.RLock()
        self.account_id = account_id
        self.root = root
        self.clock = VirtualClock(start_time, self.lock)
        self.settings = Settings()
        self.executor_factory = executor_factory
        self.prices = prices or PriceList.default()
        self.capacity = RegionalCapacity()
        for block in default_inventory(reserved_instance_types, home_region, self.clock.now()):
            self.capacity.add(
                block.instance_type, block.count, block.availability_zone, block.start, block.end
            )
        self.objects = ObjectStore(root / "s3", self.clock)
        self._logs: dict[str, LogStore] = {}
        self._scripts: dict[str, JobScript] = {}
        self._plan_scripts: dict[str, PlanScript] = {}
        self._regions: dict[str, Region] = {}

    def region(self, name: str) -> Region:
        region = self._regions.get(name)
        if region is None:
            with self.lock:
                region = self._regions.get(name)
                if region is None:
                    region = self._regions[name] = Region(name, self)
        return region

    def regions(self) -> list[Region]:
        return list(self._regions.values())

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
                store = self._logs[region] = LogStore(self.clock)
            return store

    def script_for(self, job_name: str) -> JobScript:
        """The scripted outcome of a job; names match regardless of case, as job names do."""
        return self._scripts.get(job_name.lower(), DEFAULT_SCRIPT)

    def plan_script_for(self, plan_name: str) -> PlanScript:
        """The scripted payment of a plan; names match regardless of case, as plan names do."""
        return self._plan_scripts.get(plan_name.lower(), DEFAULT_PLAN_SCRIPT)

    def script_job(self, job_name: str, script: JobScript) -> None:
        with self.lock:
            self._scripts[job_name.lower()] = script
            for region in self._regions.values():
                region.training_jobs.rescript(job_name)

    def script_plan(self, plan_name: str, script: PlanScript) -> None:
        with self.lock:
            self._plan_scripts[plan_name.lower()] = script
