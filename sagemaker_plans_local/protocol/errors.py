"""AWS-shaped errors raised by the protocol and API layers and answered on the wire."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error a service answers with: ``code``, ``message``, HTTP ``status``.

    ``fields`` are extra members of the error document (S3's ``BucketName``,
    ``Key`` ...); ``sender`` is False for the service's own faults (the query
    protocol's ``<Type>Receiver</Type>``).
    """

    def __init__(
        self,
        code: str,
        message: str,
        status: int = 400,
        fields: dict[str, Any] | None = None,
        sender: bool = True,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.fields = fields or {}
        self.sender = sender

    def __repr__(self) -> str:
        return f"ApiError({self.code!r}, {self.message!r}, {self.status})"


def validation_error(message: str) -> ApiError:
    return ApiError("ValidationException", message)


def constraint_violations(violations: list[str]) -> ApiError:
    """AWS's wording for one or more shape-constraint violations."""
    count = len(violations)
    noun = "error" if count == 1 else "errors"
    return validation_error(f"{count} validation {noun} detected: " + "; ".join(violations))
