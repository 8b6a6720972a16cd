"""The service models shipped with botocore (the single source of truth), read through one loader.

Every model our services use, and every botocore session a local backend
makes (:func:`botocore_session`), share :func:`shared_loader`, so each of
botocore's JSON files is parsed once per process, however many clients and
SDK sessions follow.
"""

from __future__ import annotations

import functools
import os

import botocore.session
from botocore.loaders import Loader
from botocore.model import OperationModel, ServiceModel


class _SharedLoader(Loader):
    """botocore's loader, giving each caller a service model whose operations are its own.

    The parse is shared, but S3 clients rewrite an operation's ``http`` in place
    (botocore's ``remove_bucket_from_url_paths_from_model``): no caller may see another's rewrite.
    """

    def load_service_model(self, service_name: str, type_name: str, api_version: str | None = None):
        loaded = super().load_service_model(service_name, type_name, api_version)
        return _detached(loaded) if type_name == "service-2" else loaded


def _detached(description: dict) -> dict:
    operations = {
        name: {**operation, "http": dict(operation.get("http", {}))}
        for name, operation in description["operations"].items()
    }
    return {**description, "operations": operations}


@functools.lru_cache(maxsize=None)
def _models() -> botocore.session.Session:
    """The session our service models come from, and the one that makes the shared loader.

    Its search path is botocore's own: ``AWS_DATA_PATH`` / ``data_path`` first, as for any session.
    """
    session = botocore.session.get_session()
    data_path = session.get_config_variable("data_path")
    extra = (
        [os.path.expanduser(os.path.expandvars(path)) for path in data_path.split(os.pathsep)]
        if data_path
        else None
    )
    session.register_component("data_loader", _SharedLoader(extra_search_paths=extra))
    return session


def shared_loader() -> Loader:
    """The process's one botocore data loader (it caches what it has parsed)."""
    return _models().get_component("data_loader")


def botocore_session() -> botocore.session.Session:
    """A new botocore session (environment configuration as usual) on the shared loader."""
    session = botocore.session.get_session()
    session.register_component("data_loader", shared_loader())
    return session


@functools.lru_cache(maxsize=None)
def service_model(service_name: str = "sagemaker") -> ServiceModel:
    """The botocore ServiceModel for ``service_name`` (loaded once per process)."""
    return _models().get_service_model(service_name)


@functools.lru_cache(maxsize=None)
def operation_model(operation_name: str, service_name: str = "sagemaker") -> OperationModel:
    return service_model(service_name).operation_model(operation_name)
