"""Backend settings that tests and scripts may change at any time."""

from __future__ import annotations

import weakref
from typing import Any, Callable, Mapping, Union

import attrs

Quota = Union[None, int, Mapping[str, int]]

#: Training instances of one type that jobs may hold at once, unless ``instance_quota`` says
#: otherwise: AWS's "ml.<type> for training job usage" quota (docs/requests.md).
DEFAULT_INSTANCE_QUOTA = 1000
#: Local processes one job with code may run, one per instance (docs/local-runtime.md, "Instances").
DEFAULT_MAX_INSTANCE_PROCESSES = 8


def quota_for(quota: Quota, instance_type: str) -> int | None:
    """The limit ``quota`` sets for ``instance_type``; None means unlimited."""
    if quota is None:
        return None
    if isinstance(quota, Mapping):
        return quota.get(instance_type)
    return int(quota)


#: A settings watcher: ``watcher(name, value)`` before the setting changes (a durable backend journals it).
Watcher = Callable[[str, Any], None]
_watchers: dict[int, tuple["weakref.ref[Settings]", Watcher]] = {}  # by id: Settings are unhashable


def watch(settings: "Settings", watcher: Watcher | None) -> None:
    """Call ``watcher(name, value)`` before each change of ``settings`` (None: stop)."""
    key = id(settings)
    if watcher is None:
        _watchers.pop(key, None)
    else:
        _watchers[key] = (weakref.ref(settings, lambda _: _watchers.pop(key, None)), watcher)


def _notify(settings: "Settings", attribute: "attrs.Attribute[Any]", value: Any) -> Any:
    entry = _watchers.get(id(settings))
    if entry is not None and entry[0]() is settings:
        entry[1](attribute.name, value)
    return value


def _count(_settings: "Settings", attribute: "attrs.Attribute[Any]", value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"setting {attribute.name!r} takes a count (an int >= 0), not {value!r}")


@attrs.define(on_setattr=attrs.setters.pipe(attrs.setters.validate, _notify))
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
    #: A job whose code runs here (script mode, ``ContainerEntrypoint``) may have at most this
    #: many instances, each one local process; a larger one fails when its code is to start.
    max_instance_processes: int = attrs.field(default=DEFAULT_MAX_INSTANCE_PROCESSES, validator=_count)
    #: A root's detached runner, with nothing to run, exits after this many real seconds in
    #: which nothing was journaled (at once when no other process has the root open).
    runner_idle_seconds: float = 300.0

    def service_seconds(self, seconds: float, manual_clock: bool) -> float:
        """How long a simulated service phase of ``seconds`` lasts on this backend's clock."""
        return seconds if manual_clock else seconds * self.wall_clock_phase_scale
