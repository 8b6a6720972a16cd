"""Inside a local training process: boto3 calls of the script answered locally, never by AWS.

The job's ``PYTHONPATH`` holds ``job_bootstrap/``, whose ``sitecustomize``
calls :func:`install` when ``SAGEMAKER_PLANS_LOCAL_OBJECTS`` is set. Nothing
heavy is imported then: when (and only if) the script imports botocore, its
clients get S3 (the backend's object store on disk, shared with the backend),
STS and IAM answered in-process; every other service answers
``NotImplemented``. SageMaker's state lives in the parent process: when the
parent is an HTTP server (``SAGEMAKER_PLANS_LOCAL_ENDPOINT`` set), SageMaker
clients are left alone and reach it through ``AWS_ENDPOINT_URL_SAGEMAKER``,
signed with the account id as access key; otherwise they answer
``NotImplemented`` too.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sagemaker_plans_local.transport.service_hook import ServiceHook

OBJECTS = "SAGEMAKER_PLANS_LOCAL_OBJECTS"
ACCOUNT = "SAGEMAKER_PLANS_LOCAL_ACCOUNT"
ENDPOINT = "SAGEMAKER_PLANS_LOCAL_ENDPOINT"
BOOTSTRAP_DIR = os.path.join(os.path.dirname(__file__), "job_bootstrap")


def job_environment(objects_root: str, account_id: str, endpoint_url: str | None = None) -> dict[str, str]:
    """What the executor adds to a job's environment (``PYTHONPATH`` is prepended separately).

    ``endpoint_url``: the server answering the backend, which the job's SageMaker calls reach
    (fake credentials naming the account, never the caller's own keys).
    """
    environment = {OBJECTS: objects_root, ACCOUNT: account_id}
    if endpoint_url is not None:
        environment.update(
            {
                ENDPOINT: endpoint_url,
                "AWS_ENDPOINT_URL_SAGEMAKER": endpoint_url,
                "AWS_ACCESS_KEY_ID": account_id,
                "AWS_SECRET_ACCESS_KEY": "sagemaker-plans-local",
            }
        )
    return environment


def install() -> None:
    """Arrange for botocore clients to be answered locally once botocore is imported."""
    if "botocore.client" in sys.modules:
        _patch(sys.modules["botocore.client"])
    else:
        sys.meta_path.insert(0, _AfterImport("botocore.client", _patch))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Run ``then(module)`` right after ``name`` is first imported."""

    def __init__(self, name, then) -> None:
        self._name, self._then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self._name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader, then = spec.loader, self._then

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                then(module)

        spec.loader = _Loader()
        return spec


def _patch(client_module) -> None:
    from botocore.client import ClientCreator

    original = ClientCreator.create_client
    hooks: dict[str, "ServiceHook"] = {}

    def create_client(self, service_name, region_name=None, *args, **kwargs):
        client = original(self, service_name, region_name or os.environ.get("AWS_REGION"), *args, **kwargs)
        _answer_locally(client, hooks)
        return client

    ClientCreator.create_client = create_client


def _answer_locally(client, hooks: dict[str, "ServiceHook"]) -> None:
    from sagemaker_plans_local.transport.refusal import refuse_other_services

    name = client.meta.service_model.service_name
    if name == "sagemaker" and os.environ.get(ENDPOINT):
        return  # the server that runs this job answers it
    if not hooks:
        hooks.update(_services())
    hook = hooks.get(name)
    if hook is not None:
        hook.attach(client)
    else:
        client.meta.events.register_first(
            "before-call", refuse_other_services, unique_id="sagemaker-plans-local-refuse"
        )


def _services() -> dict[str, "ServiceHook"]:
    from sagemaker_plans_local.core.clock import VirtualClock
    from sagemaker_plans_local.services.iam_sts.iam import IamApi
    from sagemaker_plans_local.services.iam_sts.sts import StsApi
    from sagemaker_plans_local.services.s3.api import S3Api
    from sagemaker_plans_local.services.s3.objects import ObjectStore
    from sagemaker_plans_local.transport.service_hook import ServiceHook

    clock = VirtualClock(None)
    account = os.environ.get(ACCOUNT, "123456789012")
    objects = ObjectStore(os.environ[OBJECTS], clock)
    return {
        "s3": ServiceHook("s3", S3Api(objects, account)),
        "sts": ServiceHook("sts", StsApi(account)),
        "iam": ServiceHook("iam", IamApi(account, clock)),
    }
