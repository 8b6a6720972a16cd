"""Connections: HTTP/1.1 keep-alive, idle timeouts, a bounded worker pool, nothing left after stop().

Raw sockets on 127.0.0.1. Waits are generous (30 s) and only bound a failure: no test depends on
the machine's speed.
"""

from __future__ import annotations

import http.client
import resource
import socket
import threading
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone
from typing import Iterator

import pytest

from sagemaker_plans_local.server.runner import LocalServer

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
WAIT = 30.0
HALF_SENT = 1000
HEALTH = b"GET /_sagemaker_plans_local/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"


@contextmanager
def serving(**kwargs) -> Iterator[LocalServer]:
    with LocalServer(start_time=START, **kwargs) as server:
        yield server


def address(server: LocalServer) -> tuple[str, int]:
    host, port = server.url.rsplit(":", 1)
    return "127.0.0.1", int(port)


def connect(server: LocalServer) -> socket.socket:
    sock = socket.create_connection(address(server), timeout=WAIT)
    sock.settimeout(WAIT)
    return sock


def answer(sock: socket.socket, request: bytes, method: str = "GET") -> http.client.HTTPResponse:
    """Send ``request`` on ``sock`` and read its whole answer."""
    sock.sendall(request)
    response = http.client.HTTPResponse(sock, method=method)
    response.begin()
    response.read()
    return response


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed ``sock`` (within :data:`WAIT`)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def served_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread not in before and thread.is_alive()]


def test_two_requests_on_one_connection_are_both_answered_and_it_stays_open():
    with serving() as server, connect(server) as sock:
        for _ in range(2):
            response = answer(sock, HEALTH + b"\r\n")
            assert response.status == 200
            assert (response.getheader("Connection") or "").lower() != "close"
            assert (
                response.getheader("Content-Length") or response.getheader("Transfer-Encoding") == "chunked"
            )
        sock.settimeout(0.2)
        with pytest.raises(TimeoutError):  # still open: nothing to read, no EOF
            sock.recv(1)


def test_connection_close_from_the_client_is_honoured():
    with serving() as server, connect(server) as sock:
        kept = answer(sock, HEALTH + b"\r\n")  # kept open, then closed when the client asks
        assert (kept.status, (kept.getheader("Connection") or "").lower()) == (200, "")
        response = answer(sock, HEALTH + b"Connection: close\r\n\r\n")
        assert response.status == 200
        assert response.getheader("Connection", "").lower() == "close"
        assert closed_by_server(sock)


def test_an_idle_connection_and_a_half_sent_request_are_closed_after_the_idle_timeout():
    with serving(idle_timeout=1) as server, connect(server) as idle, connect(server) as half:
        half.sendall(HEALTH)  # the headers never end
        assert closed_by_server(idle)
        assert closed_by_server(half)
        with connect(server) as fresh:  # the server still answers
            assert answer(fresh, HEALTH + b"\r\n").status == 200


@contextmanager
def descriptors(needed: int) -> Iterator[None]:
    """The soft descriptor limit raised to ``needed`` for the block (skip if the hard limit is lower)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"needs {needed} file descriptors; the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_thousand_half_sent_connections_take_no_thread_and_block_no_client():
    before = set(threading.enumerate())
    with descriptors(3 * HALF_SENT + 256), serving() as server:  # connections: a third
        with ExitStack() as held:
            for _ in range(HALF_SENT):
                held.enter_context(connect(server)).sendall(HEALTH)
            with connect(server) as client:  # answered while the thousand are still open
                assert answer(client, HEALTH + b"\r\n").status == 200
            # the workers (16) and the connection loop, however many connections: far fewer than them
            assert len(served_threads(before)) <= 32
        with connect(server) as client:  # and once they are gone
            assert answer(client, HEALTH + b"\r\n").status == 200


def test_stop_closes_every_connection_and_leaves_no_thread():
    before = set(threading.enumerate())
    server = LocalServer(start_time=START).start()
    kept, half = connect(server), connect(server)
    try:
        assert answer(kept, HEALTH + b"\r\n").status == 200
        half.sendall(HEALTH)
        server.stop()
        assert closed_by_server(kept)
        assert closed_by_server(half)
        assert served_threads(before) == []
    finally:
        kept.close()
        half.close()
        server.stop()


def test_a_server_never_started_starts_no_thread_and_stops_cleanly():
    before = set(threading.enumerate())
    server = LocalServer(start_time=START)
    assert served_threads(before) == []
    server.stop()
    server.stop()
    assert served_threads(before) == []


def test_expect_100_continue_gets_its_interim_answer_before_the_body():
    with serving() as server, connect(server) as sock:
        body = b'{"advance_seconds": 60}'
        sock.sendall(
            b"POST /_sagemaker_plans_local/clock HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        assert sock.recv(25) == b"HTTP/1.1 100 Continue\r\n\r\n"
        response = answer(sock, body, "POST")
        assert response.status == 200


def test_malformed_http_is_an_aws_shaped_400_not_waitress_text():
    with serving() as server, connect(server) as sock:
        response = http.client.HTTPResponse(sock)
        sock.sendall(
            b"PUT /bucket/key HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
        )
        response.begin()
        body = response.read()
        assert response.status == 400
        assert b"<Code>BadRequest</Code>" in body


def test_ipv6_loopback():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    try:
        server = LocalServer(host="::1", start_time=START)
    except OSError as error:
        pytest.skip(f"::1 cannot be bound here: {error}")
    with server, socket.create_connection(("::1", int(server.url.rsplit(":", 1)[1])), timeout=WAIT) as sock:
        assert server.url.startswith("http://[::1]:")
        assert answer(sock, HEALTH + b"\r\n").status == 200


@pytest.mark.parametrize(
    "headers, status, code",
    [
        (b"", 400, b"<Code>EntityTooLarge</Code>"),
        (b"X-Amz-Target: SageMaker.ListTrainingJobs\r\n", 413, b'"RequestEntityTooLargeException"'),
    ],
)
def test_a_body_over_the_servers_limit_is_refused_at_its_headers_in_the_requests_shape(headers, status, code):
    with serving() as server, connect(server) as sock:
        response = http.client.HTTPResponse(sock)
        sock.sendall(
            b"PUT /bucket/key HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + headers
            + b"Content-Length: %d\r\n\r\n" % (6 * 1024**3)
        )
        response.begin()  # answered with no byte of the body sent
        assert (response.status, code in response.read()) == (status, True)


@pytest.mark.parametrize("key", ["/lead", "a//b", "//", "sp ace+plus%2F/ünï"])
def test_s3_keys_with_leading_or_doubled_slashes_round_trip(sagemaker_server, key):
    """The path reaches the app as sent (waitress alone folds a path's leading slashes into one)."""
    from tests.server.test_s3_http import client, virtual_client

    path_style = client(sagemaker_server.url)
    path_style.create_bucket(Bucket="slashes")
    # virtual-hosted style only for keys that do not start with "/" (a path "//lead": s3_routes' matter)
    for s3 in [path_style] + ([] if key.startswith("/") else [virtual_client(sagemaker_server.url)]):
        s3.put_object(Bucket="slashes", Key=key, Body=b"x")
        assert s3.get_object(Bucket="slashes", Key=key)["Body"].read() == b"x"
        assert [o["Key"] for o in s3.list_objects_v2(Bucket="slashes")["Contents"]] == [key]


@pytest.mark.parametrize(
    "request_head, status",
    [  # complete at its headers: no body to wait for (waitress waited for one after its 100 Continue)
        (b"PUT /bucket-e/empty HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n", 403),  # unsigned
        (
            b"POST /_sagemaker_plans_local/reset HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n" % (17 * 1024 * 1024),
            413,
        ),
        (
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: SageMaker.ListTrainingJobs\r\n"
            b"Content-Length: %d\r\n" % (17 * 1024 * 1024),
            413,
        ),
    ],
)
def test_expect_100_continue_on_a_request_complete_at_its_headers_is_answered(request_head, status):
    with serving() as server, connect(server) as sock:
        sock.sendall(request_head + b"Expect: 100-continue\r\n\r\n")
        response = http.client.HTTPResponse(sock)
        response.begin()
        while response.status == 100:  # the interim answer, then the real one
            response = http.client.HTTPResponse(sock)
            response.begin()
        assert response.status == status
