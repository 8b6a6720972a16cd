"""Slow readers: clients that ask for large answers and never read them cannot starve the others.

Raw sockets on 127.0.0.1. Each slow reader reads one byte of its answer (so a worker has surely
taken its request) and then stops reading. Every assertion is on events: another client is
answered while the slow readers are still stuck; a stuck connection is closed. The waits (30 s)
only bound a failure: no outcome depends on the machine's speed.
"""

from __future__ import annotations

import http.client
import socket
import time
from contextlib import ExitStack, contextmanager
from typing import Iterable, Iterator

import pytest

from sagemaker_plans_local.server.http_server import HttpServer
from tests.server.test_connections import HEALTH, WAIT, answer, connect, serving
from tests.server.test_s3_http import MB, client

AUTH = (
    b"Authorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
    b"SignedHeaders=host, Signature=0\r\n"
)
#: Workers in these servers: the slow readers outnumber them.
THREADS = 2
SLOW_READERS = 3


def get(key: str, extra: bytes = b"") -> bytes:
    return b"GET /slow/%s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s\r\n" % (key.encode(), AUTH, extra)


def slow_reader(stack: ExitStack, address: tuple[str, int], request: bytes) -> socket.socket:
    """A connection that sends ``request``, reads one byte of the answer, and reads no more."""
    sock = socket.socket()
    stack.enter_context(sock)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    sock.settimeout(WAIT)
    sock.connect(address)
    sock.sendall(request)
    assert sock.recv(1) == b"H"  # a worker has taken the request and started the answer
    return sock


def read_answers(sock: socket.socket, count: int) -> list[tuple[int, bytes]]:
    """The next ``count`` answers on ``sock`` (status, body), the first byte already read."""
    file = sock.makefile("rb")
    first = True
    found = []
    for _ in range(count):
        line = file.readline()
        if first:
            line, first = b"H" + line, False
        headers = {}
        while (header := file.readline()) not in (b"\r\n", b""):
            name, _, value = header.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        found.append((int(line.split()[1]), file.read(int(headers["content-length"]))))
    return found


def server_address(url: str) -> tuple[str, int]:
    return "127.0.0.1", int(url.rsplit(":", 1)[1])


@contextmanager
def objects(sizes: dict[str, int]) -> Iterator[tuple[object, dict[str, bytes]]]:
    """A started server (``THREADS`` workers) holding bucket ``slow`` with an object per ``sizes``."""
    with serving(threads=THREADS) as server:
        s3 = client(server.url)
        s3.create_bucket(Bucket="slow")
        bodies = {}
        for key, size in sizes.items():
            bodies[key] = bytes(range(256)) * (size // 256)
            s3.put_object(Bucket="slow", Key=key, Body=bodies[key])
        yield server, bodies


def test_slow_readers_of_a_large_object_do_not_starve_another_client():
    with objects({"large": 40 * MB}) as (server, bodies), ExitStack() as stack:
        address = server_address(server.url)
        stuck = [slow_reader(stack, address, get("large")) for _ in range(SLOW_READERS)]
        with connect(server) as other:  # answered while every slow reader is still stuck
            assert answer(other, HEALTH + b"\r\n").status == 200
        for sock in stuck:  # and each slow reader, reading at last, gets its whole object
            assert read_answers(sock, 1) == [(200, bodies["large"])]


def test_slow_readers_of_pipelined_gets_do_not_starve_another_client():
    with objects({"mib": MB}) as (server, bodies), ExitStack() as stack:
        address = server_address(server.url)
        stuck = [slow_reader(stack, address, get("mib") * 30) for _ in range(SLOW_READERS)]
        with connect(server) as other:
            assert answer(other, HEALTH + b"\r\n").status == 200
        for sock in stuck:
            assert read_answers(sock, 30) == [(200, bodies["mib"])] * 30


def test_a_large_range_of_an_object_is_its_bytes():
    with objects({"large": 8 * MB}) as (server, bodies):
        s3 = client(server.url)
        first, last = 1000, 1000 + 3 * MB
        ranged = s3.get_object(Bucket="slow", Key="large", Range=f"bytes={first}-{last}")
        assert ranged["ContentLength"] == last - first + 1
        assert ranged["Body"].read() == bodies["large"][first : last + 1]
        assert s3.get_object(Bucket="slow", Key="large")["Body"].read() == bodies["large"]


def open_connections(server) -> int:
    return len(server._http._server.active_channels)


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_pipelining_client_that_stops_reading_is_closed_after_the_idle_timeout():
    with objects({"mib": MB}) as (server, _), ExitStack() as stack:
        server._http._server.adj.channel_timeout = 1  # the idle timeout, for this server only
        slow_reader(stack, server_address(server.url), get("mib") * 30)
        wait_until(lambda: open_connections(server) == 0, "the stuck connection is still open")


def huge_answer(environ, start_response) -> Iterable[bytes]:
    """A WSGI app answering 64 MiB from memory, 1 MiB at a time (no file to hand over)."""
    start_response("200 OK", [("Content-Length", str(64 * MB))])
    return (b"x" * MB for _ in range(64))


@pytest.fixture
def huge_server() -> Iterator[HttpServer]:
    server = HttpServer(huge_answer, "127.0.0.1", 0, idle_timeout=1, threads=1)
    server.start()
    yield server
    server.stop()


def test_a_write_that_makes_no_progress_gives_up_after_the_idle_timeout(huge_server):
    address = ("127.0.0.1", huge_server.port)
    with ExitStack() as stack:
        stuck = slow_reader(stack, address, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        with socket.create_connection(address, timeout=WAIT) as other:  # the only worker came back
            other.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            response = http.client.HTTPResponse(other, method="GET")
            response.begin()
            assert response.status == 200
        received = 1
        while chunk := stuck.recv(MB):  # the stuck connection was closed before its answer ended
            received += len(chunk)
        assert received < 64 * MB


def test_a_slow_reader_of_a_large_object_is_closed_after_the_idle_timeout():
    with objects({"large": 40 * MB}) as (server, _), ExitStack() as stack:
        server._http._server.adj.channel_timeout = 1
        slow_reader(stack, server_address(server.url), get("large"))
        wait_until(lambda: open_connections(server) == 0, "the stuck connection is still open")
