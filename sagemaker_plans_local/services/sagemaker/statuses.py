"""The statuses the emulation reports, as ``str`` enums, and each status set defined once.

Each enum's values are a subset of the SageMaker model's enum shape its docstring names
(``tests/test_enums.py`` checks it). A member equals, hashes, sorts and JSON-encodes as its
value, and ``str``/``format`` give the value, so messages and wire output are unchanged.
"""

from __future__ import annotations

import enum


class _StrEnum(str, enum.Enum):
    """A ``str`` enum whose ``str()`` and f-string form is its value (as ``enum.StrEnum``)."""

    def __str__(self) -> str:
        return str(self.value)


class JobStatus(_StrEnum):
    """TrainingJobStatus."""

    IN_PROGRESS = "InProgress"
    COMPLETED = "Completed"
    FAILED = "Failed"
    STOPPING = "Stopping"
    STOPPED = "Stopped"


class SecondaryStatus(_StrEnum):
    """SecondaryStatus (those the emulation enters)."""

    STARTING = "Starting"
    PENDING = "Pending"
    DOWNLOADING = "Downloading"
    TRAINING = "Training"
    UPLOADING = "Uploading"
    STOPPING = "Stopping"
    STOPPED = "Stopped"
    MAX_RUNTIME_EXCEEDED = "MaxRuntimeExceeded"
    COMPLETED = "Completed"
    FAILED = "Failed"


class WarmPoolStatus(_StrEnum):
    """WarmPoolResourceStatus."""

    AVAILABLE = "Available"
    TERMINATED = "Terminated"
    REUSED = "Reused"
    IN_USE = "InUse"


class PlanStatus(_StrEnum):
    """TrainingPlanStatus and ReservedCapacityStatus (the model gives both the same values)."""

    PENDING = "Pending"
    SCHEDULED = "Scheduled"
    ACTIVE = "Active"
    EXPIRED = "Expired"
    FAILED = "Failed"


class ClusterStatus(_StrEnum):
    """ClusterStatus (those the emulation enters)."""

    CREATING = "Creating"
    IN_SERVICE = "InService"
    UPDATING = "Updating"
    DELETING = "Deleting"


class InstanceGroupStatus(_StrEnum):
    """InstanceGroupStatus (those the emulation enters)."""

    CREATING = "Creating"
    IN_SERVICE = "InService"
    UPDATING = "Updating"
    DELETING = "Deleting"


class NodeStatus(_StrEnum):
    """ClusterInstanceStatus (those the emulation enters)."""

    PENDING = "Pending"
    RUNNING = "Running"


#: Job statuses after which nothing more happens to the job.
FINISHED_JOB_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.STOPPED})
#: Plan statuses a new job or instance group may name.
USABLE_PLAN_STATUSES = frozenset({PlanStatus.SCHEDULED, PlanStatus.ACTIVE})
