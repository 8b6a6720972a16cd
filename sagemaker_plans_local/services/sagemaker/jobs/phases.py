"""How long each phase of a simulated training job takes (documented in docs/behaviours.md)."""

from __future__ import annotations

import enum
import functools
from datetime import datetime, timedelta

import attrs

OUTCOMES = ("Completed", "AlgorithmError", "ClientError", "InternalServerError")

#: Seconds between StopTrainingJob (or MaxRuntimeInSeconds) and ``Stopped``.
STOPPING_SECONDS = 30

DEFAULT_FAILURE_REASONS = {
    "AlgorithmError": "AlgorithmError: The training script exited with a non-zero status.",
    "ClientError": "ClientError: Please check the input data and the job configuration.",
    "InternalServerError": "InternalServerError: We encountered an internal error. Please try again.",
}


@attrs.frozen
class JobScript:
    """How a named job ends: ``outcome`` is Completed or a failure kind."""

    outcome: str = attrs.field(default="Completed", validator=attrs.validators.in_(OUTCOMES))
    runtime_seconds: int | None = None
    failure_reason: str | None = None

    @property
    def fails(self) -> bool:
        return self.outcome != "Completed"

    def failure_message(self) -> str:
        if self.failure_reason is None:
            return DEFAULT_FAILURE_REASONS[self.outcome]
        prefix = f"{self.outcome}: "
        if self.failure_reason.startswith(prefix):
            return self.failure_reason
        return prefix + self.failure_reason


@attrs.frozen
class Provisioning:
    """Offsets (from creation) of the Starting phase's milestones."""

    launching: timedelta
    preparing: timedelta
    training_start: timedelta

    @classmethod
    @functools.lru_cache(maxsize=64)  # immutable, and the settings give the same few lengths
    def cold(cls, seconds: float) -> "Provisioning":
        return cls(
            launching=timedelta(seconds=seconds / 6),
            preparing=timedelta(seconds=seconds * 2 / 3),
            training_start=timedelta(seconds=seconds),
        )

    @classmethod
    @functools.lru_cache(maxsize=64)
    def warm(cls, seconds: float) -> "Provisioning":
        # A reused pool has its instances: no launch, only a quick preparation.
        return cls(
            launching=timedelta(0),
            preparing=timedelta(seconds=seconds / 2),
            training_start=timedelta(seconds=seconds),
        )


@attrs.frozen
class TrainingPhases:
    """Offsets from TrainingStartTime: Downloading, Training, Uploading, end."""

    training: timedelta
    uploading: timedelta
    end: timedelta

    @classmethod
    def for_runtime(cls, runtime_seconds: float) -> "TrainingPhases":
        edge = timedelta(seconds=runtime_seconds / 20)
        end = timedelta(seconds=runtime_seconds)
        return cls(training=edge, uploading=end - edge, end=end)


def seconds_between(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds()))


class Step(str, enum.Enum):
    """A scheduled change of a training job that trains on the simulated timeline."""

    TRAINING = "training"  # Downloading -> Training
    UPLOADING = "uploading"
    COMPLETED = "completed"
    FAILED = "failed"  # the job's script fails it
    MAX_RUNTIME = "max-runtime"  # MaxRuntimeInSeconds reached: stopping


@attrs.frozen
class Timeline:
    """What decides a simulated training segment: its runtime, earlier progress, limits, outcome."""

    runtime_seconds: float  # the job's whole training time
    trained_seconds: float  # already trained in earlier segments
    max_runtime_seconds: int | None
    fails: bool
    downloading: bool  # the segment starts in Downloading (not yet Training)
    uploads: bool  # the segment reaches Uploading (it is Downloading or Training now)


def training_steps(timeline: Timeline, start: datetime, now: datetime) -> list[tuple[datetime, Step]]:
    """The steps of a segment that started training at ``start``, in the order they are scheduled."""
    remaining = max(0.0, timeline.runtime_seconds - timeline.trained_seconds)
    phases = TrainingPhases.for_runtime(remaining)
    steps = []
    if timeline.downloading:
        steps.append((max(now, start + phases.training), Step.TRAINING))
    max_runtime = timeline.max_runtime_seconds
    if max_runtime is not None and timeline.runtime_seconds > max_runtime:
        cutoff = max(now, start + timedelta(seconds=max_runtime - timeline.trained_seconds))
        return [*steps, (cutoff, Step.MAX_RUNTIME)]
    end = max(now, start + phases.end)
    if timeline.fails:
        return [*steps, (end, Step.FAILED)]
    if timeline.uploads:
        steps.append((max(now, start + phases.uploading), Step.UPLOADING))
    return [*steps, (end, Step.COMPLETED)]
