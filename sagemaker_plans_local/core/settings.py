"""Backend settings that tests and scripts may change at any time."""

from __future__ import annotations

from typing import Mapping, Union

import attrs

Quota = Union[None, int, Mapping[str, int]]

#: Training instances of one type that jobs may hold at once, unless ``instance_quota`` says
#: otherwise: AWS's "ml.<type> for training job usage" quota (docs/requests.md).
DEFAULT_INSTANCE_QUOTA = 1000


def quota_for(quota: Quota, instance_type: str) -> int | None:
    """The limit ``quota`` sets for ``instance_type``; None means unlimited."""
    if quota is None:
        return None
    if isinstance(quota, Mapping):
        return quota.get(instance_type)
    return int(quota)


@attrs.define
class Settings:
    """Knobs of the emulation (documented in docs/backend.md)."""

    max_keep_alive_seconds: int = 3600
    warm_pool_quota: Quota = None
    instance_quota: Quota = DEFAULT_INSTANCE_QUOTA
    job_runtime_seconds: int = 600
    cold_start_seconds: int = 180
    warm_start_seconds: int = 10
    plan_payment_seconds: int = 60
    #: On a wall clock, the simulated service phases above (and a stop's 30 s) take this
    #: fraction of their length in real time; durations a request gives are never scaled.
    wall_clock_phase_scale: float = 0.001
    #: On a wall clock, waits (a job's end, a plan's payment) move the clock ahead to the
    #: next change instead of sleeping until it; a manual clock always moves.
    fast_forward_waits: bool = False

    def service_seconds(self, seconds: float, manual_clock: bool) -> float:
        """How long a simulated service phase of ``seconds`` lasts on this backend's clock."""
        return seconds if manual_clock else seconds * self.wall_clock_phase_scale
