"""A running server: the WSGI app on waitress (``server/http_server.py``), in threads of its own."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Iterable, Mapping

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.server.accounts import Accounts
from sagemaker_plans_local.server.app import ServerApp
from sagemaker_plans_local.server.guard import Guard
from sagemaker_plans_local.server.http_server import IDLE_TIMEOUT, THREADS, HttpServer
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT


class LocalServer:
    """sagemaker-plans-local over HTTP on ``host:port`` (port 0: a free one); ``start()`` / ``stop()``.

    Bound as soon as it is made (``url`` is known); answers once started. With a ``root``
    every account's state is durable there (idle accounts close and open again on use).
    It answers a ``Host`` naming loopback, ``host`` or one of ``allowed_hosts`` (``server/guard.py``);
    ``run_code=False`` simulates every job on the clock, running none of their code.
    ``threads`` workers answer requests; a connection idle for ``idle_timeout`` seconds is closed.
    ``credentials`` (key id -> secret) turn signature checking on, each key reaching its own account;
    ``admin_credentials`` are keys that may also act server-wide on the control API (docs/server.md).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        root: str | Path | None = None,
        start_time: datetime | None = None,
        allow_real_keys: bool = False,
        credentials: Mapping[str, str] | None = None,
        allowed_hosts: Iterable[str] = (),
        run_code: bool = True,
        idle_timeout: int = IDLE_TIMEOUT,
        threads: int = THREADS,
        admin_credentials: Mapping[str, str] | None = None,
    ) -> None:
        root = None if root is None else Path(root).absolute()  # once, here
        self.accounts = Accounts(start_time, root, run_code=run_code)
        self.app = ServerApp(
            self.accounts,
            allow_real_keys,
            credentials,
            host_guard=Guard(host, allowed_hosts),
            admin_credentials=admin_credentials,
        )
        self._http = HttpServer(self.app, host, port, idle_timeout=idle_timeout, threads=threads)
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self._http.port}"
        self.accounts.job_endpoint_url = self.url
        self._started = False
        try:  # the accounts now: a root that cannot be opened fails here, not per request
            self.accounts.reopen()
            self.accounts.backend()
        except BaseException:
            self._http.stop()
            raise

    def backend(self, account_id: str = DEFAULT_ACCOUNT) -> LocalBackend:
        """The backend answering ``account_id`` (for tests: its clock, jobs, settings)."""
        return self.accounts.backend(account_id)

    def start(self) -> "LocalServer":
        """Answer requests from a background thread (once: a started server is left as it is)."""
        if not self._started:
            self._started = True
            self._http.start()
        return self

    def stop(self) -> None:
        """Stop answering, close every connection, the socket and every backend; idempotent."""
        self._http.stop()
        self.accounts.close()

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
