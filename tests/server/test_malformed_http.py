"""Malformed HTTP is refused as soon as it shows, never left to the idle timeout.

Over raw sockets: each request below is sent with the connection left open (no shutdown), so only
a prompt answer ends the read; the server's idle timeout (60 s) is longer than the test's wait (30 s).
The parser itself is also fed bytes directly (``http_parser.Parser``), for the properties.
"""

from __future__ import annotations

import http.client
import json
import xml.etree.ElementTree as ElementTree

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from waitress.adjustments import Adjustments

from sagemaker_plans_local.server.http_parser import MAX_CHUNK_LINE, Parser
from tests.server.test_connections import connect, serving

HEAD = b"PUT /bucket/key HTTP/1.1\r\nHost: 127.0.0.1\r\n"
CHUNKED = HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
#: The start of a TLS 1.2 ClientHello: a handshake record (0x16), version 3.1, then the hello.
CLIENT_HELLO = bytes.fromhex("160301020001000200fc03") + bytes(range(32)) + b"\x00\x02\x13\x01\x01\x00"


def first_answer(data: bytes) -> tuple[int, str, bytes]:
    """(status, Connection header, body) of the server's answer to ``data``, the connection left open."""
    with serving() as server, connect(server) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, (response.getheader("Connection") or "").lower(), response.read()


def s3_code(body: bytes) -> str:
    return ElementTree.fromstring(body).findtext("Code") or ""


@pytest.mark.parametrize(
    "data",
    [
        b"GET / HTTP/1.1\nHost: 127.0.0.1\n\n",  # bare LF line endings throughout
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\nX-A: b\r\n",  # one bare LF, the header not finished
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\rX-A: b\r\n",  # a bare CR
        b"SSH-2.0-OpenSSH_9.6\r\n",  # a complete first line that is no request line
        CLIENT_HELLO,
    ],
    ids=["bare-lf", "one-bare-lf", "bare-cr", "not-a-request-line", "tls-client-hello"],
)
def test_a_malformed_request_start_is_a_prompt_400_and_the_connection_closes(data):
    status, connection, body = first_answer(data)
    assert (status, connection, s3_code(body)) == (400, "close", "BadRequest")


@pytest.mark.parametrize(
    "data",
    [
        b"POST / HTTP/1.1\nHost: 127.0.0.1\nX-Amz-Target: SageMaker.ListTrainingJobs\n",
        b"POST / HTTP/1.1\r\nX-Amz-Target: SageMaker.ListTrainingJobs\nContent-Length: 2\r\n\r\n{}",
    ],
    ids=["head-unended", "head-whole-with-a-body"],
)
def test_a_bare_lf_request_with_a_target_is_answered_in_the_awsjson_shape(data):
    status, _, body = first_answer(data)
    assert (status, json.loads(body)["__type"]) == (400, "BadRequest")


@pytest.mark.parametrize(
    "body",
    [
        b"111111111111111111\r\n",  # 18 hex digits: no client means a chunk that large
        b"111111111111111111",  # the same, its line not ended yet
        b"10000000000000000",  # 17 significant digits: over 64 bits
        b"zz",  # not hex, the line not ended yet
        b"5;" + b"e" * MAX_CHUNK_LINE,  # a size line whose extension never ends
        b"5\r\nhello\r\n0\r\n" + b"X-Trailer: y\r\n" * (256 * 1024 // 14 + 1),  # a trailer that never ends
    ],
    ids=["18-digits", "18-digits-unended", "over-64-bits", "not-hex-unended", "long-line", "long-trailer"],
)
def test_a_bad_chunk_size_line_or_trailer_is_a_prompt_400(body):
    status, connection, answer = first_answer(CHUNKED + body)
    assert (status, connection, s3_code(answer)) == (400, "close", "BadRequest")


def test_a_chunk_larger_than_the_body_limit_is_refused_at_its_size():
    sagemaker = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: SageMaker.ListTrainingJobs\r\n"
    status, _, answer = first_answer(sagemaker + b"Transfer-Encoding: chunked\r\n\r\n2000000\r\n")  # 32 MiB
    assert (status, json.loads(answer)["__type"]) == (413, "RequestEntityTooLargeException")
    status, _, answer = first_answer(CHUNKED + b"200000000\r\n")  # 8 GiB: over S3's 5 GiB
    assert (status, s3_code(answer)) == (400, "EntityTooLarge")


def test_chunked_bodies_within_the_limits_still_arrive_whole():
    with serving() as server, connect(server) as sock:
        sock.sendall(
            b"POST /_sagemaker_plans_local/clock HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'00000000000000000000000a;name=value\r\n{"advance_\r\n'
            b'D\r\nseconds": 60}\r\n0\r\nX-Trailer: fine\r\n\r\n'
        )
        response = http.client.HTTPResponse(sock)
        response.begin()
        assert (response.status, json.loads(response.read())["manual"]) == (200, True)


def parsed(data: bytes) -> Parser:
    """A parser fed ``data`` as the connection gives it (one read, then the rest)."""
    parser = Parser(Adjustments())
    while data and not parser.completed:
        data = data[parser.received(data) :]
    return parser


REQUEST = b"GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: SageMaker.ListTrainingJobs\r\n\r\n"


@settings(max_examples=200, deadline=None)
@given(at=st.integers(0, len(REQUEST) - 5), bare=st.sampled_from([b"\n", b"\r"]), cut=st.integers(1, 200))
def test_a_bare_cr_or_lf_anywhere_in_the_head_is_refused_before_the_head_ends(at, bare, cut):
    data = REQUEST[:at] + bare + REQUEST[at:][:-4]  # the head never ends
    parser = Parser(Adjustments())
    for start in range(0, len(data), cut):  # in pieces of any size
        parser.received(data[start : start + cut])
        if parser.completed:
            break
    assert parser.completed and parser.error is not None and parser.error.code == 400


@settings(max_examples=100, deadline=None)
@given(cut=st.integers(1, len(REQUEST)))
def test_a_well_formed_head_in_pieces_of_any_size_is_accepted(cut):
    parser = Parser(Adjustments())
    for start in range(0, len(REQUEST), cut):
        parser.received(REQUEST[start : start + cut])
    assert parser.completed and parser.error is None and parser.path == "/a"
