"""AWS-shaped errors raised by the API layer and answered on the wire."""

from __future__ import annotations


class ApiError(Exception):
    """An error SageMaker would answer with: HTTP status, ``__type`` code, message."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def __repr__(self) -> str:
        return f"ApiError({self.code!r}, {self.message!r})"


def validation_error(message: str) -> ApiError:
    return ApiError("ValidationException", message)


def constraint_violations(violations: list[str]) -> ApiError:
    """AWS's wording for one or more shape-constraint violations."""
    count = len(violations)
    noun = "error" if count == 1 else "errors"
    return validation_error(f"{count} validation {noun} detected: " + "; ".join(violations))
