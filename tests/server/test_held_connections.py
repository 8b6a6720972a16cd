"""A worker keeps the keep-alive connection it answered while its client is quick (``http_channel.Channel``).

Raw sockets on 127.0.0.1. ``LINGER`` is set far above any machine's pauses where a test needs the
worker to stay, and the waits only bound a failure: no outcome depends on the machine's speed.
"""

from __future__ import annotations

import http.client
import socket
import time
from contextlib import contextmanager
from typing import Iterator

import pytest

from sagemaker_plans_local.server import http_channel
from sagemaker_plans_local.server.runner import LocalServer
from tests.server.test_connections import START, WAIT, connect

HEALTH = b"GET /_sagemaker_plans_local/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@contextmanager
def serving(**kwargs) -> Iterator[LocalServer]:
    """A started server whose workers all wait for work (a worker holds a connection only then)."""
    with LocalServer(start_time=START, **kwargs) as server:
        workers = server._http._workers
        deadline = time.monotonic() + WAIT
        while workers.active_count and time.monotonic() < deadline:
            time.sleep(0.01)
        yield server


def read_answer(sock: socket.socket) -> http.client.HTTPResponse:
    response = http.client.HTTPResponse(sock, method="GET")
    response.begin()
    response.read()
    return response


def loop_wakes(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """A list that grows by one each time a worker wakes the server's connection loop."""
    trigger = server._http._server.trigger
    wakes: list[None] = []
    pull = trigger.pull_trigger

    def counted(*args):
        wakes.append(None)
        return pull(*args)

    monkeypatch.setattr(trigger, "pull_trigger", counted)
    return wakes


def test_a_quick_clients_requests_are_answered_without_waking_the_loop_each_time(monkeypatch):
    monkeypatch.setattr(http_channel, "LINGER", 120.0)  # the worker stays however slow the machine
    with serving() as server, connect(server) as sock:
        sock.sendall(HEALTH)
        assert read_answer(sock).status == 200  # the worker now holds the connection
        wakes = loop_wakes(server, monkeypatch)
        for _ in range(20):
            sock.sendall(HEALTH)
            assert read_answer(sock).status == 200
        assert wakes == []  # waitress woke the loop once per answer


def test_a_client_slower_than_the_linger_is_answered_on_the_same_connection(monkeypatch):
    monkeypatch.setattr(http_channel, "LINGER", 0.0)  # every worker hands the connection back at once
    with serving() as server, connect(server) as sock:
        for _ in range(3):
            sock.sendall(HEALTH)
            assert read_answer(sock).status == 200
            time.sleep(0.05)


def test_a_request_half_read_by_the_worker_is_finished_by_the_loop(monkeypatch):
    monkeypatch.setattr(http_channel, "LINGER", 120.0)  # the worker is still waiting when the half comes
    with serving() as server, connect(server) as sock:
        sock.sendall(HEALTH)
        assert read_answer(sock).status == 200
        sock.sendall(HEALTH[:20])  # the holding worker reads this much, then gives the connection back
        time.sleep(0.2)
        sock.sendall(HEALTH[20:])
        assert read_answer(sock).status == 200
        sock.sendall(HEALTH)
        assert read_answer(sock).status == 200


def statuses(file, count: int) -> list[int]:
    """The statuses of the next ``count`` answers read from ``file`` (framed by Content-Length)."""
    found = []
    for _ in range(count):
        status = int(file.readline().split()[1])
        length = 0
        while (line := file.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        file.read(length)
        found.append(status)
    return found


def test_pipelined_requests_are_answered_in_order():
    with serving() as server, connect(server) as sock, sock.makefile("rb") as file:
        sock.sendall(HEALTH * 3)
        assert statuses(file, 3) == [200, 200, 200]
        sock.sendall(HEALTH)  # and the connection serves on
        assert statuses(file, 1) == [200]


def test_a_held_connection_does_not_keep_the_only_worker_from_another_client(monkeypatch):
    monkeypatch.setattr(http_channel, "LINGER", 120.0)  # far beyond WAIT: only giving way answers B
    with serving(threads=1) as server, connect(server) as first, connect(server) as second:
        first.sendall(HEALTH)
        assert read_answer(first).status == 200  # the one worker now holds the first connection
        second.sendall(HEALTH)
        assert read_answer(second).status == 200
        first.sendall(HEALTH)
        assert read_answer(first).status == 200


def test_a_client_closing_a_held_connection_frees_its_worker(monkeypatch):
    monkeypatch.setattr(http_channel, "LINGER", 120.0)
    with serving(threads=1) as server:
        with connect(server) as first:
            first.sendall(HEALTH)
            assert read_answer(first).status == 200
        with connect(server) as second:
            second.sendall(HEALTH)
            assert read_answer(second).status == 200


def test_stop_ends_a_worker_holding_a_connection(monkeypatch):
    monkeypatch.setattr(http_channel, "LINGER", 120.0)
    with serving() as server, connect(server) as sock:
        sock.sendall(HEALTH)
        assert read_answer(sock).status == 200
        server.stop()  # joins the workers: a held connection must not keep one for LINGER
        assert not any(thread.is_alive() for thread in server._http._workers.started)
