"""The HTTP machinery under the server: waitress's worker pool behind one async connection loop.

One thread (the loop) holds every connection and reads requests; a complete request goes to one
of ``threads`` worker threads, so an idle or half-sent connection costs a descriptor, never a
thread (a quick client's next request may be read by the worker that answered it), and no worker
waits for a client to read (``http_channel``). A connection that sends nothing, or takes no byte of
its answer, for ``idle_timeout`` seconds is closed, answers are HTTP/1.1 keep-alive (framed by
``Content-Length`` or chunked), and ``stop()`` leaves no thread.
"""

from __future__ import annotations

import logging
import resource
import socket
import threading
from typing import Any, Callable, Iterable
from urllib.parse import unquote_to_bytes

from waitress import create_server, wasyncore
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer

from sagemaker_plans_local.server import app as wsgi_app
from sagemaker_plans_local.server.http_channel import Channel, Workers, loop_wake_needed

#: Seconds a connection may send nothing (or only part of a request) before it is closed.
IDLE_TIMEOUT = 60
#: Worker threads answering requests (connections beyond them wait in the loop, threadless).
THREADS = 16
#: Open connections at most (fewer when the descriptor limit is low); more wait in the backlog.
CONNECTION_LIMIT = 4096
#: Connections the kernel queues while the server is at its connection limit.
BACKLOG = 1024
#: Seconds ``stop()`` waits for a worker still answering a request.
STOP_WAIT = 10
WSGIApp = Callable[[dict, Any], Iterable[bytes]]

# waitress warns "Task queue depth is N" whenever a request waits for a free worker: under load
# that is a line per request, and waiting is what a bounded pool is for. Its other warnings stay.
logging.getLogger("waitress.queue").setLevel(logging.ERROR)


def _raw_paths(app: WSGIApp) -> WSGIApp:
    """``app`` with ``PATH_INFO`` decoded from the path as sent (waitress folds leading slashes)."""

    def serve(environ: dict, start_response: Any) -> Iterable[bytes]:
        path = environ.get("REQUEST_URI", "").split("?", 1)[0].split("#", 1)[0]
        if path.startswith("/"):
            environ["PATH_INFO"] = unquote_to_bytes(path).decode("latin-1")
        return app(environ, start_response)

    return serve


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (IPv6 for an address with a colon)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=BACKLOG)
    except OSError as error:
        raise OSError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def connection_limit() -> int:
    """:data:`CONNECTION_LIMIT`, or a third of the process's descriptor limit if that is lower: a
    connection holds its socket and at most one file (a spooled request body, or an answer's)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return CONNECTION_LIMIT
    return max(16, min(CONNECTION_LIMIT, soft // 3))


class HttpServer:
    """``app`` served on ``host:port`` (port 0: a free one), bound when made, answering once started."""

    def __init__(
        self, app: WSGIApp, host: str, port: int, idle_timeout: int = IDLE_TIMEOUT, threads: int = THREADS
    ) -> None:
        if idle_timeout < 1 or threads < 1:
            raise ValueError("idle_timeout and threads must be at least 1")
        sock = _listen(host, port)
        self.port: int = sock.getsockname()[1]
        self.threads = threads
        self._map: dict = {}
        self._workers = Workers()  # no thread until start()
        self._server: BaseWSGIServer = create_server(
            _raw_paths(app),
            map=self._map,
            _dispatcher=self._workers,
            sockets=[sock],
            channel_timeout=idle_timeout,
            cleanup_interval=1,
            connection_limit=connection_limit(),
            backlog=BACKLOG,
            max_request_body_size=_max_body(),
            asyncore_use_poll=True,  # select() stops at descriptor 1024
            ident="sagemaker-plans-local",
            clear_untrusted_proxy_headers=False,
        )
        self._server.channel_class = Channel
        self._server.pull_trigger = self._wake_loop  # type: ignore[method-assign]
        self._server.maintenance = self._maintenance  # type: ignore[method-assign]
        self._loop: threading.Thread | None = None
        self._stopped = False

    def start(self) -> None:
        """Start the worker threads and the connection loop (once; not after ``stop()``)."""
        if self._loop is not None or self._stopped:
            return
        self._workers.set_thread_count(self.threads)
        self._loop = threading.Thread(
            target=self._server.run, name="sagemaker-plans-local-server", daemon=True
        )
        self._loop.start()

    def stop(self) -> None:
        """Close every connection and the socket, end the workers, then the loop; idempotent.

        The loop's trigger (a pipe the workers write to when an answer is ready) is closed last,
        once no worker is left: a worker writing to a closed descriptor number could write into
        a file opened since. A worker still busy after :data:`STOP_WAIT` keeps the pipe open.
        """
        if self._stopped:
            return
        self._stopped = True
        if self._loop is None:
            self._close_connections()
            self._server.trigger.close()
            return
        closed = threading.Event()
        self._server.trigger.pull_trigger(lambda: self._close_connections(closed))
        closed.wait(STOP_WAIT)
        self._workers.shutdown(cancel_pending=True, timeout=STOP_WAIT)
        for thread in self._workers.started:
            thread.join(STOP_WAIT)
        busy = any(thread.is_alive() for thread in self._workers.started)
        trigger = self._server.trigger
        try:  # the map empties: the loop ends
            trigger.pull_trigger(trigger.del_channel if busy else trigger.close)
        except OSError:  # a worker's last wake-up was still pending: the loop ran the close already
            pass
        self._loop.join()

    def _wake_loop(self) -> None:
        """waitress's wake-up of the loop, left out after an answer on a connection a worker holds."""
        if loop_wake_needed():
            self._server.trigger.pull_trigger()

    def _maintenance(self, now: float) -> None:
        """waitress's idle timeout (run by the loop every second): a connection no worker answers that
        has sent nothing and taken no byte of its answer for the timeout is closed, even when its
        client does not read (``Channel.give_up``). waitress spared a connection with a request
        waiting; one parked (``Channel.park``: for its last answer to be sent) is not spared."""
        cutoff = now - self._server.adj.channel_timeout
        for channel in self._server.active_channels.values():
            if (not channel.requests or channel.parked) and channel.last_activity < cutoff:
                channel.give_up()

    def _close_connections(self, closed: threading.Event | None = None) -> None:
        """Every connection and the listening socket closed (the trigger stays), on the loop's thread."""
        for dispatcher in list(self._map.values()):
            if isinstance(dispatcher, HTTPChannel):
                dispatcher.handle_close()  # wakes a worker waiting to write to it
            elif dispatcher is self._server:
                wasyncore.dispatcher.close(dispatcher)  # the server's own close() closes the trigger too
        if closed is not None:
            closed.set()


def _max_body() -> int:
    """waitress's body limit: S3's (the app's own check answers it) plus room for aws-chunked framing."""
    return wsgi_app.MAX_STREAM + wsgi_app.MAX_STREAM // 32
