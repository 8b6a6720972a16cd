"""``LocalBackend.call``: one operation answered without a boto3 client's per-call machinery.

The request takes the path a boto3 client gives it, minus what only matters on the way to AWS: an
idempotency token the caller left out is filled in as botocore does, the parameters are validated by
botocore's own validator (a bad one raises the same ``ParamValidationError``) and botocore's serializer
for the service's protocol makes the request, unless the parameters are plain: then a copy of them,
made by a walk that refuses whatever botocore's validator could object to, is the request's, as the
service would read them back (``direct_request.py``; not for a durable backend, whose journal keeps the
serialized body). The same :class:`~.service_hook.ServiceHook` a client is answered by answers it
(the service's validation, handler and parsed answer). An error raises the ``ClientError`` subclass a
client raises, with the same response. Skipped: the client's events (no handler a caller registered on a client runs),
endpoint resolution, the user agent, signing, HTTP and retries. Only the JSON-protocol services
(``sagemaker``, ``logs``) are answered: the others' clients customize their requests.
"""

from __future__ import annotations

import functools
from typing import Any

import boto3
from botocore.handlers import generate_idempotent_uuid
from botocore.serialize import create_serializer
from botocore.validate import validate_parameters

from sagemaker_plans_local.protocol.service import DECODED_PARAMS
from sagemaker_plans_local.transport.direct_request import NotPlain, copier_for
from sagemaker_plans_local.transport.service_hook import Service, ServiceHook

#: The services ``call`` answers (botocore names): their protocol is JSON and their clients add nothing.
DIRECT_SERVICES = ("sagemaker", "logs")


class DirectCalls:
    """Answers ``call(operation, params)`` for one service of one backend (``service``: what its hooks answer;
    ``decoded``: whether it may be handed plain parameters without their serialized body)."""

    def __init__(
        self,
        service_name: str,
        service: Service,
        region: str,
        session: boto3.session.Session,
        decoded: bool = True,
    ):
        if service_name not in DIRECT_SERVICES:
            raise ValueError(
                f"call answers {', '.join(DIRECT_SERVICES)}, not {service_name!r}: use client({service_name!r})"
            )
        self.region = region
        self._hook = ServiceHook(service_name, service, fast=service_name == "sagemaker")
        self._exceptions, self._model = _client_parts(session, service_name)
        self._serializer = create_serializer(self._model.resolved_protocol, include_validation=False)
        self._decoded = decoded
        self._uid = self._model.metadata.get("uid", service_name)

    def __call__(self, operation_name: str, params: dict[str, Any]) -> dict[str, Any]:
        """The parsed answer to ``operation_name`` (botocore's name, e.g. ``DescribeTrainingJob``)."""
        model = self._model.operation_model(operation_name)
        params = dict(params)
        generate_idempotent_uuid(params, model)
        http, parsed = self._hook(model, self._request(model, params), {"client_region": self.region})
        if http.status_code >= 300:
            error_class = self._exceptions.from_code(parsed.get("Error", {}).get("Code"))
            raise error_class(parsed, operation_name)
        return parsed

    def _request(self, model: Any, params: dict[str, Any]) -> dict[str, Any]:
        """The request the service reads: a plain copy of ``params`` where it may (they are then valid for
        botocore), else the serialized one of ``params`` botocore's validator accepts."""
        shape = model.input_shape
        if shape is None:
            return self._serializer.serialize_to_request(params, model)
        copy = copier_for(shape, self._uid) if self._decoded else None
        if copy is not None:
            try:
                return {DECODED_PARAMS: copy(params)}
            except NotPlain:
                pass
        validate_parameters(params, shape)
        return self._serializer.serialize_to_request(params, model)


@functools.lru_cache(maxsize=None)
def _client_parts(session: boto3.session.Session, service_name: str) -> tuple[Any, Any]:
    """A client's exception classes (the very classes its clients raise) and service model."""
    client = session.client(service_name, region_name="us-east-1")
    return client.exceptions, client.meta.service_model
