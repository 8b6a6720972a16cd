"""Managed warm pools: kept instances, matching, reuse chains, keep-alive, cache.

A :class:`WarmPool` is one chain: the instances first kept by a job and then
handed from job to job. Its persistent cache directory is made on first use
(a chain of simulated jobs never makes one) and lives as long as it.
:class:`WarmPools` never touches a job or the clock: its commands return what
changed (:class:`Handover`, :class:`PoolKept`, :class:`PoolEnded`) and the job
service applies that to its jobs and schedules the pool's expiry.
"""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Hashable, Iterator, Mapping, Union

import attrs

from sagemaker_plans_local.core.clock import Event
from sagemaker_plans_local.core.settings import Settings, quota_for
from sagemaker_plans_local.services.sagemaker.jobs.phases import seconds_between
from sagemaker_plans_local.services.sagemaker.statuses import WarmPoolStatus

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
    """One chain of kept instances and its persistent cache directory (at ``cache_path``).

    ``holder`` names the job the instances run (or last ran) for; ``plan_arn``
    is the training plan whose instances the chain holds, if any.
    """

    pool_id: str
    key: Hashable
    instance_type: str
    instance_count: int
    cache_path: Path  # made on first use (cache_dir)
    holder: str
    plan_arn: str | None = None
    state: WarmPoolStatus = WarmPoolStatus.IN_USE  # IN_USE | AVAILABLE | TERMINATED
    kept: bool = False  # counted against the warm-pool quota
    chain_started_at: datetime | None = None
    available_since: datetime | None = None
    expires_at: datetime | None = None
    expiry: Event | None = None

    @property
    def cache_dir(self) -> Path:
        """The chain's persistent cache directory, made on first use while the pool lasts."""
        if self.state != WarmPoolStatus.TERMINATED:
            self.cache_path.mkdir(parents=True, exist_ok=True)
        return self.cache_path


@attrs.frozen
class Handover:
    """An Available pool went to a new job: ``previous`` (its holder until now) kept it ``retained_seconds``."""

    previous: str
    retained_seconds: int


@attrs.frozen
class PoolKept:
    """``pool`` is Available until ``expires_at``: its holder shows Available; schedule its expiry."""

    pool: WarmPool
    expires_at: datetime


@attrs.frozen
class PoolEnded:
    """``pool`` was terminated at ``at``: its ended holder shows Terminated; its instances are free."""

    pool: WarmPool
    at: datetime


PoolChange = Union[PoolKept, PoolEnded]


class WarmPools:
    """The warm pools of one region."""

    def __init__(self, settings: Settings, cache_root: Path) -> None:
        self._settings = settings
        self._cache_root = cache_root
        self._ids = itertools.count(1)
        # match key -> pools by id, in the order they became Available.
        self._available: dict[Hashable, dict[str, WarmPool]] = {}
        self._kept_instances: Counter[str] = Counter()
        self._idle_instances: Counter[str] = Counter()

    # -- queries ---------------------------------------------------------
    def available_pools(self) -> list[WarmPool]:
        return [pool for pools in self._available.values() for pool in pools.values()]

    def find_match(self, spec: Mapping) -> WarmPool | None:
        """The matching pool that became Available first, if any."""
        pools = self._available.get(match_key(spec))
        return next(iter(pools.values())) if pools else None

    def idle(self, instance_type: str) -> int:
        """Instances of ``instance_type`` kept in Available pools (they count against the quota)."""
        return self._idle_instances[instance_type]

    # -- lifecycle ---------------------------------------------------------
    def claim(self, pool: WarmPool, job_name: str, at: datetime) -> Handover:
        """Hand an Available pool to the job ``job_name`` (which then starts warm)."""
        assert pool.available_since is not None  # an Available pool's holder has ended
        handover = Handover(pool.holder, seconds_between(pool.available_since, at))
        self._leave_available(pool)
        pool.holder = job_name
        pool.state = WarmPoolStatus.IN_USE
        return handover

    def open(self, job_name: str, spec: Mapping, plan_arn: str | None) -> WarmPool:
        """Start a chain for a cold job (on the training plan ``plan_arn``) that asked for a warm pool."""
        resources = spec["ResourceConfig"]
        pool_id = f"wp-{next(self._ids):06d}"
        return WarmPool(
            pool_id,
            match_key(spec),
            resources["InstanceType"],
            resources["InstanceCount"],
            self._cache_root / pool_id,
            holder=job_name,
            plan_arn=plan_arn,
        )

    def release(self, pool: WarmPool, keep_alive: int, at: datetime, keep: bool) -> PoolChange:
        """The pool's holder ended at ``at``: keep the pool Available, or end it."""
        if not keep or not keep_alive or not self._within_quota(pool):
            return self._end(pool, at)
        if not pool.kept:
            pool.kept = True
            pool.chain_started_at = at
            self._kept_instances[pool.instance_type] += pool.instance_count
        assert pool.chain_started_at is not None  # set when the pool was first kept
        expires_at = min(at + timedelta(seconds=keep_alive), pool.chain_started_at + MAX_CHAIN)
        if expires_at <= at:
            return self._end(pool, at)
        pool.state = WarmPoolStatus.AVAILABLE
        pool.available_since = at
        self._available.setdefault(pool.key, {})[pool.pool_id] = pool
        self._idle_instances[pool.instance_type] += pool.instance_count
        return self._keep_until(pool, expires_at)

    def update_keep_alive(self, pool: WarmPool, seconds: int, ended_at: datetime, at: datetime) -> PoolChange:
        """Change (or with 0 end) the keep-alive of an Available pool whose holder ended at ``ended_at``."""
        if seconds == 0:
            return self._end(pool, at)
        assert pool.chain_started_at is not None  # an Available pool was kept
        expires_at = min(ended_at + timedelta(seconds=seconds), pool.chain_started_at + MAX_CHAIN)
        if expires_at <= at:
            return self._end(pool, at)
        return self._keep_until(pool, expires_at)

    def expire_with(self, pool: WarmPool, event: Event) -> None:
        """``event`` (on the clock at ``pool.expires_at``) ends the pool unless it changes first."""
        pool.expiry = event

    def terminate(self, pool: WarmPool, at: datetime) -> PoolEnded | None:
        """End ``pool`` at ``at`` (None if it has already ended)."""
        if pool.state == WarmPoolStatus.TERMINATED:
            return None
        return self._end(pool, at)

    def terminate_plan_pools(self, plan_arn: str, at: datetime) -> Iterator[PoolEnded]:
        """End every Available pool on the training plan ``plan_arn``, one at a time."""
        for pool in [pool for pool in self.available_pools() if pool.plan_arn == plan_arn]:
            ended = self.terminate(pool, at)
            if ended is not None:
                yield ended

    # -- internals ---------------------------------------------------------
    def _within_quota(self, pool: WarmPool) -> bool:
        if pool.kept:
            return True
        limit = quota_for(self._settings.warm_pool_quota, pool.instance_type)
        return limit is None or self._kept_instances[pool.instance_type] + pool.instance_count <= limit

    def _keep_until(self, pool: WarmPool, expires_at: datetime) -> PoolKept:
        if pool.expiry is not None:
            pool.expiry.cancel()
            pool.expiry = None
        pool.expires_at = expires_at
        return PoolKept(pool, expires_at)

    def _leave_available(self, pool: WarmPool) -> None:
        if pool.expiry is not None:
            pool.expiry.cancel()
            pool.expiry = None
        if pool.state == WarmPoolStatus.AVAILABLE:
            pools = self._available[pool.key]
            del pools[pool.pool_id]
            if not pools:
                del self._available[pool.key]
            self._idle_instances[pool.instance_type] -= pool.instance_count

    def _end(self, pool: WarmPool, at: datetime) -> PoolEnded:
        self._leave_available(pool)
        pool.state = WarmPoolStatus.TERMINATED
        if pool.kept:
            self._kept_instances[pool.instance_type] -= pool.instance_count
        shutil.rmtree(pool.cache_path, ignore_errors=True)  # if made (by this process or another)
        return PoolEnded(pool, at)
