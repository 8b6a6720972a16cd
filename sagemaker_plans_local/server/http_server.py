"""The HTTP machinery under the server: waitress's worker pool behind one async connection loop.

One thread (the loop) holds every connection and reads requests; a complete request goes to one
of ``threads`` worker threads, so an idle or half-sent connection costs a descriptor, never a
thread (a quick client's next request may be read by the worker that answered it: ``_Channel``).
A connection that sends nothing for ``idle_timeout`` seconds is closed, answers are
HTTP/1.1 keep-alive (framed by ``Content-Length`` or chunked), and ``stop()`` leaves no thread.
"""

from __future__ import annotations

import json
import logging
import resource
import select
import socket
import threading
import time
from http import HTTPStatus
from typing import Any, Callable, Iterable
from urllib.parse import unquote_to_bytes

from waitress import create_server, wasyncore
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher, WSGITask

from sagemaker_plans_local.server import app as wsgi_app
from sagemaker_plans_local.server import control, routing
from sagemaker_plans_local.server.errors import RouteError, error_answer, refusal

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
#: Seconds a worker that answered a keep-alive request while no other worker was busy waits on
#: that connection for the next one (until another request waits for a worker) before it hands
#: the connection back to the loop.
LINGER = 0.02
#: How often (milliseconds) a waiting worker looks whether another request waits for a worker.
_LINGER_SLICE_MS = 5

WSGIApp = Callable[[dict, Any], Iterable[bytes]]

# waitress warns "Task queue depth is N" whenever a request waits for a free worker: under load
# that is a line per request, and waiting is what a bounded pool is for. Its other warnings stay.
logging.getLogger("waitress.queue").setLevel(logging.ERROR)


#: The connection the current worker thread holds (see :class:`_Channel`), and whether it has
#: a request the worker answers next.
_held = threading.local()


class _Workers(ThreadedTaskDispatcher):
    """waitress's worker pool, keeping its threads so that ``stop()`` can join them.

    A request on the connection a worker holds stays with that worker (:meth:`_Channel.service`)
    while no other request waits; otherwise it is queued behind them, as waitress queues it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.started: list[threading.Thread] = []

    def add_task(self, task: Any) -> None:
        if getattr(_held, "channel", None) is task and not self.queue:  # others waiting go first
            _held.again = True
            return
        super().add_task(task)

    def start_new_thread(self, target: Callable[[int], None], thread_no: int) -> None:
        thread = threading.Thread(
            target=target, name=f"sagemaker-plans-local-worker-{thread_no}", args=(thread_no,), daemon=True
        )
        self.started.append(thread)
        thread.start()


class _AwsErrorTask(ErrorTask):
    """waitress's own refusals (malformed HTTP, a body or header section too large), AWS-shaped."""

    def execute(self) -> None:
        error = self.request.error
        headers = _Headers(self.request.headers)
        family = routing.guess_family(headers)
        if error.code == 413 and (self.request.path or "").startswith(control.PREFIX):
            self._answer(
                413, json.dumps({"error": "RequestEntityTooLarge", "message": error.body}).encode(), {}
            )
            return
        if error.code == 413:  # S3 says so with a 400, as the app does
            status = 400 if family == "rest-xml" else 413
            route_error = refusal("too-large", family, "The request body is too large.", status)
        elif error.code == 431:
            route_error = RouteError(
                "RequestHeaderSectionTooLarge", "The request's headers are too large.", 431
            )
        else:
            route_error = RouteError("BadRequest", f"Malformed HTTP request: {error.body}.", 400)
        answer = error_answer(family, route_error)
        self._answer(route_error.status, bytes(answer.body), answer.headers)

    def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.status = f"{status} {HTTPStatus(status).phrase}"
        self.response_headers.extend(headers.items() or [("Content-Type", "application/json")])
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _LimitedBody:
    """waitress's adjustments with a smaller body limit (every other setting the server's)."""

    def __init__(self, adjustments: Any, max_request_body_size: int) -> None:
        self._adjustments = adjustments
        self.max_request_body_size = max_request_body_size

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adjustments, name)


class _Parser(HTTPRequestParser):
    """Requests whose body is a JSON or form document (the control API, awsJson, query) are refused
    by their ``Content-Length`` (or once chunked bodies pass it) at the app's 16 MiB, before the body
    is read: only S3 may send up to 5 GiB, spooled to disk."""

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        if _document_body(self.path or "", _Headers(self.headers)):
            self.adj = _LimitedBody(self.adj, wsgi_app.MAX_BODY + 1)  # type: ignore[has-type]  # >= is refused


def _document_body(path: str, headers: "_Headers") -> bool:
    return path.startswith(control.PREFIX) or routing.guess_family(headers) != "rest-xml"


class _Headers:
    """waitress's parsed headers (``X_AMZ_TARGET``) looked up by their HTTP names."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.upper().replace("-", "_"), default)


class _Task(WSGITask):
    """waitress's task, sending an answer's header with the first piece of its body: waitress sends
    each on its own, two packets for a small answer, and the client wakes up for each."""

    def write(self, data: bytes) -> None:
        if self.wrote_header or not data:
            super().write(data)
            return
        channel = self.channel
        pieces: list[bytes] = []
        channel.write_soon = pieces.append  # type: ignore[method-assign]  # what write() sends, held
        try:
            super().write(data)
        finally:
            del channel.write_soon
        channel.write_soon(b"".join(pieces))


class _Channel(HTTPChannel):
    """waitress's connection, kept by the worker that answered it while its client is quick.

    waitress hands every request from the loop to a worker and wakes the loop after each answer
    (a pipe write) so that it reads the connection again: two thread switches per request beyond
    the client's. Here a worker that answered while no other worker was busy waits up to
    :data:`LINGER` on the connection and answers the next request itself, until another request
    waits for a worker; the loop does not read a connection a worker holds, and gets it back (one
    wake-up) when the client is slower. Under concurrent load the loop reads every connection.
    """

    error_task_class = _AwsErrorTask
    parser_class = _Parser
    task_class = _Task
    held = False

    def readable(self) -> bool:
        return not self.held and super().readable()

    def service(self) -> None:
        self.held = True
        _held.channel = self
        try:
            while True:
                _held.again = False
                super().service()
                if not (_held.again or self._next_request_here()):
                    break
        finally:
            _held.channel = None
            self.held = False
            self.server.pull_trigger()  # the loop reads (or closes) the connection again

    def pull_trigger_after_answer(self) -> bool:
        """Whether the loop must wake up for this connection (output left, or closing)."""
        return bool(
            not self.connected or self.will_close or self.close_when_flushed or self.total_outbufs_len
        )

    def _next_request_here(self) -> bool:
        """Wait for the client's next request while nobody else needs a worker; read it (True: complete)."""
        sock = self.socket
        if sock is None or self.pull_trigger_after_answer() or self.requests:
            return False
        workers = self.server.task_dispatcher
        if workers.active_count > 1:  # other requests are being answered: the loop reads them all
            return False
        queue = workers.queue
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        deadline = time.monotonic() + LINGER
        while not queue:
            try:
                if poller.poll(_LINGER_SLICE_MS):
                    return self._read_here(sock)
            except OSError:  # closed under us (stop()): the loop deals with it
                return False
            if time.monotonic() >= deadline:
                return False
        return False

    def _read_here(self, sock: socket.socket) -> bool:
        try:
            data = sock.recv(self.adj.recv_bytes)
        except OSError:  # nothing after all, or a socket error the loop's next read sees again
            return False
        if not data:  # the client closed: the loop's next read sees that too
            return False
        self.last_activity = time.time()
        self.received(data)  # a complete request sets _held.again (add_task, above)
        return bool(_held.again)

    def send_continue(self) -> None:
        """``100 Continue`` for ``Expect: 100-continue``; waitress marks the request unfinished after it,
        which leaves one already complete (``Content-Length: 0``, or refused by its headers) waiting for
        a body that never comes: boto3's empty PutObject hung. A complete request stays complete."""
        completed = self.request.completed
        super().send_continue()
        self.request.completed = completed or self.request.completed


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
    """:data:`CONNECTION_LIMIT`, or half the process's descriptor limit if that is lower."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return CONNECTION_LIMIT
    return max(16, min(CONNECTION_LIMIT, soft // 2))


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
        self._workers = _Workers()  # no thread until start()
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
        self._server.channel_class = _Channel
        self._server.pull_trigger = self._wake_loop  # type: ignore[method-assign]
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
        channel = getattr(_held, "channel", None)
        if channel is None or channel.pull_trigger_after_answer():
            self._server.trigger.pull_trigger()

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
