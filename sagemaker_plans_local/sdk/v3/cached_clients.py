"""sagemaker-core's cached clients, answered by the backend while an activation is open.

sagemaker-core keeps boto3 clients for the process: ``SageMakerClient``
(metaclass ``_ClientCacheMeta``, one per session/region/config, the first
also the default of ``SageMakerClient()``), the ``CloudWatchLogsClient``
singleton its log readers use, and the SageMaker and S3 clients
``sagemaker.ai_registry``'s ``AIRHub`` creates when imported. A client created before ``activated()`` was
not made through the activation, so it would send its calls to AWS.

On entering an activation every cached client gets a router at its
``before-call`` event (once per client, for the emulated services:
SageMaker and CloudWatch Logs here). The router hands each call to the
innermost open activation's backend and stays silent when none is open, so
after the block the client reaches AWS again as before. The routes hold the
backend only while its activation is open.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any, Iterator

from sagemaker_plans_local.backend import EMULATED_SERVICES, LocalBackend

_UNIQUE_ID = "sagemaker-plans-local-cached-client"
_lock = threading.Lock()
_routes: list[dict[str, Any]] = []  # per open activation: service name -> the backend's hook


@contextlib.contextmanager
def routed(backend: LocalBackend) -> Iterator[None]:
    """Within the block, sagemaker-core's cached clients are answered by ``backend``."""
    route = backend.hooks()
    with _lock:
        _routes.append(route)
    try:
        for client in cached_clients():
            _attach_router(client)
        yield
    finally:
        with _lock:
            _routes.remove(route)


def cached_clients() -> list:
    """Every boto3 client sagemaker-core holds in its caches now."""
    from sagemaker.core.utils.logs import CloudWatchLogsClient
    from sagemaker.core.utils.utils import SageMakerClient, SingletonMeta, _ClientCacheMeta

    with _ClientCacheMeta._lock:
        holders = list(_ClientCacheMeta._instances.get(SageMakerClient, {}).values())
    clients = [
        getattr(holder, name) for holder in holders for name in vars(holder) if name.endswith("_client")
    ]
    logs = SingletonMeta._instances.get(CloudWatchLogsClient)
    if logs is not None and logs.client is not None:
        clients.append(logs.client)
    air_hub = sys.modules.get("sagemaker.ai_registry.air_hub")
    if air_hub is not None:
        clients += [air_hub.AIRHub._sagemaker_client, air_hub.AIRHub._s3_client]
    return [client for client in clients if hasattr(client, "meta")]


def _attach_router(client) -> None:
    service_model = client.meta.service_model
    if service_model.service_name not in EMULATED_SERVICES:
        return
    event = f"before-call.{service_model.service_id.hyphenize()}"
    router = _Router(service_model.service_name)
    if service_model.service_name == "sagemaker":  # as the backend's own SageMaker hook
        client.meta.events.register_first(event, router, unique_id=_UNIQUE_ID)
    else:
        client.meta.events.register(event, router, unique_id=_UNIQUE_ID)


class _Router:
    """A ``before-call`` handler answering from the innermost open activation's backend, if any."""

    def __init__(self, service_name: str) -> None:
        self.service_name = service_name

    def __call__(self, **kwargs: Any):
        with _lock:
            hook = _routes[-1].get(self.service_name) if _routes else None
        return None if hook is None else hook(**kwargs)
