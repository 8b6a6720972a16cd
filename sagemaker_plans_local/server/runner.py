"""A running server: the WSGI app on a threaded werkzeug server, in a thread of its own."""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import Iterable, Mapping

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.server.accounts import Accounts
from sagemaker_plans_local.server.app import ServerApp
from sagemaker_plans_local.server.guard import Guard
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT


class _QuietHandler(WSGIRequestHandler):
    """HTTP/1.1 (keep-alive), no access log line per request (errors are still logged)."""

    protocol_version = "HTTP/1.1"

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        return None


class LocalServer:
    """sagemaker-plans-local over HTTP on ``host:port`` (port 0: a free one); ``start()`` / ``stop()``.

    Bound as soon as it is made (``url`` is known); answers once started. With a ``root``
    every account's state is durable there, and a server made on it again opens them all.
    It answers a ``Host`` naming loopback, ``host`` or one of ``allowed_hosts`` (``server/guard.py``);
    ``run_code=False`` simulates every job on the clock, running none of their code.
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
    ) -> None:
        self.accounts = Accounts(start_time, None if root is None else Path(root), run_code=run_code)
        self.app = ServerApp(
            self.accounts, allow_real_keys, credentials, host_guard=Guard(host, allowed_hosts)
        )
        try:
            self._http: BaseWSGIServer = make_server(
                host, port, self.app, threaded=True, request_handler=_QuietHandler
            )
        except SystemExit:  # werkzeug's answer to an address in use (it has said why on stderr)
            raise OSError(f"cannot listen on {host}:{port}: the address is in use") from None
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self._http.server_port}"
        self.accounts.job_endpoint_url = self.url
        self._thread: threading.Thread | None = None
        try:  # the accounts now: a root that cannot be opened fails here, not per request
            self.accounts.reopen()
            self.accounts.backend()
        except BaseException:
            self._http.server_close()
            raise

    def backend(self, account_id: str = DEFAULT_ACCOUNT) -> LocalBackend:
        """The backend answering ``account_id`` (for tests: its clock, jobs, settings)."""
        return self.accounts.backend(account_id)

    def start(self) -> "LocalServer":
        """Answer requests from a background thread (once: a started server is left as it is)."""
        if self._thread is not None:
            return self
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="sagemaker-plans-local-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering, close the socket and every backend; idempotent."""
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        self._http.server_close()
        self.accounts.close()

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
