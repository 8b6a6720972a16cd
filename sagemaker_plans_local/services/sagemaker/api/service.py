"""Answer one awsJson1_1 SageMaker request: decode, validate, run, encode."""

from __future__ import annotations

import logging
from typing import Callable

from sagemaker_plans_local.core import errors as domain_errors
from sagemaker_plans_local.emulation import Emulation, Region
from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.json_wire import encode_output, read_request
from sagemaker_plans_local.protocol.service_model import service_model
from sagemaker_plans_local.protocol.validation import validate_request
from sagemaker_plans_local.services.sagemaker.api import clusters, tags, training_jobs, training_plans

log = logging.getLogger(__name__)

Handler = Callable[[Region, dict], dict]

HANDLERS: dict[str, Handler] = tags.tagging(
    {**training_jobs.HANDLERS, **training_plans.HANDLERS, **clusters.HANDLERS}
)

_ERROR_CODES: list[tuple[type, str]] = [
    (domain_errors.InvalidRequest, "ValidationException"),
    (domain_errors.NotFound, "ResourceNotFound"),
    (domain_errors.InUse, "ResourceInUse"),
    (domain_errors.LimitExceeded, "ResourceLimitExceeded"),
    (domain_errors.Conflict, "ConflictException"),
]


def api_error(error: domain_errors.DomainError) -> ApiError:
    for kind, code in _ERROR_CODES:
        if isinstance(error, kind):
            return ApiError(code, error.message)
    raise TypeError(f"unmapped domain error {type(error).__name__}")


def not_implemented(operation_name: str) -> ApiError:
    return ApiError(
        "NotImplemented",
        f"The operation {operation_name} is not implemented by the sagemaker-plans-local "
        "backend; see docs/backend.md for the operations it emulates.",
        status=501,
    )


class SageMakerApi:
    """The SageMaker API in front of the domain."""

    def __init__(self, emulation: Emulation) -> None:
        self._emulation = emulation
        self._model = service_model("sagemaker")

    def handle(self, region_name: str, operation_name: str, body: bytes) -> tuple[int, dict]:
        """Answer a request body; returns (HTTP status, wire JSON document)."""
        try:
            return 200, self._answer(region_name, operation_name, body)
        except ApiError as error:
            return error.status, {"__type": error.code, "message": error.message}
        except Exception:  # a bug of ours must still reach the caller AWS-shaped
            log.exception("internal error answering %s", operation_name)
            return 500, {
                "__type": "InternalFailure",
                "message": f"The backend failed to answer {operation_name}; "
                "this is a bug in sagemaker-plans-local.",
            }

    def _answer(self, region_name: str, operation_name: str, body: bytes) -> dict:
        handler = HANDLERS.get(operation_name)
        if handler is None:
            raise not_implemented(operation_name)
        operation = self._model.operation_model(operation_name)
        params = read_request(operation.input_shape, body)
        validate_request(operation, params)
        emulation = self._emulation
        with emulation.lock:
            emulation.clock.catch_up()
            try:
                result = handler(emulation.region(region_name), params)
            except domain_errors.DomainError as error:
                raise api_error(error) from None
        if operation.output_shape is None:
            return {}
        return encode_output(operation.output_shape, result)
