"""Route every botocore client created while active to a backend.

``botocore.client.ClientCreator.create_client`` is wrapped for as long as at
least one activation is open; clients created meanwhile get the innermost
active backend's hooks, which fall silent once that activation ends. A
service the backend does not emulate answers NotImplemented unless the
activation lets it through (``passthrough``). ``botocore.session.Session.create_client``
is wrapped too: creating a client of any service but a pass-through one never
looks for credentials (a profile's ``credential_process``, SSO, the instance
metadata endpoint); its session's own are looked up when a request is first
signed, which happens only once the activation has ended and its hooks are silent.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, Collection, Iterator

from botocore.client import ClientCreator
from botocore.credentials import Credentials, ReadOnlyCredentials
from botocore.session import Session

_lock = threading.RLock()
_active: list["Activation"] = []
#: botocore's own create_client functions, captured by the first activation. They are kept after
#: the last activation closes, so a client creation still running in another thread finishes on them.
_original_create_client: Callable = ClientCreator.create_client
_original_session_create_client: Callable = Session.create_client
_PLACEHOLDER_KEYS = {"aws_access_key_id": "sagemaker-plans-local", "aws_secret_access_key": "unused"}


class Activation:
    """One open ``activate()``: how to attach a backend to a new client, and which services go to AWS."""

    def __init__(
        self,
        attach: Callable[[object, Callable[[], bool]], None],
        region: str,
        passthrough: Collection[str] = (),
    ) -> None:
        self._attach = attach
        self.region = region
        self.passthrough = frozenset(passthrough)
        self.open = True

    def is_open(self) -> bool:
        return self.open

    def attach(self, client) -> None:
        if client.meta.service_model.service_name not in self.passthrough:
            self._attach(client, self.is_open)


def _create_client(self, service_name, region_name=None, *args, **kwargs):
    activation = _active[-1] if _active else None
    if activation is not None and region_name is None:
        region_name = activation.region
    client = _original_create_client(self, service_name, region_name, *args, **kwargs)
    if activation is not None:
        activation.attach(client)
    return client


class _LookedUpOnUse(Credentials):
    """The credentials ``session``'s own chain finds, looked up when a request is first signed."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.method = "sagemaker-plans-local-on-use"

    def _found(self) -> Credentials | None:
        return self._session.get_credentials()

    @property  # type: ignore[override]  # read-only here: the session's chain decides
    def access_key(self):
        return getattr(self._found(), "access_key", None)

    @property  # type: ignore[override]
    def secret_key(self):
        return getattr(self._found(), "secret_key", None)

    @property  # type: ignore[override]
    def token(self):
        return getattr(self._found(), "token", None)

    @property  # type: ignore[override]
    def account_id(self):
        return getattr(self._found(), "account_id", None)

    def get_frozen_credentials(self) -> ReadOnlyCredentials | None:  # type: ignore[override]
        found = self._found()
        return None if found is None else found.get_frozen_credentials()


def _session_create_client(self, service_name, *args, **kwargs):
    activation = _active[-1] if _active else None
    explicit = kwargs.get("aws_access_key_id") is not None or len(args) > 5
    if activation is None or service_name in activation.passthrough or explicit:
        return _original_session_create_client(self, service_name, *args, **kwargs)
    client = _original_session_create_client(self, service_name, *args, **{**kwargs, **_PLACEHOLDER_KEYS})
    signer = client._request_signer
    if getattr(signer._credentials, "access_key", None) == _PLACEHOLDER_KEYS["aws_access_key_id"]:
        signer._credentials = _LookedUpOnUse(self)  # unless the backend attached keys of its own (a server's)
    return client


@contextlib.contextmanager
def activated(activation: Activation) -> Iterator[Activation]:
    """Keep ``activation`` open for the duration of the ``with`` block."""
    global _original_create_client, _original_session_create_client
    with _lock:
        if not _active:
            _original_create_client = ClientCreator.create_client
            _original_session_create_client = Session.create_client
            ClientCreator.create_client = _create_client
            Session.create_client = _session_create_client
        _active.append(activation)
    try:
        yield activation
    finally:
        with _lock:
            activation.open = False
            _active.remove(activation)
            if not _active:
                ClientCreator.create_client = _original_create_client
                Session.create_client = _original_session_create_client
