"""``Expect: 100-continue`` on a kept connection while other clients keep the server busy.

The client sends each PUT's headers and body in one write, as boto3 may. The worker that
answered the previous PUT may read the next one itself (``http_channel.Channel``) and send its
``100 Continue`` while the connection loop sends the same connection's output: each PUT must get
exactly one ``100 Continue`` and one answer, and nothing may be logged. Raw sockets on 127.0.0.1;
the waits only bound a failure.
"""

from __future__ import annotations

import logging
import socket
import threading
from typing import BinaryIO

import boto3
from botocore.config import Config

from tests.server.test_connections import HEALTH, WAIT, address, connect, serving

PUTS = 300
AUTH = (
    b"Authorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
    b"SignedHeaders=host, Signature=0\r\n"
)


def read_answer(file: BinaryIO) -> int:
    """The status of the next answer on ``file`` (its body read, by its Content-Length)."""
    status = int(file.readline().split()[1])
    length = 0
    while (line := file.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    file.read(length)
    return status


def health_callers(server, stop: threading.Event) -> list[threading.Thread]:
    """Three threads asking for health on fresh connections until ``stop``: the loop stays busy."""

    def call() -> None:
        while not stop.is_set():
            with socket.create_connection(address(server), timeout=WAIT) as sock:
                sock.sendall(HEALTH + b"Connection: close\r\n\r\n")
                while sock.recv(65536):
                    pass

    threads = [threading.Thread(target=call, daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()
    return threads


def test_every_put_with_expect_continue_gets_one_100_and_one_answer_under_load(caplog):
    caplog.set_level(logging.WARNING)
    body = b"x" * 100
    stop = threading.Event()
    with serving() as server, connect(server) as sock, sock.makefile("rb") as file:
        sock.sendall(b"PUT /race HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH + b"Content-Length: 0\r\n\r\n")
        assert read_answer(file) == 200
        callers = health_callers(server, stop)
        try:
            statuses = []
            for number in range(PUTS):
                sock.sendall(
                    b"PUT /race/k%d HTTP/1.1\r\nHost: 127.0.0.1\r\n%sExpect: 100-continue\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (number, AUTH, len(body), body)
                )
                statuses.append((read_answer(file), read_answer(file)))
        finally:
            stop.set()
            for thread in callers:
                thread.join(WAIT)
        assert statuses == [(100, 200)] * PUTS
        sock.sendall(HEALTH + b"\r\n")  # the next answer is this one's: no stray 100 Continue
        assert read_answer(file) == 200
    assert [record.getMessage() for record in caplog.records] == []


def test_boto3_uploads_with_expect_continue_log_nothing(caplog):
    caplog.set_level(logging.WARNING)
    stop = threading.Event()
    with serving() as server:
        s3 = boto3.client(
            "s3",
            endpoint_url=server.url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=Config(retries={"max_attempts": 1}),
        )
        s3.create_bucket(Bucket="uploads")
        callers = health_callers(server, stop)
        try:
            for number in range(100):  # boto3 sends Expect: 100-continue with every PutObject body
                s3.put_object(Bucket="uploads", Key=f"k{number}", Body=b"y" * 2048)
        finally:
            stop.set()
            for thread in callers:
                thread.join(WAIT)
        assert len(s3.list_objects_v2(Bucket="uploads")["Contents"]) == 100
    assert [r.getMessage() for r in caplog.records if r.name.startswith(("waitress", "sagemaker"))] == []


def test_a_100_continue_behind_a_pipelined_request_comes_after_its_answer_once():
    """The worker sends it after answering the request before (waitress keeps answers in order)."""
    with serving() as server, connect(server) as sock, sock.makefile("rb") as file:
        sock.sendall(b"PUT /piped HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH + b"Content-Length: 0\r\n\r\n")
        assert read_answer(file) == 200
        found = []
        for _ in range(50):
            sock.sendall(
                HEALTH + b"\r\n" + b"PUT /piped/k HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH
                + b"Expect: 100-continue\r\nContent-Length: 3\r\n\r\n"
            )  # fmt: skip
            first, interim = read_answer(file), read_answer(file)
            sock.sendall(b"abc")
            found.append((first, interim, read_answer(file)))
        assert found == [(200, 100, 200)] * 50
