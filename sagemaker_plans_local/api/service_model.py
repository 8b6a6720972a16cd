"""The SageMaker service model shipped with botocore: the single source of truth."""

from __future__ import annotations

import functools

import botocore.session
from botocore.model import OperationModel, ServiceModel


@functools.lru_cache(maxsize=None)
def service_model(service_name: str = "sagemaker") -> ServiceModel:
    """The botocore ServiceModel for ``service_name`` (loaded once per process)."""
    return botocore.session.get_session().get_service_model(service_name)


@functools.lru_cache(maxsize=None)
def operation_model(operation_name: str, service_name: str = "sagemaker") -> OperationModel:
    return service_model(service_name).operation_model(operation_name)
