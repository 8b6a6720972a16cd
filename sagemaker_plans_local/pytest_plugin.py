"""pytest fixtures (registered through the ``pytest11`` entry point).

- ``sagemaker_backend``: a fresh, ephemeral :class:`LocalBackend` on a manual
  clock (starting 2026-01-01 00:00 UTC); its temporary root is removed after the test.
- ``sagemaker_client``: a boto3 SageMaker client answered by it.
- ``sagemaker_session``: a local ``sagemaker_plans_local.Session`` on it, of the
  installed SDK major's session class (v2: ``sagemaker.session.Session``, v3:
  ``sagemaker.core.helper.session_helper.Session``); with
  ``SAGEMAKER_PLANS_LOCAL=0`` a plain AWS session of that class instead.
- ``sagemaker_server``: a running HTTP server (docs/server.md) on a free
  loopback port, ephemeral, on a manual clock at the same start, stopped after the test:
  ``.url`` for clients' ``endpoint_url``, ``.backend(account_id)`` for the
  test's own checks.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

FIXTURE_START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def sagemaker_backend():
    from sagemaker_plans_local.backend import LocalBackend

    with LocalBackend(start_time=FIXTURE_START) as backend:
        yield backend


@pytest.fixture
def sagemaker_client(sagemaker_backend):
    return sagemaker_backend.client("sagemaker")


@pytest.fixture
def sagemaker_session(sagemaker_backend):
    from sagemaker_plans_local.sdk.flag import local_by_default
    from sagemaker_plans_local.sdk.session import session_class

    if not local_by_default():
        return session_class()(local=False)
    return session_class()(backend=sagemaker_backend, local=True)


@pytest.fixture
def sagemaker_server():
    from sagemaker_plans_local.server.runner import LocalServer

    with LocalServer(start_time=FIXTURE_START) as server:
        yield server
