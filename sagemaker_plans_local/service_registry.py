"""The emulated services of one backend, each built on its first request.

A service's modules are imported only when it first answers, so making a
backend and its clients pays for none of them (``make bench``, section 8).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # the protocol layer loads with the first service, not with the backend
    from botocore.model import OperationModel

    from sagemaker_plans_local.emulation import Emulation
    from sagemaker_plans_local.protocol.service import Answer, AwsService


def build_service(name: str, emulation: Emulation) -> AwsService:
    """The service ``name`` (a botocore service name) over ``emulation``'s state."""
    catch_up = emulation.clock.catch_up
    account_id = emulation.account_id
    if name == "sagemaker":
        from sagemaker_plans_local.services.sagemaker.api.service import SageMakerApi

        return SageMakerApi(emulation)
    if name == "s3":
        from sagemaker_plans_local.services.s3.api import S3Api

        return S3Api(emulation.objects, account_id, on_request=catch_up)
    if name == "sts":
        from sagemaker_plans_local.services.iam_sts.sts import StsApi

        return StsApi(account_id)
    if name == "iam":
        from sagemaker_plans_local.services.iam_sts.iam import IamApi

        return IamApi(account_id, emulation.clock)
    if name == "logs":
        from sagemaker_plans_local.services.logs.api import LogsApi

        return LogsApi(emulation.log_store, account_id, on_request=catch_up)
    if name == "resourcegroupstaggingapi":
        from sagemaker_plans_local.services.tagging.api import TaggingApi

        return TaggingApi(emulation)
    raise ValueError(f"no emulated service {name!r}")


class Services:
    """One backend's services by botocore name, each built once, on first use.

    ``wrap`` (a durable backend's) stands between callers and each service.
    """

    def __init__(self, emulation: Emulation) -> None:
        self._emulation = emulation
        self._inner: dict[str, AwsService] = {}
        self._built: dict[str, AwsService] = {}
        self._lock = threading.Lock()
        self.wrap: Callable[[AwsService], AwsService] | None = None

    def get(self, name: str) -> AwsService:
        """The service callers use (wrapped, if ``wrap`` is set)."""
        service = self._built.get(name)
        if service is None:
            with self._lock:
                service = self._built.get(name)
                if service is None:
                    inner = self.inner(name)
                    service = self._built[name] = self.wrap(inner) if self.wrap else inner
        return service

    def inner(self, name: str) -> AwsService:
        """The service itself (what a journal's replay calls)."""
        service = self._inner.get(name)
        if service is None:
            service = self._inner.setdefault(name, build_service(name, self._emulation))
        return service

    def deferred(self, name: str) -> "Deferred":
        """What a hook answers through: the service, built when it first answers."""
        return Deferred(self, name)


class Deferred:
    """The named service of ``services`` for a hook, built when first asked to answer."""

    __slots__ = ("services", "name")

    def __init__(self, services: Services, name: str) -> None:
        self.services = services
        self.name = name

    def handle(self, region: str, operation_model: OperationModel | str, request: dict) -> Answer:
        return self.services.get(self.name).handle(region, operation_model, request)

    def failure(self, operation_name: str) -> Answer:
        """The service's InternalFailure answer (the hook's last resort)."""
        return self.services.get(self.name).failure(operation_name)
