"""How long each phase of a simulated training job takes (documented in docs/behaviours.md)."""

from __future__ import annotations

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
    def cold(cls, seconds: float) -> "Provisioning":
        return cls(
            launching=timedelta(seconds=seconds / 6),
            preparing=timedelta(seconds=seconds * 2 / 3),
            training_start=timedelta(seconds=seconds),
        )

    @classmethod
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
