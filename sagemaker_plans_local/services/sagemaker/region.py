"""Everything one region of the account holds in SageMaker: plans, jobs, clusters, tags."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from sagemaker_plans_local.core.clock import VirtualClock
from sagemaker_plans_local.core.settings import Settings
from sagemaker_plans_local.services.sagemaker.clusters.clusters import Clusters
from sagemaker_plans_local.services.sagemaker.jobs.execution import Executor
from sagemaker_plans_local.services.sagemaker.jobs.phases import JobScript
from sagemaker_plans_local.services.sagemaker.jobs.training_jobs import TrainingJobs
from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityInventory
from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList
from sagemaker_plans_local.services.sagemaker.plans.training_plans import PlanScript, TrainingPlans
from sagemaker_plans_local.services.sagemaker.tags import ResourceTags


class Region:
    """One region's training plans, training jobs (with their warm pools), clusters and tags."""

    def __init__(
        self,
        name: str,
        clock: VirtualClock,
        settings: Settings,
        account_id: str,
        lock: threading.RLock,
        *,
        capacity: CapacityInventory,
        prices: PriceList,
        cache_root: Path,
        script_for: Callable[[str], JobScript],
        plan_script_for: Callable[[str], PlanScript],
        executor: Executor | None,
    ) -> None:
        self.name = name
        self.training_plans = TrainingPlans(
            clock, settings, name, account_id, capacity, prices, plan_script_for
        )
        self.training_jobs = TrainingJobs(
            clock,
            settings,
            name,
            account_id,
            cache_root=cache_root,
            script_for=script_for,
            plans=self.training_plans,
            lock=lock,
            executor=executor,
        )
        self.clusters = Clusters(clock, settings, name, account_id, self.training_plans)
        self.tags = ResourceTags(self.training_jobs, self.training_plans, self.clusters)
