"""Backend settings that tests and scripts may change at any time."""

from __future__ import annotations

import reprlib
import weakref
from typing import Any, Callable, Mapping, NoReturn, Union

import attrs

Quota = Union[None, int, Mapping[str, int]]

#: Training instances of one type that jobs may hold at once, unless ``instance_quota`` says
#: otherwise: AWS's "ml.<type> for training job usage" quota (docs/requests.md).
DEFAULT_INSTANCE_QUOTA = 1000
#: Local processes one job with code may run, one per instance (docs/local-runtime.md, "Instances").
DEFAULT_MAX_INSTANCE_PROCESSES = 8

# The ranges of the settings (docs/backend.md, "Settings"), by what each means. The core reads no
# botocore model: tests/server/test_settings_ranges.py checks these against SageMaker's.
#: The longest simulated duration (a job's run, its provisioning, a plan's payment): 28 days, the
#: most StoppingCondition.MaxRuntimeInSeconds allows and MaxPendingTimeInSeconds' maximum.
MAX_DURATION_SECONDS = 28 * 86400
#: ResourceConfig.KeepAlivePeriodInSeconds' maximum.
MAX_KEEP_ALIVE_SECONDS = 21600
#: The largest instance quota of one type (*chosen*), and how many types one quota may name.
MAX_QUOTA = 1_000_000
MAX_QUOTA_TYPES = 1000
#: The most local processes one job may run (*chosen*).
MAX_INSTANCE_PROCESSES = 1024
#: The longest a detached runner waits idle, in real seconds (*chosen*: a day).
MAX_RUNNER_IDLE_SECONDS = 86400.0


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


#: A setting's validator, as attrs calls it.
Validator = Callable[["Settings", "attrs.Attribute[Any]", Any], None]


def _refuse(attribute: "attrs.Attribute[Any]", takes: str, value: Any) -> NoReturn:
    raise ValueError(f"setting {attribute.name!r} takes {takes}, not {reprlib.repr(value)}")


def _is_whole(value: Any, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= high


def _whole(high: int) -> Validator:
    """A whole number from 0 to ``high``."""

    def check(_settings: "Settings", attribute: "attrs.Attribute[Any]", value: Any) -> None:
        if not _is_whole(value, high):
            _refuse(attribute, f"a whole number from 0 to {high}", value)

    return check


def _real(high: float) -> Validator:
    """A number from 0 to ``high`` (finite)."""

    def check(_settings: "Settings", attribute: "attrs.Attribute[Any]", value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
            _refuse(attribute, f"a number from 0 to {high:g}", value)

    return check


def _quota(_settings: "Settings", attribute: "attrs.Attribute[Any]", value: Any) -> None:
    """None, a count for every type, or at most :data:`MAX_QUOTA_TYPES` types to counts."""
    if value is None or _is_whole(value, MAX_QUOTA):
        return
    if isinstance(value, Mapping) and len(value) <= MAX_QUOTA_TYPES:
        if all(isinstance(kind, str) and _is_whole(count, MAX_QUOTA) for kind, count in value.items()):
            return
    _refuse(
        attribute,
        f"null, a whole number from 0 to {MAX_QUOTA}, or at most {MAX_QUOTA_TYPES} instance types "
        "each to such a number",
        value,
    )


def _flag(_settings: "Settings", attribute: "attrs.Attribute[Any]", value: Any) -> None:
    if not isinstance(value, bool):
        _refuse(attribute, "true or false", value)


def _duration(default: int) -> Any:
    """Simulated seconds (fractions allowed: a local run's), from 0 to :data:`MAX_DURATION_SECONDS`."""
    return attrs.field(default=default, validator=_real(MAX_DURATION_SECONDS))


@attrs.define(on_setattr=attrs.setters.pipe(attrs.setters.validate, _notify))
class Settings:
    """Knobs of the emulation (documented in docs/backend.md), each range-checked: a value out of
    its range is a ValueError and changes nothing."""

    max_keep_alive_seconds: int = attrs.field(default=3600, validator=_whole(MAX_KEEP_ALIVE_SECONDS))
    warm_pool_quota: Quota = attrs.field(default=None, validator=_quota)
    instance_quota: Quota = attrs.field(default=DEFAULT_INSTANCE_QUOTA, validator=_quota)
    job_runtime_seconds: float = _duration(600)
    cold_start_seconds: float = _duration(180)
    warm_start_seconds: float = _duration(10)
    plan_payment_seconds: float = _duration(60)
    #: On a wall clock, the simulated service phases above (and a stop's 30 s) take this
    #: fraction of their length in real time; durations a request gives are never scaled.
    wall_clock_phase_scale: float = attrs.field(default=0.001, validator=_real(1.0))
    #: On a wall clock, waits (a job's end, a plan's payment) move the clock ahead to the
    #: next change instead of sleeping until it; a manual clock always moves.
    fast_forward_waits: bool = attrs.field(default=False, validator=_flag)
    #: A job whose code runs here (script mode, ``ContainerEntrypoint``) may have at most this
    #: many instances, each one local process; a larger one fails when its code is to start.
    max_instance_processes: int = attrs.field(
        default=DEFAULT_MAX_INSTANCE_PROCESSES, validator=_whole(MAX_INSTANCE_PROCESSES)
    )
    #: A root's detached runner, with nothing to run, exits after this many real seconds in
    #: which nothing was journaled (at once when no other process has the root open).
    runner_idle_seconds: float = attrs.field(default=300.0, validator=_real(MAX_RUNNER_IDLE_SECONDS))

    def service_seconds(self, seconds: float, manual_clock: bool) -> float:
        """How long a simulated service phase of ``seconds`` lasts on this backend's clock."""
        return seconds if manual_clock else seconds * self.wall_clock_phase_scale
