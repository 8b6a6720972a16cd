"""Managed warm pools: kept instances, matching, reuse chains, keep-alive, cache.

A :class:`WarmPool` is one chain: the instances first kept by a job and then
handed from job to job. Its persistent cache directory lives as long as it.
"""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Hashable, Mapping

import attrs

from sagemaker_plans_local.core.clock import Event, VirtualClock
from sagemaker_plans_local.core.errors import InvalidRequest
from sagemaker_plans_local.core.settings import Settings, quota_for
from sagemaker_plans_local.services.sagemaker.jobs.phases import seconds_between
from sagemaker_plans_local.services.sagemaker.statuses import WarmPoolStatus

if TYPE_CHECKING:
    from sagemaker_plans_local.services.sagemaker.jobs.job_records import TrainingJob

#: A chain of reuses lasts at most this long from the first job's end.
MAX_CHAIN = timedelta(days=28)


def pool_key(pool: "WarmPool") -> str:
    """How a pool is known among the consumers of a training plan's instances."""
    return f"pool:{pool.pool_id}"


def match_key(spec: Mapping) -> Hashable:
    """What two jobs must share to hand a warm pool from one to the other.

    The order of security groups and subnets does not matter. A pool on a
    training plan holds the plan's instances, so only jobs on that plan match it.
    """
    resources = spec.get("ResourceConfig") or {}
    vpc = spec.get("VpcConfig") or {}
    chaining = (spec.get("SessionChainingConfig") or {}).get("EnableSessionTagChaining", False)
    return (
        resources.get("TrainingPlanArn"),
        spec.get("RoleArn"),
        resources.get("InstanceCount"),
        resources.get("InstanceType"),
        resources.get("VolumeKmsKeyId"),
        resources.get("VolumeSizeInGB"),
        frozenset(vpc.get("SecurityGroupIds") or ()),
        frozenset(vpc.get("Subnets") or ()),
        bool(spec.get("EnableInterContainerTrafficEncryption", False)),
        bool(spec.get("EnableNetworkIsolation", False)),
        bool(chaining),
    )


@attrs.define(eq=False)
class WarmPoolView:
    """What DescribeTrainingJob shows as a job's WarmPoolStatus."""

    status: WarmPoolStatus
    retained_seconds: int | None = None
    reused_by: str | None = None


@attrs.define(eq=False)
class WarmPool:
    """One chain of kept instances and its persistent cache directory."""

    pool_id: str
    key: Hashable
    instance_type: str
    instance_count: int
    cache_dir: Path
    holder: "TrainingJob"
    state: WarmPoolStatus = WarmPoolStatus.IN_USE  # IN_USE | AVAILABLE | TERMINATED
    kept: bool = False  # counted against the warm-pool quota
    chain_started_at: datetime | None = None
    available_since: datetime | None = None
    expires_at: datetime | None = None
    expiry: Event | None = None


class WarmPools:
    """The warm pools of one region."""

    def __init__(
        self,
        clock: VirtualClock,
        settings: Settings,
        cache_root: Path,
        on_idle_change: Callable[[str, int], None],
        on_terminated: Callable[[WarmPool, datetime], None],
    ) -> None:
        self._clock = clock
        self._settings = settings
        self._cache_root = cache_root
        self._on_idle_change = on_idle_change
        self._on_terminated = on_terminated
        self._ids = itertools.count(1)
        # match key -> pools by id, in the order they became Available.
        self._available: dict[Hashable, dict[str, WarmPool]] = {}
        self._kept_instances: Counter[str] = Counter()

    # -- queries ---------------------------------------------------------
    def available_pools(self) -> list[WarmPool]:
        return [pool for pools in self._available.values() for pool in pools.values()]

    def find_match(self, spec: Mapping) -> WarmPool | None:
        """The matching pool that became Available first, if any."""
        pools = self._available.get(match_key(spec))
        return next(iter(pools.values())) if pools else None

    # -- lifecycle ---------------------------------------------------------
    def claim(self, pool: WarmPool, job: "TrainingJob", at: datetime) -> None:
        """Hand an Available pool to ``job`` (which then starts warm)."""
        previous = pool.holder
        assert previous.ended_at is not None  # an Available pool's holder has ended
        self._leave_available(pool)
        previous.warm_pool = WarmPoolView(
            WarmPoolStatus.REUSED, seconds_between(previous.ended_at, at), reused_by=job.name
        )
        previous.last_modified = at
        pool.holder = job
        pool.state = WarmPoolStatus.IN_USE
        job.pool = pool
        job.warm_pool = WarmPoolView(WarmPoolStatus.IN_USE)

    def open(self, job: "TrainingJob") -> WarmPool:
        """Start a chain for a cold job that asked for a warm pool; makes its cache."""
        resources = job.spec["ResourceConfig"]
        pool_id = f"wp-{next(self._ids):06d}"
        cache_dir = self._cache_root / pool_id
        cache_dir.mkdir(parents=True, exist_ok=True)
        pool = WarmPool(
            pool_id,
            match_key(job.spec),
            resources["InstanceType"],
            resources["InstanceCount"],
            cache_dir,
            holder=job,
        )
        job.pool = pool
        return pool

    def release(self, job: "TrainingJob", at: datetime, keep: bool) -> None:
        """``job`` ended at ``at``: keep its pool Available, or end it."""
        keep_alive = job.keep_alive_seconds
        pool = job.pool
        if pool is None:
            if not keep_alive:
                return
            if not keep:
                job.warm_pool = WarmPoolView(WarmPoolStatus.TERMINATED, 0)
                return
            pool = self.open(job)
        if not keep or not keep_alive or not self._within_quota(pool):
            self._terminate(pool, at)
            return
        if not pool.kept:
            pool.kept = True
            pool.chain_started_at = at
            self._kept_instances[pool.instance_type] += pool.instance_count
        assert pool.chain_started_at is not None  # set when the pool was first kept
        expires_at = min(at + timedelta(seconds=keep_alive), pool.chain_started_at + MAX_CHAIN)
        if expires_at <= at:
            self._terminate(pool, at)
            return
        pool.state = WarmPoolStatus.AVAILABLE
        pool.available_since = at
        self._available.setdefault(pool.key, {})[pool.pool_id] = pool
        self._on_idle_change(pool.instance_type, pool.instance_count)
        job.warm_pool = WarmPoolView(WarmPoolStatus.AVAILABLE)
        self._set_expiry(pool, expires_at)

    def update_keep_alive(self, job: "TrainingJob", seconds: int, at: datetime) -> None:
        """Change (or with 0 end) the keep-alive of ``job``'s Available pool."""
        pool = job.pool
        if job.warm_pool is None or job.warm_pool.status != WarmPoolStatus.AVAILABLE or pool is None:
            current = job.warm_pool.status if job.warm_pool else "None"
            raise InvalidRequest(
                "You can update KeepAlivePeriodInSeconds only for a training job that has "
                f"finished and whose warm pool status is Available; the warm pool status of "
                f"training job {job.name} is {current}."
            )
        if seconds == 0:
            self._terminate(pool, at)
            return
        assert job.ended_at is not None and pool.chain_started_at is not None  # an Available pool's job
        expires_at = min(job.ended_at + timedelta(seconds=seconds), pool.chain_started_at + MAX_CHAIN)
        if expires_at <= at:
            self._terminate(pool, at)
        else:
            self._set_expiry(pool, expires_at)

    def terminate_where(self, predicate: Callable[[WarmPool], bool], at: datetime) -> None:
        """End every Available pool for which ``predicate`` holds."""
        for pool in [pool for pool in self.available_pools() if predicate(pool)]:
            self._terminate(pool, at)

    # -- internals ---------------------------------------------------------
    def _within_quota(self, pool: WarmPool) -> bool:
        if pool.kept:
            return True
        limit = quota_for(self._settings.warm_pool_quota, pool.instance_type)
        return limit is None or self._kept_instances[pool.instance_type] + pool.instance_count <= limit

    def _set_expiry(self, pool: WarmPool, expires_at: datetime) -> None:
        if pool.expiry is not None:
            pool.expiry.cancel()
        pool.expires_at = expires_at
        pool.expiry = self._clock.schedule(expires_at, lambda at: self._terminate(pool, at))

    def _leave_available(self, pool: WarmPool) -> None:
        if pool.expiry is not None:
            pool.expiry.cancel()
            pool.expiry = None
        if pool.state == WarmPoolStatus.AVAILABLE:
            pools = self._available[pool.key]
            del pools[pool.pool_id]
            if not pools:
                del self._available[pool.key]
            self._on_idle_change(pool.instance_type, -pool.instance_count)

    def _terminate(self, pool: WarmPool, at: datetime) -> None:
        if pool.state == WarmPoolStatus.TERMINATED:
            return
        self._leave_available(pool)
        pool.state = WarmPoolStatus.TERMINATED
        if pool.kept:
            self._kept_instances[pool.instance_type] -= pool.instance_count
        shutil.rmtree(pool.cache_dir, ignore_errors=True)
        holder = pool.holder
        if holder.ended_at is not None:
            holder.warm_pool = WarmPoolView(WarmPoolStatus.TERMINATED, seconds_between(holder.ended_at, at))
            holder.last_modified = max(holder.last_modified, at)
        self._on_terminated(pool, at)
