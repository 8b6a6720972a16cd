"""The process-wide backend that local sessions use unless given one, and what they know from it."""

from __future__ import annotations

import os
import threading

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.sdk.remote import Backend, RemoteBackend

#: The environment variable naming a server that sessions and activations given no backend use.
ENDPOINT_VARIABLE = "SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL"

_lock = threading.Lock()
_backend: LocalBackend | None = None
_remote: dict[str, RemoteBackend] = {}


def default_backend() -> Backend:
    """The server named by ``SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL`` when it is set (one
    ``RemoteBackend`` per URL); otherwise one LocalBackend per process, on the wall clock,
    created on first use (closed at exit)."""
    global _backend
    url = os.environ.get(ENDPOINT_VARIABLE, "").strip()
    with _lock:
        if url:
            return _remote.setdefault(url, RemoteBackend(url))
        if _backend is None:
            _backend = LocalBackend()
        return _backend


class KnownDefaults:
    """Mixed into our ``Session`` classes (both majors): the caller's account and default bucket
    known from the backend, for a session on the backend's own boto3 session.

    ``account_id()`` is the backend's account (what STS answers it), and ``default_bucket()``
    the SDK's own ``sagemaker-<region>-<account>``, created in the backend's object store on
    first use if missing: what the SDK finds over STS and S3, without the calls. A bucket
    named by the caller or the SDK's config, or a session on another boto3 session, goes the
    SDK's way.
    """

    backend: Backend | None
    boto_session: object
    _default_bucket: str | None
    _default_bucket_name_override: str | None
    _default_bucket_set_by_sdk: bool

    def knows_defaults(self, own_boto_session: bool) -> None:
        """Call before the SDK's ``__init__``: ``own_boto_session`` if the backend made the boto3 session."""
        self._known = self.backend if own_boto_session else None

    def account_id(self) -> str:
        known = getattr(self, "_known", None)
        return known.account_id if known is not None else super().account_id()  # type: ignore[misc]

    def default_bucket(self) -> str:
        known = getattr(self, "_known", None)
        if known is not None and not self._default_bucket and not self._default_bucket_name_override:
            self._default_bucket = known.sdk_default_bucket(self.boto_session.region_name)  # type: ignore[attr-defined]
            self._default_bucket_set_by_sdk = True
        return super().default_bucket()  # type: ignore[misc]
