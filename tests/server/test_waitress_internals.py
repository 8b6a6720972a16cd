"""The waitress internals the server leans on (``server/http_channel.py``, ``http_parser.py``,
``http_server.py``) are the ones it was written and tested against: an upgrade fails here, loudly.

The server subclasses waitress's private classes (``HTTPChannel``, ``HTTPRequestParser``,
``ErrorTask``, ``WSGITask``, ``ThreadedTaskDispatcher``), overrides some of their methods, reads
their attributes, and relies on how their other methods behave (when the loop reads a connection,
when a task is queued, what a chunked body's receiver holds). ``pyproject.toml`` pins waitress to
3.0.x; these tests pin the very source of each method involved. When one fails, read waitress's new
code for that method, check the server's use of it still holds (and its tests pass), and only
then update the digest here.
"""

from __future__ import annotations

import collections
import hashlib
import importlib.metadata
import inspect
import socket
import threading
from pathlib import Path

import pytest
import waitress
from waitress import buffers, channel, parser, receiver, server, task, trigger

from sagemaker_plans_local.server import http_channel, http_parser
from sagemaker_plans_local.server.http_server import HttpServer

ROOT = Path(__file__).resolve().parents[2]

#: The first 16 hex digits of the SHA-256 of each one's source, in waitress 3.0.2.
DIGESTS = {
    "waitress.create_server": "2e506b208edceac2",
    "channel.HTTPChannel.__init__": "a194769af3fd2e35",
    "channel.HTTPChannel.readable": "e4722238ce60c915",
    "channel.HTTPChannel.writable": "d0cbd4ae1b3ba2a3",
    "channel.HTTPChannel.handle_write": "6c900f395b306f09",
    "channel.HTTPChannel.handle_close": "8f59b9aaa45566bb",
    "channel.HTTPChannel.received": "08d6df73fb69da84",
    "channel.HTTPChannel.send_continue": "842ebf929f6dbb14",
    "channel.HTTPChannel.write_soon": "20eedb92a8237c47",
    "channel.HTTPChannel._flush_outbufs_below_high_watermark": "27a2b75117abd0d7",
    "channel.HTTPChannel._flush_some": "fe7a9a752a419402",
    "channel.HTTPChannel._flush_exception": "c9f3751ffdb057b7",
    "channel.HTTPChannel.service": "f73afa13748e1128",
    "task.ThreadedTaskDispatcher.__init__": "0479b29257f508a5",
    "task.ThreadedTaskDispatcher.add_task": "1028105a9aed367d",
    "task.ThreadedTaskDispatcher.start_new_thread": "c51d5c8f2415c093",
    "task.ThreadedTaskDispatcher.handler_thread": "fe586964e3f09522",
    "task.ThreadedTaskDispatcher.set_thread_count": "97cddfc021373f31",
    "task.ThreadedTaskDispatcher.shutdown": "f2550ddbfb8d46b9",
    "task.Task.service": "d96bb4019c488cca",
    "task.Task.write": "f9a97135b3b5d691",
    "task.Task.finish": "9bc080ca74743a10",
    "task.Task.set_close_on_finish": "90433a0ffcaf34a7",
    "task.ErrorTask.execute": "4abe3262db04d291",
    "task.WSGITask.execute": "207afc60fcf3181f",
    "parser.HTTPRequestParser.received": "b466c02de37d4a01",
    "parser.HTTPRequestParser.parse_header": "c2c093b901782da6",
    "parser.crack_first_line": "5ef0eba51166e715",
    "receiver.ChunkedReceiver.received": "ce28c1acbffe8a85",
    "server.BaseWSGIServer.__init__": "e70a16b5b63c0a98",
    "server.BaseWSGIServer.readable": "4eea9c1036b55b41",
    "server.BaseWSGIServer.maintenance": "4ab5b7f595bc4253",
    "server.BaseWSGIServer.add_task": "19e994eb9cc95a9a",
    "trigger._triggerbase.pull_trigger": "50c47b99aa2ddf23",
    "trigger._triggerbase.handle_read": "e21685b20f089516",
    "buffers.ReadOnlyFileBasedBuffer.prepare": "6bd451d6ad6f092d",
}


def _waitress_object(name: str):
    found = {"waitress": waitress, "channel": channel, "parser": parser, "receiver": receiver}
    found |= {"server": server, "task": task, "buffers": buffers, "trigger": trigger}
    module, *path = name.split(".")
    value = found[module]
    for part in path:
        value = getattr(value, part)
    return value


def test_waitress_is_the_pinned_minor_version():
    assert importlib.metadata.version("waitress").startswith("3.0."), "the server is written for waitress 3.0"
    assert '"waitress>=3.0.2,<3.1",' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_each_internal_the_server_leans_on_is_unchanged(name):
    source = inspect.getsource(_waitress_object(name))
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    assert digest == DIGESTS[name], (
        f"waitress's {name} changed: re-check server/http_channel.py, http_parser.py and "
        "http_server.py against its new code before updating this digest"
    )


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (http_channel.Channel, channel.HTTPChannel),
        (http_channel.Workers, task.ThreadedTaskDispatcher),
        (http_channel.Task, task.WSGITask),
        (http_channel.AwsErrorTask, task.ErrorTask),
        (http_parser.Parser, parser.HTTPRequestParser),
    ],
)
def test_every_override_keeps_the_signature_waitress_calls_it_with(ours, theirs):
    overridden = [
        name for name, value in vars(ours).items() if inspect.isfunction(value) and hasattr(theirs, name)
    ]
    assert overridden
    for name in overridden:
        assert inspect.signature(getattr(ours, name)).parameters.keys() == (
            inspect.signature(getattr(theirs, name)).parameters.keys()
        ), name


def test_a_live_connection_has_the_attributes_the_server_reads():
    seen: dict = {}

    def app(environ, start_response):
        seen["channel"] = http_channel._held.channel  # the worker's connection, as it answers
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    served = HttpServer(app, "127.0.0.1", 0, threads=1)
    served.start()
    try:
        with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(1024).startswith(b"HTTP/1.1 200 ")
        live = seen["channel"]
        assert isinstance(live, http_channel.Channel)
        assert isinstance(live.outbuf_lock, threading.Condition)
        assert isinstance(live.requests_lock, type(threading.Lock()))
        for name, kind in [("total_outbufs_len", int), ("requests", list), ("last_activity", float)]:
            assert isinstance(getattr(live, name), kind), name
        for name in ("connected", "will_close", "close_when_flushed", "sent_continue"):
            assert isinstance(getattr(live, name), bool), name
        assert live.server is served._server and live.adj is served._server.adj
        assert isinstance(served._server.active_channels, dict)
        workers = served._workers
        assert isinstance(workers.queue, collections.deque) and isinstance(workers.active_count, int)
        adj = served._server.adj
        for name in ("channel_timeout", "outbuf_high_watermark", "recv_bytes", "max_request_body_size"):
            assert isinstance(getattr(adj, name), int), name
    finally:
        served.stop()


def test_a_chunked_receiver_holds_what_the_parser_bounds():
    held = receiver.ChunkedReceiver(buffers.OverflowableBuffer(1024))
    held.received(b"5;ext")
    assert (held.control_line, held.chunk_remainder, held.trailer) == (b"5;ext", 0, b"")
    held.received(b"\r\n")
    assert (held.control_line, held.chunk_remainder) == (b"", 5)
