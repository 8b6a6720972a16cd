"""waitress's connection, worker pool and tasks as the server runs them (``http_server.HttpServer``).

These subclass waitress 3.0's private classes; ``pyproject.toml`` pins waitress to 3.0.x and
``tests/server/test_waitress_internals.py`` fails loudly when the internals they lean on move.
What they change:

- **A quick client keeps its worker** (:meth:`Channel.service`): the worker that answered a
  keep-alive request while no other worker was busy waits up to :data:`LINGER` for the client's
  next request and answers it itself, instead of waitress's hand-off to the loop and back.
- **No worker waits for a slow reader.** An answer goes into the connection's output and the
  worker moves on: an S3 object is handed over as its open file (``wsgi.file_wrapper``, the app),
  and a pipelined next request waits, threadless, until the previous answer is sent
  (:meth:`Channel.park`). A worker writing an answer larger than waitress's high watermark (16 MiB)
  waits for room with a deadline: the idle timeout without a byte taken closes the connection.
- **The loop sends a connection's output only while holding its output lock**, as a worker does:
  waitress's loop sent without it when no request was queued, and a worker sending a
  ``100 Continue`` on a held connection then sent the same bytes at the same time.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from http import HTTPStatus
from typing import Any, Callable

from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.task import ErrorTask, ThreadedTaskDispatcher, WSGITask

from sagemaker_plans_local.server import control, routing
from sagemaker_plans_local.server.errors import RouteError, error_answer, refusal
from sagemaker_plans_local.server.http_parser import Headers, Parser

#: Seconds a worker that answered a keep-alive request while no other worker was busy waits on
#: that connection for the next one (until another request waits for a worker) before it hands
#: the connection back to the loop.
LINGER = 0.02
#: How often (milliseconds) a waiting worker looks whether another request waits for a worker.
_LINGER_SLICE_MS = 5

#: The connection the current worker thread holds (see :class:`Channel`); whether it has a request
#: the worker answers next (``again``), or one to queue once the worker has let it go (``later``).
_held = threading.local()


def loop_wake_needed() -> bool:
    """Whether the loop must be woken now: not after an answer on the connection this worker holds,
    with nothing of it left to send (the worker reads that connection's next request itself)."""
    channel = getattr(_held, "channel", None)
    return channel is None or channel.pull_trigger_after_answer()


class Workers(ThreadedTaskDispatcher):
    """waitress's worker pool, keeping its threads so that ``stop()`` can join them.

    A request on the connection a worker holds stays with that worker (:meth:`Channel.service`)
    while no other request waits and its last answer is sent; otherwise it is queued (or parked)
    once the worker has let the connection go, as waitress queues it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.started: list[threading.Thread] = []

    def add_task(self, task: Any) -> None:
        held: Channel | None = getattr(_held, "channel", None)
        if held is not None and held is task:
            if self.queue or held.total_outbufs_len:  # others wait first, or its answer is not sent
                _held.later = True
            else:
                _held.again = True
            return
        if isinstance(task, Channel) and task.park():
            return
        super().add_task(task)

    def start_new_thread(self, target: Callable[[int], None], thread_no: int) -> None:
        thread = threading.Thread(
            target=target, name=f"sagemaker-plans-local-worker-{thread_no}", args=(thread_no,), daemon=True
        )
        self.started.append(thread)
        thread.start()


class AwsErrorTask(ErrorTask):
    """waitress's own refusals (malformed HTTP, a body or header section too large), AWS-shaped."""

    def execute(self) -> None:
        error = self.request.error
        headers = Headers(self.request.headers)
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


class Task(WSGITask):
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


class Channel(HTTPChannel):
    """waitress's connection: kept by the worker that answered it while its client is quick, never
    waiting for a slow one (the module's docstring).

    waitress hands every request from the loop to a worker and wakes the loop after each answer
    (a pipe write) so that it reads the connection again: two thread switches per request beyond
    the client's. Here a worker that answered while no other worker was busy waits up to
    :data:`LINGER` on the connection and answers the next request itself, until another request
    waits for a worker; the loop does not read a connection a worker holds, and gets it back (one
    wake-up) when the client is slower. Under concurrent load the loop reads every connection.
    """

    error_task_class = AwsErrorTask
    parser_class = Parser
    task_class = Task
    close_when_flushed: bool
    requests: list[Any]
    held = False
    #: Its next request waits, with no worker, for the previous answer to be sent (:meth:`park`).
    parked = False

    def readable(self) -> bool:
        return not self.held and super().readable()

    def writable(self) -> bool:
        return bool(self.parked or super().writable())

    def service(self) -> None:
        self.held = True
        _held.channel = self
        _held.later = False
        try:
            while True:
                _held.again = False
                super().service()
                if _held.later or not (_held.again or self._next_request_here()):
                    break
        finally:
            _held.channel = None
            self.held = False
            if _held.later:  # no worker holds it now: queued behind the others, or parked
                self.server.add_task(self)
            self.server.pull_trigger()  # the loop reads (or closes) the connection again

    def park(self) -> bool:
        """Whether the next request must wait, threadless, for the answer still being sent: the loop
        queues it once everything is sent (:meth:`handle_write`), so a client that does not read
        holds no worker and at most one answer (in memory up to 1 MiB, else a file)."""
        with self.outbuf_lock:
            if self.connected and self.total_outbufs_len:
                self.parked = True
                return True
        return False

    def handle_write(self) -> None:
        """waitress's, except that the loop sends only while holding the output lock (a worker may be
        writing to it: a ``100 Continue``, an answer), and queues a parked request once all is sent."""
        resume = False
        if self.outbuf_lock.acquire(blocking=False):  # else a worker is writing: the next turn
            try:
                if self.total_outbufs_len:
                    self._flush_exception(self._flush_some)
                    self.outbuf_lock.notify()  # a worker waiting for room (write_soon)
                resume = self.parked and not self.total_outbufs_len
                self.parked = self.parked and not resume
            finally:
                self.outbuf_lock.release()
        if resume:  # a closed connection's worker closes its requests
            self.server.add_task(self)
        if self.close_when_flushed and not self.total_outbufs_len:
            self.close_when_flushed = False
            self.will_close = True
        if self.will_close:
            self.handle_close()

    def handle_close(self) -> None:
        with self.outbuf_lock:
            parked, self.parked = self.parked, False
        if parked:  # no worker will answer them: their bodies' buffers closed
            for request in self.requests:
                request.close()
            self.requests = []
        super().handle_close()

    def write_soon(self, data: Any) -> int:
        """waitress's, waiting for room (:meth:`_wait_for_room`) with a deadline instead of without one."""
        if data and self.total_outbufs_len > self.adj.outbuf_high_watermark:
            self._wait_for_room()
        return super().write_soon(data)

    def _flush_outbufs_below_high_watermark(self) -> None:
        """waitress waits here, with no deadline, before every write and between pipelined requests;
        :meth:`write_soon` and :meth:`park` do instead."""

    def _wait_for_room(self) -> None:
        """Wait while more than the high watermark waits to be sent; after the idle timeout without a
        byte taken, the connection is closed (``ClientDisconnected`` ends the answer)."""
        timeout = self.adj.channel_timeout
        with self.outbuf_lock:
            left, since = self.total_outbufs_len, time.monotonic()
            while self.connected and self.total_outbufs_len > self.adj.outbuf_high_watermark:
                self.server.pull_trigger()
                self.outbuf_lock.wait(timeout)  # the loop notifies after each send
                if self.total_outbufs_len < left:
                    left, since = self.total_outbufs_len, time.monotonic()
                elif time.monotonic() - since >= timeout:
                    self.give_up()
                    self.server.pull_trigger()
                    raise ClientDisconnected

    def give_up(self) -> None:
        """Have the loop close this connection, whether or not its client reads: waitress's mark alone
        is acted on once the socket can be written, which never comes for a client taking no byte;
        a socket shut down is reported by the loop's next poll (closed there, not here: a connection
        accepted meanwhile could take its descriptor number)."""
        self.will_close = True
        try:
            if self.socket is not None:
                self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:  # closed already
            pass

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
        self.received(data)  # a complete request sets _held.again (or later: Workers.add_task)
        return bool(_held.again)

    def send_continue(self) -> None:
        """``100 Continue`` for ``Expect: 100-continue``; waitress marks the request unfinished after it,
        which leaves one already complete (``Content-Length: 0``, or refused by its headers) waiting for
        a body that never comes: boto3's empty PutObject hung. A complete request stays complete."""
        completed = self.request.completed
        super().send_continue()
        self.request.completed = completed or self.request.completed
