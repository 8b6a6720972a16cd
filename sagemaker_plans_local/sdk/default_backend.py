"""The process-wide backend that local sessions use unless given one, and what they know from it.

Its state is durable in a per-user directory (:func:`default_root`), so a notebook
restart keeps its jobs, pools and plans; ``sagemaker-plans-local reset`` empties it.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.sdk.remote import Backend, RemoteBackend

#: The environment variable naming a server that sessions and activations given no backend use.
ENDPOINT_VARIABLE = "SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL"
#: The environment variable naming the per-user directory (instead of the platform's).
HOME_VARIABLE = "SAGEMAKER_PLANS_LOCAL_HOME"
#: The per-user directory's name under the platform's data directory.
APP_DIRECTORY = "sagemaker-plans-local"
#: The default backend's root, under the per-user directory.
DEFAULT_BACKEND_DIRECTORY = "default"

_lock = threading.Lock()
_backend: LocalBackend | None = None
_remote: dict[str, RemoteBackend] = {}


def default_root() -> Path:
    """The per-user directory: ``$SAGEMAKER_PLANS_LOCAL_HOME`` when set, else
    ``sagemaker-plans-local`` in the platform's per-user data directory
    (``$XDG_DATA_HOME`` or ``~/.local/share``; ``~/Library/Application Support`` on macOS;
    ``%LOCALAPPDATA%`` on Windows)."""
    configured = os.environ.get(HOME_VARIABLE, "")
    if configured.strip():  # a blank one is unset; any other is a path as given
        return Path(configured).expanduser().absolute()
    return _data_directory() / APP_DIRECTORY


def _data_directory() -> Path:
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "")
        return Path(local) if local.strip() else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    xdg = os.environ.get("XDG_DATA_HOME", "")  # a relative one is ignored, as the XDG spec says
    return Path(xdg) if xdg.strip() and Path(xdg).is_absolute() else Path.home() / ".local" / "share"


def default_backend_root() -> Path:
    """Where the default backend's state lives: ``default`` under :func:`default_root`."""
    return default_root() / DEFAULT_BACKEND_DIRECTORY


def default_backend() -> Backend:
    """The server named by ``SAGEMAKER_PLANS_LOCAL_ENDPOINT_URL`` when it is set (one
    ``RemoteBackend`` per URL); otherwise one LocalBackend per process, on the wall clock,
    on :func:`default_backend_root` (read when first used), created on first use (closed at exit)."""
    global _backend
    url = os.environ.get(ENDPOINT_VARIABLE, "").strip()
    with _lock:
        if url:
            return _remote.setdefault(url, RemoteBackend(url))
        if _backend is None:
            root = default_backend_root()
            root.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # per-user: private
            _backend = LocalBackend(root=root, runner="detached")  # jobs outlive the process
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
