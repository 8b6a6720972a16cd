"""SageMaker on the base service: awsJson1_1, its handlers, its domain errors, the emulation's guard."""

from __future__ import annotations

from typing import Any, Callable

from sagemaker_plans_local.core import errors as domain_errors
from sagemaker_plans_local.emulation import Emulation
from sagemaker_plans_local.protocol.service import Handler, JsonService
from sagemaker_plans_local.services.sagemaker.api import clusters, tags, training_jobs, training_plans
from sagemaker_plans_local.services.sagemaker.region import Region

#: A SageMaker operation's handler: ``handler(region, params) -> result``, on the region's state.
RegionHandler = Callable[[Region, dict], dict]

HANDLERS: dict[str, RegionHandler] = tags.tagging(
    {**training_jobs.HANDLERS, **training_plans.HANDLERS, **clusters.HANDLERS}
)


class SageMakerApi(JsonService):
    """The SageMaker API in front of the domain: each request runs under the emulation's lock,
    after the clock has applied the state changes that are due."""

    service_name = "sagemaker"
    NAMED_IN_ERRORS = False
    ERRORS = (
        (domain_errors.InvalidRequest, "ValidationException", 400),
        (domain_errors.NotFound, "ResourceNotFound", 400),
        (domain_errors.InUse, "ResourceInUse", 400),
        (domain_errors.LimitExceeded, "ResourceLimitExceeded", 400),
        (domain_errors.Conflict, "ConflictException", 400),
    )

    def __init__(self, emulation: Emulation) -> None:
        self._emulation = emulation
        super().__init__()

    def handlers(self) -> dict[str, Handler]:
        """:data:`HANDLERS`, each given the named region's state."""
        return {name: _on_region(handler, self._emulation.region) for name, handler in HANDLERS.items()}

    def _call(self, handler: Handler, region: str, params: dict) -> Any:
        emulation = self._emulation
        with emulation.lock:
            emulation.clock.catch_up()
            return super()._call(handler, region, params)


def _on_region(handler: RegionHandler, region_of: Callable[[str], Region]) -> Handler:
    def run(region: str, params: dict) -> dict:
        return handler(region_of(region), params)

    return run
