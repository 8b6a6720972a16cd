"""Domain errors; the API layer maps each kind to an AWS error code."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every rule violation; ``message`` is AWS's (or our documented) wording."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidRequest(DomainError):
    """The request breaks a service rule (AWS: ValidationException)."""


class JobNotFound(InvalidRequest):
    """SageMaker answers a missing training job with a ValidationException."""

    def __init__(self) -> None:
        super().__init__("Requested resource not found.")


class NotFound(DomainError):
    """A missing resource AWS reports as ResourceNotFound."""


class InUse(DomainError):
    """The name is taken or the resource is busy (AWS: ResourceInUse)."""


class LimitExceeded(DomainError):
    """An account quota would be exceeded (AWS: ResourceLimitExceeded)."""


class Conflict(DomainError):
    """The resource's state forbids the operation now (AWS: ConflictException)."""
